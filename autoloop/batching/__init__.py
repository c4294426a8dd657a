"""Batching: a graph computed for many entries at once, as one graph (a transformation over ir/ and ops/).

- `interpreter`: `batch_call` / `batch_graph`, the one interpreter;
- `rules`: how each ordinary op maps over a leading entry axis (the
  ``batch=`` slot of an op's registration, or its family's rule);
- `control_flow`: ``While`` and ``Cond`` with a per-entry condition;
- `vectorized_map`: the front door, TensorFlow's ``vectorized_map``.
"""
