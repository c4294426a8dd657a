"""How many times a loop may run, as far as the graph says before it runs.

A backend that preallocates what a loop appends to (XLA: a list, the
values a gradient saves) needs an upper bound on the loop's iterations
wherever something grows in it; where the number is exact, a list built in
the loop has a static length (``stack(l)`` has a static shape). Gradients
read it too: a checkpointed loop's segments are bounded by its schedule.

`trip_count(node)` reads, for a ``While``:

- ``maximum_iterations``, when it is a value known while tracing (an
  upper bound), and ``capacity`` (a bound the loop checks as it runs: one
  more iteration is an error, never a shorter loop);
- a counter: a loop variable ``i`` that starts at a known value, steps by a
  known amount each iteration, and that the condition compares with a known
  limit (``i < n``, ``i <= n``, ``n > i``, counting down with ``>``/``>=``).
  Converted ``for x in tensor`` and ``for i in range(...)`` loops are such
  counters; a limit that is an enclosing loop's counter gives a bound
  from that counter's range (``for j in range(i)``), not an exact count; the count is exact when the condition is that comparison alone
  (no ``break`` joined to it) and no smaller ``maximum_iterations`` cuts it;

and for a ``Scan``, the number of frames: exact without a cond when the
lengths are known, else at most ``max_seq_len`` or the length of ``xs``.

`counter_range(param)` is the range a counter takes inside its loop body,
``(lowest, highest)``: an index that is a counter in range needs no run-time
check.

    >>> trip_count(while_node)          # for i in range(10) with a break
    TripCount(upper=10, exact=None)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from autoloop.ir import control_flow
from autoloop.ir.graph import known_value


class TripCount(NamedTuple):
    upper: int | None
    exact: int | None


class Counter(NamedTuple):
    """Loop variable `position` counts from `start` by `step` while its comparison with `limit` holds."""

    position: int
    start: int
    step: int
    lowest: int  # the range inside the body
    highest: int
    trips: int
    exact: bool = True  # False: the limit is another loop's counter, `trips` its most


_COMPARISONS = {  # op: (counter on the left: its relation to the limit, counter on the right)
    "Less": ("<", ">"), "LessEqual": ("<=", ">="), "Greater": (">", "<"), "GreaterEqual": (">=", "<="),
}


def known(value):
    """`value`'s numpy value if tracing knew it, looking through captures into enclosing graphs."""
    while value is not None:
        found = known_value(value)
        if found is not None:
            return found
        value = captured_from(value)
    return None


def captured_from(value):
    """The outer value that the capture placeholder `value` stands for, or None."""
    if value.node.op != "Placeholder":
        return None
    for outer, inner in value.graph.captures.items():
        if inner is value:
            return outer
    return None


def trip_count(node) -> TripCount:
    """The bound on `node`'s iterations (a ``While`` or ``Scan``); see the module docstring."""
    if node.op == "Scan":
        return _scan_trips(node)
    groups = control_flow.operands(node)
    limit = _integer(known(groups.maximum_iterations[0])) if groups.maximum_iterations else None
    counters = loop_counters(node)
    alone = _comparison_alone(node)
    uppers = [c.trips for c in counters] + ([max(limit, 0)] if limit is not None else [])
    if node.attrs.get("capacity") is not None:  # checked as the loop runs: more iterations are an error
        uppers.append(node.attrs["capacity"])
    upper = min(uppers) if uppers else None
    exact = None
    if alone is not None and alone.exact and (limit is None or limit >= alone.trips):
        exact = alone.trips
    return TripCount(upper, exact)


def loop_counters(node) -> list[Counter]:
    """The counters of the ``While`` `node` whose comparisons must all hold for it to go on."""
    cond = node.attrs["cond"]
    (test,) = cond.outputs
    return [c for c in (_counter(node, compare) for compare in _conjuncts(test)) if c is not None]


def counter_range(param):
    """``(lowest, highest)`` of the body parameter `param` if it is a counter of its loop, else None."""
    node = _loop_of(param)
    if node is None or node.op != "While":
        return None
    body = node.attrs["body"]
    position = body.inputs.index(param)
    for counter in loop_counters(node):
        if counter.position == position:
            return counter.lowest, counter.highest
    return None


def _loop_of(param):
    """The ``While`` node whose body has the parameter `param`, found through the enclosing graph."""
    graph = param.graph
    parent = graph.parent
    if parent is None:
        return None
    for node in parent.nodes:
        if node.op == "While" and node.attrs["body"] is graph:
            return node
    return None


def _conjuncts(value):
    """The values that must all hold for `value` to hold (through ``and``, identities, and the ``Cond``
    that a converted ``a and b`` becomes: `b` evaluated only where `a` holds, else false)."""
    node = value.node
    if node.op == "LogicalAnd":
        return _conjuncts(node.inputs[0]) + _conjuncts(node.inputs[1])
    if node.op == "Identity":
        return _conjuncts(node.inputs[0])
    if node.op == "Cond" and _integer_or_bool(known(node.attrs["false_graph"].outputs[value.index])) is False:
        return _conjuncts(node.inputs[0]) + _conjuncts(node.attrs["true_graph"].outputs[value.index])
    return [value]


def _integer_or_bool(value):
    return None if value is None or np.ndim(value) != 0 else bool(value)


def _comparison_alone(node):
    """The counter when the condition is nothing but its comparison, else None."""
    (test,) = node.attrs["cond"].outputs
    while test.node.op == "Identity":
        test = test.node.inputs[0]
    return _counter(node, test)


def _counter(node, compare):
    """The `Counter` that the comparison `compare` (a value of the cond graph) tests, or None."""
    relations = _COMPARISONS.get(compare.node.op)
    if relations is None:
        return None
    cond, body = node.attrs["cond"], node.attrs["body"]
    count = node.attrs["num_loop_vars"]
    left, right = compare.node.inputs
    for side, other, relation in ((left, right, relations[0]), (right, left, relations[1])):
        while side not in cond.inputs and captured_from(side) is not None:  # read in a branch of `and`
            side = captured_from(side)
        if side in cond.inputs[:count]:
            position = cond.inputs.index(side)
            limit, exact = _limit(other, relation)
            start = _integer(known(control_flow.operands(node).loop_vars[position]))
            step = _step(body, position)
            if None not in (limit, start, step):
                found = _count(position, start, step, limit, relation)
                return found if found is None or exact else found._replace(exact=False)
    return None


def _limit(value, relation):
    """``(limit, exact)``: the known value of a counter's limit, or for a limit that is an enclosing loop's
    counter (``for j in range(i)`` inside ``for i in range(n)``), the bound its range gives, inexact."""
    found = _integer(known(value))
    if found is not None:
        return found, True
    while value.node.op == "Placeholder" and captured_from(value) is not None:
        value = captured_from(value)
    bounds = counter_range(value) if value.node.op == "Placeholder" else None
    if bounds is None:
        return None, False
    return (bounds[1] if relation in ("<", "<=") else bounds[0]), False


def _step(body, position: int):
    """The known amount the body adds to loop variable `position` each iteration, or None."""
    param, result = body.inputs[position], body.outputs[position]
    node = result.node
    if node.op == "Add":
        a, b = node.inputs
        if a is param:
            return _integer(known(b))
        if b is param:
            return _integer(known(a))
    if node.op == "Sub" and node.inputs[0] is param:
        step = _integer(known(node.inputs[1]))
        return None if step is None else -step
    return None


def _count(position, start, step, limit, relation):
    if relation in ("<", "<=") and step > 0:
        end = limit if relation == "<" else limit + 1  # the first value that fails
        trips = max(0, math.ceil((end - start) / step))
        return Counter(position, start, step, start, start + (trips - 1) * step, trips)
    if relation in (">", ">=") and step < 0:
        end = limit if relation == ">" else limit - 1
        trips = max(0, math.ceil((start - end) / -step))
        return Counter(position, start, step, start + (trips - 1) * step, start, trips)
    return None


def _scan_trips(node) -> TripCount:
    groups = control_flow.operands(node)
    counts = [x.shape[0] for x in groups.xs if x.shape.rank]
    counts += [_integer(known(v)) for v in groups.spatial_dim + groups.max_seq_len]
    counts = [c for c in counts if c is not None]
    upper = max(0, min(counts)) if counts else None
    exact = upper if not node.attrs["has_cond"] and not node.attrs["cond_dims"].rank else None
    return TripCount(upper, exact)


def _integer(value):
    if value is None:
        return None
    array = np.asarray(value)
    if array.ndim != 0 or array.dtype.kind not in "iu":
        return None
    return int(array)
