"""Why a graph value has the dtype it has: the op that made it, for messages.

A loop variable that enters as int32 and comes back float64 usually met a
``/`` (true division of integers gives float64) or an ``argmax`` (int64
unless asked otherwise). `why_dtype` walks back from the value through the
ops that kept its dtype to the one that changed it, and says what happened
there and, where one exists, the fix that gives the `wanted` dtype:

    >>> why_dtype(i_after_one_iteration, wanted=autoloop.int32)
    'it becomes float64 at model.py:7, where `/` divides int32 values: true division of
     integers gives float64 (as in TensorFlow); use `//` for integer division, or cast ...'
"""

from __future__ import annotations

from autoloop.ops.location import format_location
from autoloop.tensor import Tensor

_MAX_NODES = 64  # how far back to look before giving up


def _true_division(node, dtype, wanted):
    operand = node.inputs[0].dtype
    if not operand.is_integer:
        return None
    text = (f"`/` divides {operand.name} values: true division of integers gives {dtype.name} (as in "
            f"TensorFlow)")
    if wanted is operand:
        text += f"; use `//` for integer division, or cast the result with autoloop.cast(..., autoloop.{wanted.name})"
    return text


def _arg_reduction(name):
    def explain(node, dtype, wanted):
        text = f"{name} returns {dtype.name} (its default output_type)"
        if wanted is not None and wanted.name in ("int32", "int64"):
            text += f"; pass output_type=autoloop.{wanted.name}"
        return text
    return explain


_EXPLAINERS = {  # op -> (node, its dtype, the dtype wanted or None) -> text, or None when it does not apply
    "RealDiv": _true_division,
    "ArgMax": _arg_reduction("argmax"),
    "ArgMin": _arg_reduction("argmin"),
}


def why_dtype(value, wanted=None) -> str | None:
    """``"it becomes <dtype> at FILE:LINE, where ..."`` for a graph tensor, or None when no op in
    its graph explains its dtype (an input, a constant, an op this module has no words for)."""
    graph_value = value._value if isinstance(value, Tensor) else None
    if graph_value is None:
        return None
    dtype = graph_value.dtype
    pending = [graph_value.node]
    seen: set[int] = set()
    while pending and len(seen) < _MAX_NODES:
        node = pending.pop(0)
        if id(node) in seen:
            continue
        seen.add(id(node))
        explain = _EXPLAINERS.get(node.op)
        text = explain(node, dtype, wanted) if explain is not None else None
        if text is not None:
            where = f" at {format_location(node.location)}" if node.location is not None else ""
            return f"it becomes {dtype.name}{where}, where {text}"
        # the dtype came through this op: follow the operands that have it
        pending.extend(operand.node for operand in node.inputs if operand.dtype is dtype)
    return None
