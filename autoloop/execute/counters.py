"""Loop variables that generated code may keep as Python ints: counters and accumulators.

A Python int's comparison and addition cost a fraction of a numpy scalar's
(about 20 against 40–50 ns), a few percent of a scalar loop step. Two kinds
of integer loop variable compute the same as Python ints as they do as numpy
int32 or int64 scalars:

- a **counter**: ``i < bound`` is the whole loop test, the body adds a
  constant step to it, and otherwise it only indexes arrays. It starts from
  its initial value and grows only while it is below the bound, so it never
  exceeds ``bound - 1 + step``, which must fit its dtype (it always does for
  a step of 1) — it never wraps around.
- an **accumulator**: the body adds a constant to it and nothing else reads
  it in the loop (``steps += 1``). It may pass its dtype's range, but only
  its final value is read, and two's complement addition wraps around the
  same way however far it went: the code generator wraps it once when the
  loop ends (``np.uint32(steps & 0xFFFFFFFF).view(np.int32)``).

The code generator converts each back to its numpy type after the loop.

    >>> python_ints(while_node)          # steps = 0; for t in autoloop.range(n): ...; steps += 1
    [PythonInt(position=0, step=<Value Const_3:0 int32()>, bound=<Value ...>),
     PythonInt(position=2, step=<Value Const_5:0 int32()>, bound=None)]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from autoloop.ir.graph import Graph, Value, known_value as constant_of


class PythonInt(NamedTuple):
    """Loop variable `position` of a While grows by constant `step` (a body value). A counter has the
    `bound` it is compared with (a cond value: a constant, or a captured value the cond graph reads
    nowhere else); an accumulator has none."""

    position: int
    step: Value
    bound: Value | None = None


def python_ints(node) -> list[PythonInt]:
    """The loop variables of While `node` that may be Python ints (see the module docstring)."""
    cond, body = node.attrs["cond"], node.attrs["body"]
    count = node.attrs["num_loop_vars"]
    cond_readers, body_readers = _readers(cond), _readers(body)
    counter = _counter(node, cond_readers, body_readers)
    found = [counter] if counter is not None else []
    for position, (in_cond, in_body) in enumerate(zip(cond.inputs[:count], body.inputs[:count])):
        if counter is not None and position == counter.position or not _integer_scalar(in_body):
            continue
        if in_cond in cond_readers or any(value is in_cond for value in cond.outputs):
            continue
        step = _step(body, position, body_readers, as_index=False)
        if step is not None:
            found.append(PythonInt(position, step))
    return found


def _counter(node, cond_readers, body_readers) -> PythonInt | None:
    cond, body = node.attrs["cond"], node.attrs["body"]
    count = node.attrs["num_loop_vars"]
    (test,) = cond.outputs
    less = test.node
    if less.op != "Less" or len(less.inputs) != 2:
        return None
    parameter, bound = less.inputs
    position = next((i for i, value in enumerate(cond.inputs[:count]) if value is parameter), None)
    if position is None or not _integer_scalar(parameter):
        return None
    captured = any(bound is value for value in cond.inputs[count:])
    if cond_readers.get(parameter) != [(less, 0)] or cond_readers.get(bound) != [(less, 1)]:
        return None
    if not captured and constant_of(bound) is None:
        return None
    step = _step(body, position, body_readers, as_index=True)
    if step is None or int(constant_of(step)) < 1:
        return None
    limit = int(np.iinfo(parameter.dtype.as_numpy_dtype).max)
    increment = int(constant_of(step))
    if captured and increment != 1 or not captured and int(constant_of(bound)) - 1 + increment > limit:
        return None  # it could pass the dtype's largest value, where numpy wraps around
    return PythonInt(position, step, bound)


def _step(body: Graph, position: int, readers, as_index: bool) -> Value | None:
    """The constant that loop variable `position` grows by, when the body only adds it (and, with
    `as_index`, indexes arrays with it); else None."""
    parameter, result = body.inputs[position], body.outputs[position]
    add = result.node
    if add.op != "Add" or add.inputs[0] is not parameter or any(value is parameter for value in body.outputs):
        return None
    step = add.inputs[1]
    if constant_of(step) is None or sum(1 for value in body.outputs if value is result) != 1:
        return None
    if readers.get(result) or readers.get(step) != [(add, 1)]:
        return None
    for reader, index in readers.get(parameter, []):
        if not (reader is add or as_index and reader.op == "StridedSlice" and index >= 1):
            return None  # used as a number somewhere: it must stay a numpy scalar
    return step


def _integer_scalar(value: Value) -> bool:
    return value.dtype.name in ("int32", "int64") and value.shape.rank == 0


def _readers(graph: Graph) -> dict[Value, list]:
    """(node, input index) for every read of each value by the graph's live, computed nodes."""
    readers: dict[Value, list] = {}
    for node in graph.live_nodes():
        if node.op == "Const" or node.outputs and all(v.constant is not None for v in node.outputs):
            continue
        for index, value in enumerate(node.inputs):
            readers.setdefault(value, []).append((node, index))
    return readers
