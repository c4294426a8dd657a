"""TF1 functions that build graphs: `placeholder`, `Print`, and TF1's `while_loop`/`cond` conventions.

`while_loop` and `cond` are autoloop's (cond and body called exactly once
while the graph is built), with TF1's return conventions: a loop over a
list of one variable returns the bare value, and a branch returning a list
of one value gives the bare value unless ``strict=True``.
"""

from __future__ import annotations

from autoloop import dtypes, nest
from autoloop.compat.v1.graph import building_graph, v1_graph_of
from autoloop.control_flow import cond as _cond
from autoloop.control_flow import while_loop as _while_loop
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.location import user_location
from autoloop.shapes import TensorShape, as_shape
from autoloop.tensor import Tensor


def placeholder(dtype, shape=None, name=None) -> Tensor:
    """A value given when the graph runs: ``sess.run(..., feed_dict={x: value})``.

    `shape` may be partial (``[None, 3]``) or None (any shape). Running
    something that needs an unfed placeholder is an error naming it.
    """
    graph = building_graph("placeholder()")
    if graph.parent is not None or v1_graph_of(graph) is None:
        raise RuntimeError("placeholder() belongs at the top level of a autoloop.compat.v1 graph, not inside a "
                           "traced function or a while_loop/cond body; pass the value in instead")
    dtype = dtypes.as_dtype(dtype)
    shape = TensorShape(None) if shape is None else as_shape(shape)
    value = graph.add_input(dtype, shape, name=name or "Placeholder")
    value.node.location = user_location()
    return Tensor(value=value)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802 - TF's name
    """`input_`, and when it is computed, `message` and each tensor of `data` written to stderr.

    TF1's ``Print``: it runs only when something needs its result (a Print
    in a loop body runs once per iteration; one nothing reads never runs).
    Tensors print their first `summarize` (default 3) elements:
    ``Print(x, [i, v], "i, v: ")`` writes ``i, v: [3][1 2 3...]``.
    """
    if first_n not in (None, -1):
        raise NotImplementedError("Print(first_n=...) is not supported: it prints each time it runs")
    data = [convert(item) for item in nest.flatten(data)]
    attrs = {"message": "" if message is None else str(message),
             "summarize": 3 if summarize is None else int(summarize)}
    return apply("PrintV1", [convert(input_), *data], attrs, name=name or "Print", fold=False)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """autoloop's `while_loop` with TF1's convention: one loop variable in a list comes back bare.

        >>> while_loop(lambda i: i < 10, lambda i: i + 1, [constant(0)])   # a tensor, not a list
    """
    result = _while_loop.while_loop(cond, body, loop_vars, shape_invariants=shape_invariants,
                                    parallel_iterations=parallel_iterations, back_prop=back_prop,
                                    swap_memory=swap_memory, maximum_iterations=maximum_iterations, name=name)
    if (not return_same_structure and isinstance(result, list | tuple) and not nest.is_namedtuple(result)
            and len(result) == 1):
        return result[0]
    return result


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """autoloop's `cond` with TF1's convention: a branch result that is a list of one comes back bare."""
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    result = _cond.cond(pred, true_fn, false_fn, name=name)
    if not strict and isinstance(result, list | tuple) and not nest.is_namedtuple(result) and len(result) == 1:
        return result[0]
    return result
