"""`GradientTape`: gradients of what ran inside a ``with`` block, eagerly or while tracing.

    x = autoloop.constant(3.0)
    with autoloop.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)          # 6.0

Eagerly the tape records the ops run inside the block that read a watched
tensor (or a tensor such an op produced), loops included
(`autoloop.autodiff.eager_tape`). Inside a traced function the same code
differentiates the graph: the tape remembers which nodes were traced
inside the block, and `gradient` runs `autoloop.gradients` on the paths
through them from the watched tensors. Either way only those ops count:
what ran before the block, or inside ``stop_recording()``, is a constant
to the tape, and so is a tensor that was not watched.

`jacobian` and `batch_jacobian` seed the same backward pass with each
entry of the target in turn, in one loop (`autoloop.autodiff.jacobian`).

A tape gives one `gradient` (or Jacobian) unless it is ``persistent=True``.
``watch_accessed_variables`` is accepted for TensorFlow compatibility
(autoloop has no trainable variables to watch).
"""

from __future__ import annotations

import contextlib

from autoloop import nest
from autoloop.autodiff import eager_tape, paths
from autoloop.autodiff.graph_backprop import graph_gradients, seed_for, value_in
from autoloop.autodiff.jacobian import UnconnectedGradients, unconnected_option
from autoloop.autodiff.jacobian import batch_jacobian as batch_jacobian_rows, jacobian as jacobian_rows
from autoloop.ir import context
from autoloop.ops import recording
from autoloop.ops.creation_ops import zeros_like
from autoloop.ops.dispatch import convert
from autoloop.tensor import Tensor


class GradientTape:
    """Records operations for reverse-mode differentiation; see the module docstring."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._graph = None  # the graph traced inside the block, or None eagerly
        self._tape = eager_tape.Tape()
        self._watched: list = []  # traced: watched graph values
        self._created: set = set()  # traced: ids of the nodes made while recording
        self._open = None  # traced: ids of the nodes that existed when recording (re)started
        self._recording = False
        self._used = False

    # -- recording ------------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("this GradientTape is already recording; a tape is entered once at a time")
        self._graph = context.current_graph()
        self._start()
        return self

    def __exit__(self, *exc_info):
        self._stop()

    def _start(self):
        self._recording = True
        if self._graph is None:
            recording.start(self._tape)
        else:
            self._open = {id(n) for n in self._graph.nodes}

    def _stop(self):
        if not self._recording:
            return
        self._recording = False
        if self._graph is None:
            recording.stop(self._tape)
        else:
            self._created |= {id(n) for n in self._graph.nodes} - self._open
            self._open = None

    @contextlib.contextmanager
    def stop_recording(self):
        """A block whose operations the tape does not record."""
        if not self._recording:
            raise ValueError("stop_recording() needs a tape that is recording (inside its with block)")
        self._stop()
        try:
            yield
        finally:
            self._start()

    def reset(self):
        """Forget everything recorded so far (keep recording if inside the block)."""
        old, self._tape = self._tape, eager_tape.Tape()
        self._watched, self._created, self._used = [], set(), False
        if self._recording and self._graph is None:
            stack = recording.active()
            stack[stack.index(old)] = self._tape
        if self._recording and self._graph is not None:
            self._open = {id(n) for n in self._graph.nodes}

    def watch(self, tensor):
        """Make the tape track `tensor` (or every tensor in a nested structure)."""
        for leaf in nest.flatten(tensor):
            leaf = _as_tensor(leaf)
            if self._graph is None:
                if leaf.is_symbolic:
                    raise ValueError(f"{leaf.name} is a symbolic tensor, but this tape records eagerly")
                self._tape.watch(leaf)
            else:
                value = value_in(context.current_graph() or self._graph, leaf)
                if value is not None:
                    self._watched.append(value)

    def watched_variables(self):
        return ()

    # -- differentiating ----------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        """The gradient of `target` (a tensor or structure: their sum) for each of `sources`.

        Returns the structure of `sources`, each entry a tensor of its
        source's shape, or None when no recorded path connects them
        (``unconnected_gradients=UnconnectedGradients.ZERO`` or ``"zero"``: zeros).
        """
        if self._used and not self.persistent:
            raise RuntimeError("a non-persistent GradientTape computes one set of gradients: call gradient "
                               "once, or create the tape with GradientTape(persistent=True)")
        unconnected = unconnected_option(unconnected_gradients)
        self._used = True
        targets = [_as_tensor(t) for t in nest.flatten(target)]
        flat_sources = [_as_tensor(s) for s in nest.flatten(sources)]
        seeds = nest.flatten(output_gradients) if output_gradients is not None else [None] * len(targets)
        if len(seeds) != len(targets):
            raise ValueError(f"output_gradients has {len(seeds)} entries but target has {len(targets)}")
        with self._differentiating():
            found = self._vjp(targets, flat_sources, context.current_graph())(seeds)
        if unconnected is UnconnectedGradients.ZERO:
            found = [zeros_like(s) if g is None else g for g, s in zip(found, flat_sources)]
        return nest.pack_sequence_as(sources, found)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE, parallel_iterations=None,
                 experimental_use_pfor=True):
        """The Jacobian of `target` (one tensor) for each of `sources`, in the structure of `sources`.

        Entry ``[i..., j...]`` of a source's Jacobian (shape
        ``target.shape + source.shape``) is ``d target[i...] / d source[j...]``;
        None where no recorded path connects them (``unconnected_gradients=
        UnconnectedGradients.ZERO``: zeros). One backward pass per entry of
        the target, run as one loop (`autoloop.autodiff.jacobian`);
        `experimental_use_pfor` is accepted (the loop is the only form).
        As in TensorFlow, eagerly with ``experimental_use_pfor=False`` the
        tape must be persistent.
        """
        unconnected = self._start_jacobian(unconnected_gradients, experimental_use_pfor, "jacobian")
        target = _as_tensor(target)
        flat_sources = [_as_tensor(s) for s in nest.flatten(sources)]
        with self._differentiating():
            vjp = self._vjp([target], flat_sources, context.current_graph())
            found = jacobian_rows(lambda seed: vjp([seed]), target, flat_sources, unconnected, parallel_iterations)
        return nest.pack_sequence_as(sources, found)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per example: ``J[b, i..., j...] = d target[b, i...] / d source[b, j...]``.

        `target` and `source` have the examples on axis 0, and example ``b``
        of the target must depend only on example ``b`` of the source (as
        TensorFlow assumes; other entries are summed in). Shape
        ``target.shape + source.shape[1:]``. Otherwise as `jacobian`.
        """
        unconnected = self._start_jacobian(unconnected_gradients, experimental_use_pfor,
                                          "batch_jacobian")
        target, source = _as_tensor(target), _as_tensor(source)
        with self._differentiating():
            vjp = self._vjp([target], [source], context.current_graph())
            return batch_jacobian_rows(lambda seed: vjp([seed]), target, source, unconnected, parallel_iterations)

    def _start_jacobian(self, unconnected, use_pfor, what):
        """Check the tape may give a Jacobian now; returns the `UnconnectedGradients` option."""
        if self._used and not self.persistent:
            raise RuntimeError(f"a non-persistent GradientTape computes one set of gradients: call {what} "
                               f"once, or create the tape with GradientTape(persistent=True)")
        if not use_pfor and not self.persistent and self._graph is None:
            raise RuntimeError(f"GradientTape.{what} with experimental_use_pfor=False runs eagerly only on a "
                               f"tape created with GradientTape(persistent=True)")
        self._used = True
        return unconnected_option(unconnected)

    @contextlib.contextmanager
    def _differentiating(self):
        """The tape does not record the ops of its own gradients."""
        if self._graph is None:
            with recording.replaced(self._tape, None):
                yield
        else:
            yield

    def _vjp(self, targets, sources, graph):
        """``vjp(seeds)``: the gradients of ``sum(targets[k] * seeds[k])`` for each of `sources`."""
        if self._graph is None:
            return lambda seeds: self._eager_gradient(targets, seeds, sources)
        return lambda seeds: self._traced_gradient(targets, seeds, sources, graph)

    def _eager_gradient(self, targets, seeds, sources):
        for tensor in targets + sources:
            if tensor.is_symbolic:
                raise ValueError(f"{tensor.name} is a symbolic tensor, but this tape recorded eagerly")
        seeds = [seed_for(t, s) for t, s in zip(targets, seeds)]
        watched = [s if self._tape.is_tracked(s) else None for s in sources]
        known = [s for s in watched if s is not None]
        found = dict(zip(map(id, known), eager_tape.backprop(self._tape.entries, targets, seeds, known)))
        return [found.get(id(s)) if w is not None else None for s, w in zip(sources, watched)]

    def _traced_gradient(self, targets, seeds, sources, graph):
        if graph is None or not self._graph.is_ancestor_of(graph):
            raise ValueError("this GradientTape recorded inside a traced function: call gradient there too")
        created = self._created | ({id(n) for n in self._graph.nodes} - self._open if self._recording else set())
        if graph is self._graph:
            accept = lambda node: id(node) in created  # noqa: E731
        else:
            accept = None  # a sub-graph traced inside the block: all of it was recorded
        watched = [value_in(graph, Tensor(value=w)) for w in self._watched]
        # The tape tracks what it watched and what recorded ops computed from that.
        tracked = paths.reachable(graph.nodes, [w for w in watched if w is not None], {}, accept)
        values = [value_in(graph, s) for s in sources]
        wanted = [s if v is not None and v in tracked else None for s, v in zip(sources, values)]
        known = [s for s in wanted if s is not None]
        found = graph_gradients(graph, targets, known, seeds, node_filter=accept) if known else []
        by_id = dict(zip(map(id, known), found))
        return [by_id.get(id(s)) if w is not None else None for s, w in zip(sources, wanted)]


def _as_tensor(value):
    if hasattr(value, "components") and not isinstance(value, Tensor):  # a TensorArray
        return value.components()[0]
    return value if isinstance(value, Tensor) else convert(value)
