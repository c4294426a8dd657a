"""`cond`: one of two branches, chosen by a boolean scalar.

Reference semantics::

    def cond(pred, true_fn, false_fn):
        return true_fn() if pred else false_fn()

Outside a trace the chosen branch runs at once. Inside one, both branches
are traced into sub-graphs of a single ``Cond`` node; they must return the
same nested structure, kinds and dtypes (else TypeError), and where their
shapes differ the result has the most specific shape compatible with both.
"""

from __future__ import annotations

from typing import Any, Callable

from autoloop import dtypes, nest
from autoloop.control_flow.composite import type_key
from autoloop.control_flow.loop_vars import LoopVars
from autoloop.errors import BranchTypeError
from autoloop.ir import context, control_flow
from autoloop.ir.graph import Graph
from autoloop.ops.dispatch import convert, graph_value
from autoloop.ops.location import user_location
from autoloop.tensor import Tensor


def cond(pred: Any, true_fn: Callable[[], Any] | None = None, false_fn: Callable[[], Any] | None = None,
         name: str | None = None) -> Any:
    """`true_fn()` if `pred` else `false_fn()`; see the module docstring.

        >>> cond(constant(True), lambda: constant(1), lambda: constant(2)).numpy()
        np.int32(1)
    """
    return staged_cond(pred, true_fn, false_fn, names=None, name=name)


def staged_cond(pred, true_fn, false_fn, *, names, name=None, described=None):
    """`cond` for converted code: errors name the user's variables `names`; ``described()``, called once
    both branches are traced, says how a backend's messages name the statement, its paths and its
    variables (`autoloop.runtime.statement.Statement.described`), kept as the node's ``described``."""
    if not callable(true_fn):
        raise TypeError(f"true_fn must be callable, got {true_fn!r}")
    if not callable(false_fn):
        raise TypeError(f"false_fn must be callable, got {false_fn!r}")
    pred = convert(pred)
    if pred.dtype is not dtypes.bool_ or pred.shape.rank not in (0, None):
        raise TypeError(f"cond's pred must be a boolean scalar, got a {pred.dtype.name} tensor of shape {pred.shape}")
    graph = context.current_graph()
    if graph is None:
        return true_fn() if bool(pred) else false_fn()
    return _build_graph(graph, pred, true_fn, false_fn, names, name or "cond", described)


def _trace_branch(outer: Graph, fn, label: str, names):
    branch = Graph(label, outer)
    with context.building(branch):
        structure = fn()
        outputs = LoopVars(structure, names, root="output") if _has_leaves(structure) else None
        if outputs is not None:
            branch.outputs = [graph_value(branch, c) for c in outputs.components()]
    return branch, structure, outputs


def _has_leaves(structure) -> bool:
    return any(leaf is not None for leaf in nest.flatten(structure))


def _build_graph(outer: Graph, pred, true_fn, false_fn, names, name, described=None):
    true_graph, true_structure, true_out = _trace_branch(outer, true_fn, f"{name}_true", names)
    false_graph, false_structure, false_out = _trace_branch(outer, false_fn, f"{name}_false", names)
    _check_branches(true_structure, false_structure, true_out, false_out)
    inputs, sizes = control_flow.join("Cond", pred=[graph_value(outer, pred)], true_captures=true_graph.captures,
                                      false_captures=false_graph.captures)
    specs, labels = [], ()
    if true_out is not None:
        for t, f in zip(true_out.components(), false_out.components()):
            specs.append((t.dtype, t.shape.most_specific_compatible_shape(f.shape)))
        labels = tuple(true_out.component_labels())
    attrs = dict(true_graph=true_graph, false_graph=false_graph, names=labels, **sizes)
    if described is not None:
        attrs["described"] = described()
    node = outer.add_node("Cond", inputs, attrs, specs, location=user_location(), name=name)
    if true_out is None:
        return true_structure
    return true_out.pack([Tensor(value=v) for v in node.outputs])


def _check_branches(true_structure, false_structure, true_out, false_out):
    try:
        nest.assert_same_structure(true_structure, false_structure, check_types=False)
    except (ValueError, TypeError):
        returned = nest.describe_structures(true_structure, false_structure)
        raise BranchTypeError(
            f"true_fn and false_fn must return the same nested structure, but true_fn returned "
            f"{returned[0]} and false_fn returned {returned[1]}") from None
    if true_out is None or false_out is None:
        if (true_out is None) != (false_out is None):
            raise BranchTypeError("one branch returned values and the other returned None")
        return
    for label, t, f in zip(true_out.labels, true_out.leaves, false_out.leaves):
        if type_key(t) != type_key(f):
            raise BranchTypeError(
                f"{label} is a {_kind(t)} in the true branch but a {_kind(f)} in the false branch; "
                f"both branches must give it the same type and dtype (use autoloop.cast)")
    for label, t, f in zip(true_out.component_labels(), true_out.components(), false_out.components()):
        if t.dtype is not f.dtype:
            raise BranchTypeError(
                f"{label} is {t.dtype.name} in the true branch but {f.dtype.name} in the false branch; "
                f"both branches must give it the same dtype (use autoloop.cast)")


def _kind(value) -> str:
    dtype = getattr(value, "dtype", None)
    kind = type(value).__name__ if not isinstance(value, Tensor) else "Tensor"
    return f"{kind} of {dtype.name}" if dtype is not None else kind
