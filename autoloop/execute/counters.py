"""Loop counters that generated code may keep as Python ints.

A loop variable that only counts — ``i < bound`` is the whole loop test, the
body adds a constant step to it, and otherwise it only indexes arrays —
takes the same values as a Python int as it does as a numpy int32 or int64
scalar, as long as it cannot overflow. It starts from its initial value and
grows only while it is below the bound, so it never exceeds ``bound - 1 +
step``, which must fit its dtype (it always does for a step of 1). A Python
int's comparison and addition cost a fraction of a numpy scalar's (about
20 against 40–50 ns), a few percent of a scalar loop step; the code
generator converts the counter back to its numpy type when the loop ends.

    >>> python_counter(while_node)          # for t in autoloop.range(n): ...
    Counter(position=0, bound=<Value Const_1:0 int32()>, step=<Value Const_3:0 int32()>)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from autoloop.ir.effects import has_effects
from autoloop.ir.graph import Graph, Value


class Counter(NamedTuple):
    """Loop variable `position` of a While counts by constant `step` (a body value) up to `bound`
    (a cond value: a constant, or a captured value the cond graph reads nowhere else)."""

    position: int
    bound: Value
    step: Value


def python_counter(node) -> Counter | None:
    """The loop variable of While `node` that is a counter (see the module docstring), or None."""
    cond, body = node.attrs["cond"], node.attrs["body"]
    count = node.attrs["num_loop_vars"]
    (test,) = cond.outputs
    less = test.node
    if less.op != "Less" or len(less.inputs) != 2:
        return None
    parameter, bound = less.inputs
    position = next((i for i, value in enumerate(cond.inputs[:count]) if value is parameter), None)
    if position is None or parameter.dtype.name not in ("int32", "int64") or parameter.shape.rank != 0:
        return None
    readers = _readers(cond)
    captured = any(bound is value for value in cond.inputs[count:])
    if readers.get(parameter) != [(less, 0)] or readers.get(bound) != [(less, 1)]:
        return None
    if not captured and constant_of(bound) is None:
        return None
    step = _step(body, position)
    if step is None:
        return None
    limit = int(np.iinfo(parameter.dtype.as_numpy_dtype).max)
    increment = int(constant_of(step))
    if captured and increment != 1 or not captured and int(constant_of(bound)) - 1 + increment > limit:
        return None  # it could overflow where numpy wraps around
    return Counter(position, bound, step)


def _step(body: Graph, position: int) -> Value | None:
    """The constant step of loop variable `position` when the body only adds it and indexes with it."""
    parameter, result = body.inputs[position], body.outputs[position]
    add = result.node
    if add.op != "Add" or add.inputs[0] is not parameter or any(value is parameter for value in body.outputs):
        return None
    step = add.inputs[1]
    value = constant_of(step)
    if value is None or int(value) < 1 or sum(1 for v in body.outputs if v is result) != 1:
        return None
    readers = _readers(body)
    if readers.get(result) or readers.get(step) != [(add, 1)]:
        return None
    for reader, index in readers.get(parameter, []):
        if not (reader is add or reader.op == "StridedSlice" and index >= 1):
            return None  # used as a number somewhere: it must stay a numpy scalar
    return step


def _readers(graph: Graph) -> dict[Value, list]:
    """(node, input index) for every read of each value by the graph's live, computed nodes."""
    readers: dict[Value, list] = {}
    for node in graph.live_nodes():
        if node.op == "Const" or node.outputs and all(v.constant is not None for v in node.outputs):
            continue
        for index, value in enumerate(node.inputs):
            readers.setdefault(value, []).append((node, index))
    return readers


def constant_of(value: Value):
    """The numpy value of `value` when tracing computed it (a constant the generated code binds), else None."""
    if value.node.op == "Const":
        return value.node.attrs["value"]
    if value.constant is not None and not has_effects(value.node):
        return value.constant
    return None
