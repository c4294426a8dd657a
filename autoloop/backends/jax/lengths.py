"""How long each list of a graph can get, and how long it surely is: `Lengths`.

A list's length is tracked as ``loop parameter + offset`` (`Length`): in a
loop body a list starts at its length when the iteration starts (the
parameter), and each write, push or append past the end adds to the offset.
Walking the graph in node order, each op's rule (`_LENGTH_RULES`) gives the
*upper* bound and the *exact* length of the list it returns; a branch gives
the larger of its two; a loop (`While`, `Scan`) multiplies one iteration's
growth by its bound (`autoloop.ir.trips`), so nested loops multiply.

The upper bounds give each buffer its capacity (`autoloop.backends.jax.
layouts`); the exact lengths give ``stack(l)`` a static shape. A list that
grows in a loop with no bound is a `BackendError` naming the list, where it
grows and the loop, with the fix (a ``capacity``: a bound that is checked,
never ``maximum_iterations``, which would change what the loop computes).

    >>> lengths = Lengths(layouts, graph)
    >>> lengths.upper[flow]              # Length(base=None, offset=10)
    >>> lengths.concrete(lengths.upper[flow])     # 10
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from autoloop import dtypes
from autoloop.backends.jax.marks import unsupported
from autoloop.ir import control_flow
from autoloop.backends.jax.growth import FIRST_CAPACITY
from autoloop.ir.trips import TripCount, captured_from, known, trip_count
from autoloop.ops.location import format_location


class Length(NamedTuple):
    """A list's length: ``base + offset``, `base` a loop parameter (its value at an iteration's start) or None."""

    base: object
    offset: int
    grows: object = None  # a node that made it grow, for messages

    def plus(self, count: int, node) -> Length:
        return Length(self.base, self.offset + count, node if count > 0 else self.grows)


def _larger(a: Length | None, b: Length | None) -> Length | None:
    """An upper bound on both, or None."""
    if a is None or b is None:
        return None
    grows = a.grows or b.grows
    if a.base is b.base or a.base is None or b.base is None:  # a parameter's length is >= 0
        return Length(a.base if a.base is not None else b.base, max(a.offset, b.offset), grows)
    return None


# Ops whose variant result is a new version of the list (or gradient list) in these inputs.
VERSION_OF = {
    "Identity": (0,), "TensorListWrite": (0,), "TensorListScatter": (0,), "TensorListUnstack": (0,),
    "TensorListSplit": (0,), "StackPush": (0,), "TensorListGradAccumulate": (0,), "TensorListGradScatterAdd": (0,),
    "TensorListGradErase": (0,), "TensorListGradAdd": (0, 1), "CheckDefined": (1,), "CheckAssigned": (1,),
}
_LOOPS = ("While", "Scan")


class Lengths:
    """The upper bound and exact length of every list value of `graph` (None where unknown);
    `layouts` answers which lists grow and the bounds their makers declared."""

    def __init__(self, layouts, graph, capacities=None):
        self.layouts = layouts
        # loop -> provisional capacity (`autoloop.backends.jax.growth`); None: a loop with no bound is an error
        self.capacities = capacities
        self.upper: dict = {}
        self.exact: dict = {}
        self.params: dict = {}  # loop parameter (symbol) -> its Length at an iteration's start
        self._symbols: dict = {}  # a loop condition's parameter -> the body's (one symbol per loop variable)
        self._walk(graph)

    def concrete(self, length: Length) -> int:
        """`length` as a number: its offset plus the lengths its loop parameters start at."""
        total = length.offset
        while length.base is not None:
            length = self.params[length.base]
            total += length.offset
        return max(total, 0)

    def exact_length(self, value):
        """The length of list `value` when the graph fixes it, else None."""
        length = self.exact.get(value)
        if length is None or length.base is not None:
            return None
        return length.offset

    def _walk(self, graph) -> None:
        """Upper bounds and exact lengths of every list value, graph by graph in node order."""
        for node in graph.nodes:
            if node.op == "Placeholder":
                continue
            if node.op in _LOOPS:
                self._loop(node)
            elif node.op == "Cond":
                for key in ("true_graph", "false_graph"):
                    self._walk(node.attrs[key])
                for j, output in enumerate(node.outputs):
                    if output.dtype is dtypes.variant:
                        t, f = node.attrs["true_graph"].outputs[j], node.attrs["false_graph"].outputs[j]
                        self.upper[output] = _larger(self.upper_of(t), self.upper_of(f))
                        same = self.exact_of(t) == self.exact_of(f) and self.exact_of(t) is not None
                        self.exact[output] = self.exact_of(t) if same else None
            elif node.outputs and node.outputs[0].dtype is dtypes.variant:
                rule = _LENGTH_RULES.get(node.op)
                if rule is not None:
                    self.upper[node.outputs[0]], self.exact[node.outputs[0]] = rule(self, node)

    def upper_of(self, value):
        if value not in self.upper:
            self.upper[value] = self._placeholder(value, self.upper_of)
        return self.upper[value]

    def exact_of(self, value):
        if value not in self.exact:
            self.exact[value] = self._placeholder(value, self.exact_of)
        return self.exact[value]

    def _placeholder(self, value, lookup):
        """A placeholder's length: its captured value's, or a loop parameter's own symbol."""
        if value.node.op != "Placeholder":
            return None
        outer = captured_from(value)
        if outer is not None:
            return lookup(outer)
        return Length(self._symbols.get(value, value), 0)

    def _loop(self, node) -> None:
        """A ``While``'s or ``Scan``'s list variables: one iteration's growth times the bound."""
        cond, body = node.attrs["cond"], node.attrs["body"]
        if node.op == "While":
            count, names = node.attrs["num_loop_vars"], node.attrs.get("names") or ()
            pairs = [(node.inputs[j], cond.inputs[j], body.inputs[j], body.outputs[j], node.outputs[j],
                      names[j] if j < len(names) else None) for j in range(count)]
        else:
            groups = control_flow.operands(node)
            num_xs, num_ys = len(groups.xs), node.attrs["num_ys"]
            pairs = [(initial, cond.inputs[num_xs + j], body.inputs[num_xs + j], body.outputs[num_ys + j],
                      node.outputs[num_ys + j], None) for j, initial in enumerate(groups.initial)]
        pairs = [p for p in pairs if p[0].dtype is dtypes.variant]
        for _, in_cond, in_body, _, _, _ in pairs:
            self._symbols[in_cond] = in_body
        self._walk(cond)
        self._walk(body)
        trips = trip_count(node)
        for initial, _, param, result, output, name in pairs:
            start, grown = self.upper_of(initial), self.upper_of(result)
            if start is None or grown is None:
                self.upper[output] = None
                continue
            if grown.base is param:
                growth = grown.offset
                added = 0
                if growth > 0:
                    declared = self.layouts.declared_bound(param)
                    if trips.upper is None and declared is None:
                        if self.capacities is None:
                            raise _unbounded_loop(node, grown.grows, name)
                        trips = TripCount(self.capacities.setdefault(node, FIRST_CAPACITY), None)
                    added = growth * trips.upper if trips.upper is not None else declared
                    added = min(added, declared) if declared is not None else added
                self.upper[output] = start.plus(added, grown.grows)
                self.params[param] = start.plus(max(added - max(growth, 0), 0), grown.grows)
            else:
                self.upper[output] = _larger(start, grown)
                self.params[param] = self.upper[output]
            exact_start, exact_grown = self.exact_of(initial), self.exact_of(result)
            self.exact[output] = None
            if exact_start is not None and exact_grown is not None and exact_grown.base is param:
                if exact_grown.offset == 0:
                    self.exact[output] = exact_start
                elif trips.exact is not None:
                    self.exact[output] = exact_start.plus(exact_grown.offset * trips.exact, None)
        if node.op == "Scan" and node.attrs["return_tensor_arrays"]:
            for output in node.outputs[:node.attrs["num_ys"]]:
                if trips.upper is None:
                    raise _unbounded_loop(node, node)
                self.upper[output] = Length(None, trips.upper)
                self.exact[output] = Length(None, trips.exact) if trips.exact is not None else None


# -- per-op rules: (upper, exact) of the list an op returns ----------------------------------------
def _same(lengths, node, position=0):
    value = node.inputs[position]
    return lengths.upper_of(value), lengths.exact_of(value)


def _known_int(node, value, what):
    found = known(value)
    if found is None:
        raise unsupported(node, f"a list whose {what} is computed from the inputs' values", (
            "XLA preallocates lists. Give a size known while tracing (a Python int or a shape), or run on "
            "backend='numpy'"))
    return int(found)


def _reserve(lengths, node):
    made_by = node.inputs[0].node
    if made_by.op == "TensorListSize":  # as long as another list (forward mode's zero tangent of a list)
        return _same(lengths, made_by)
    size = Length(None, _known_int(node, node.inputs[0], "size"))
    return size, size


def _write(lengths, node, rows=1):
    upper, exact = _same(lengths, node)
    if not lengths.layouts.growable(node.inputs[0]):
        return upper, exact
    index = known(node.inputs[1])
    appends = _appends(node)
    if index is not None and np.ndim(index) == 0:
        end = int(index) + 1
        grown = _larger(upper, Length(None, end, node))
        exact = _larger(exact, Length(None, end)) if exact is not None and exact.base is None else None
        return grown, exact
    return (None if upper is None else upper.plus(rows, node)), (
        exact.plus(1, None) if appends and exact is not None else None)


def _scatter(lengths, node):
    indices = node.inputs[1]
    rows = indices.shape[0] if indices.shape.rank == 1 and indices.shape[0] is not None else None
    known_indices = known(indices)
    upper, exact = _same(lengths, node)
    if not lengths.layouts.growable(node.inputs[0]):
        return upper, exact
    if known_indices is not None and np.size(known_indices):
        end = int(np.max(known_indices)) + 1
        return _larger(upper, Length(None, end, node)), None
    if rows is None:
        raise unsupported(node, "scattering an unknown number of rows into a growing list", (
            "XLA preallocates lists. Give the indices a static length, or run on backend='numpy'"))
    return (None if upper is None else upper.plus(rows, node)), None


def _rows_of(node, value):
    if not value.shape.rank or value.shape[0] is None:
        raise unsupported(node, "a list made from a value whose number of rows is unknown when compiling", (
            "XLA preallocates lists; give the value a static first dimension, or run on backend='numpy'"))
    size = Length(None, value.shape[0])
    return size, size


def _gradient_rows(value):
    """A gradient list made from rows: as many as the value has, or (unknown when tracing) as the
    lists it is the gradient of, by the capacity rule of gradient lists (`Layouts._capacity`)."""
    rows = value.shape[0] if value.shape.rank else None
    return Length(None, rows or 0), None


def _pieces(node, lengths):
    if not lengths.shape.rank or lengths.shape[0] is None:
        raise unsupported(node, "splitting into an unknown number of pieces", (
            "XLA preallocates lists; give the lengths a static length, or run on backend='numpy'"))
    size = Length(None, lengths.shape[0])
    return size, size


def _push(lengths, node):
    upper, exact = _same(lengths, node)
    return (None if upper is None else upper.plus(1, node)), (None if exact is None else exact.plus(1, None))


def _const_length(lengths, node):
    if not hasattr(node.attrs["value"], "__len__"):  # a variable's cell (`autoloop.backends.jax.variables`)
        return None, None
    size = Length(None, len(node.attrs["value"]))
    return size, size


_LENGTH_RULES = {
    "TensorListReserve": _reserve,
    "TensorListWrite": _write,
    "TensorListScatter": _scatter,
    "TensorListUnstack": lambda lengths, node: _rows_of(node, node.inputs[1]),
    "TensorListSplit": lambda lengths, node: _pieces(node, node.inputs[2]),
    "StackNew": lambda lengths, node: (Length(None, 0), Length(None, 0)),
    "StackPush": _push,
    "TensorListGradInit": lambda lengths, node: (Length(None, 0), None),
    "TensorListGradUnstack": lambda lengths, node: _gradient_rows(node.inputs[0]),
    "TensorListGradSplit": lambda lengths, node: _pieces(node, node.inputs[1]),
    "TensorListGradAdd": lambda lengths, node: (_larger(lengths.upper_of(node.inputs[0]),
                                                        lengths.upper_of(node.inputs[1])), None),
    "Const": _const_length,
    "StackGet": lambda lengths, node: (Length(None, 0), None),
}
for _op, _positions in VERSION_OF.items():
    if _op not in _LENGTH_RULES:
        _LENGTH_RULES[_op] = lambda lengths, node, position=_positions[0]: _same(lengths, node, position)


def _unbounded_loop(loop, grows, name=None):
    """The error for a list that grows in `loop`, whose number of iterations has no bound: the list (the
    user's variable `name`), where it grows, the loop, and the fix."""
    unknown = "in a loop whose number of iterations is not known when compiling, so the loop"
    if grows is not None and grows.op == "StackPush":
        what = f"the values this loop saves for its gradient are kept {unknown}"
    elif grows is None or grows is loop or name is None:
        what = f"a list grows {unknown}"
    elif _appends(grows):
        what = f"the list {name}, appended to at {_where(grows)} {unknown}"
    else:
        what = f"the TensorArray {name} (dynamic_size=True), written at {_where(grows)} {unknown}"
    return unsupported(loop, what, (
        "XLA preallocates what a loop appends to or saves, so it needs a bound on the loop's iterations: give "
        "the loop a capacity, capacity=N to while_loop or autoloop.set_loop_options(capacity=N) as the first "
        "statement of its body (more iterations are an error, never a shorter loop; with checkpoint=True the "
        "gradient keeps about sqrt(N) states), bound a counter in its condition (while ... and k < N), "
        "iterate over a tensor or a range of known length, or run on backend='numpy'"))


def _appends(node) -> bool:
    """Whether `node` writes at the end of its list (``l.append(x)``: the index is the list's size)."""
    if node.op != "TensorListWrite":
        return False
    index = node.inputs[1].node
    return index.op == "TensorListSize" and index.inputs[0] is node.inputs[0]


def _where(node) -> str:
    return format_location(node.location)
