"""`vectorized_map`: `fn` traced once on one element, then run once on the whole batch.

Reference semantics: ``vectorized_map(fn, elems)`` equals
``map_fn(fn, elems)`` (``stack([fn(elems[i]) for i in range(n)])``),
result for result. How it gets there:

1. `fn` (converted like an ``@function``'s body, so its Python ``while``
   and ``if`` on tensors become graph control flow) is traced once, on
   placeholders shaped like one element, into a sub-graph;
2. the batching interpreter (`autoloop.batching.interpreter`) runs that
   sub-graph over every element at once: ops batched on a new axis 0, and a
   ``while``/``if`` whose condition differs per element running each
   element's own trip count and branch (`autoloop.batching.control_flow`),
   finished elements compacted where the body provably treats them
   independently.

Tensors `fn` reads from around it (closures) are shared by every element.
An op with no batching rule runs once per element
(``fallback_to_while_loop=True``; with a warning naming it when `warn`) or
raises a ValueError naming it.
Eagerly, the same happens in a traced function that runs at once; while a
`GradientTape` records, eagerly, it calls `fn` on each element and stacks
the results (so the tape sees every op, on tensors `fn` closes over too).

    >>> def halve_until_small(x):
    ...     while x > 1.0:
    ...         x = x / 2.0
    ...     return x
    >>> vectorized_map(halve_until_small, constant([0.5, 3.0, 40.0])).numpy()
    array([0.5 , 0.75, 0.625], dtype=float32)
"""

from __future__ import annotations

from typing import Any, Callable

from autoloop import nest
from autoloop.batching.entries import Batching
from autoloop.batching.interpreter import batch_call
from autoloop.control_flow.functional import converted
from autoloop.ir import context
from autoloop.ops import recording
from autoloop.ir.graph import Graph
from autoloop.ops.dispatch import convert, graph_value
from autoloop.tensor import Tensor


def vectorized_map(fn: Callable[[Any], Any], elems: Any, fallback_to_while_loop: bool = True, warn: bool = True) -> Any:
    """``map_fn(fn, elems)``'s result, computed by running `fn` once over the batch; see the module docstring.

    `elems` is a tensor or a nest of tensors of one length on axis 0; `fn`
    takes one element in that structure and returns a nest of tensors.
    """
    from autoloop.control_flow.functional import check_fn, elements
    check_fn(fn, "vectorized_map")
    leaves, count = elements(elems, "vectorized_map")
    if context.current_graph() is None:
        if recording.anywhere() and recording.active() and count:
            # A GradientTape records: it must see every op, closures included, as scan does (the same results).
            from autoloop.ops.api import stack
            results = [fn(nest.pack_sequence_as(elems, [leaf[index] for leaf in leaves])) for index in range(count)]
            return nest.map_structure(lambda *entries: stack(entries), *results)
        from autoloop.traced_function import function
        return function(lambda *args: _batched(fn, elems, list(args), count, fallback_to_while_loop, warn),
                        autograph=False)(*leaves)
    return _batched(fn, elems, leaves, count, fallback_to_while_loop, warn)


def _batched(fn, elems, leaves, count, fallback: bool, warn: bool):
    one, result = trace_element(lambda *params: converted(fn)(nest.pack_sequence_as(elems, list(params))), leaves)
    outputs = run_batched(one, leaves, Batching(count, fallback=fallback, warn=warn))
    return nest.pack_sequence_as(result, outputs)


def trace_element(fn, leaves, name: str = "vectorized_map_fn"):
    """`fn` traced once on one element of each of `leaves` (axis 0 dropped), in a graph inside the current
    one: ``(graph, result)``, `result` being what `fn` returned (a nest of Tensors of that graph)."""
    one = Graph(name, context.current_graph())
    with context.building(one):
        params = [Tensor(value=one.add_input(leaf.dtype, leaf.shape[1:], name="element")) for leaf in leaves]
        result = fn(*params)
        one.outputs = [graph_value(one, convert(leaf)) for leaf in nest.flatten(result)]
    return one, result


def run_batched(one, leaves, batching: Batching) -> list:
    """The outputs of `one` (from `trace_element`) for every entry of `leaves`, each batched; its captured
    values are shared by every entry."""
    captured = [Tensor(value=value) for value in one.captures]
    flags = [True] * len(leaves) + [False] * len(captured)
    outputs, batched = batch_call(one, list(leaves) + captured, flags, batching)
    return [t if flag else batching.broadcast(t) for t, flag in zip(outputs, batched)]
