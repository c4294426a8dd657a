"""The buffer every list of a graph gets on XLA, found before lowering.

A TensorArray's flow, a stack of values a gradient saves, and a gradient
list are ``variant`` values: on numpy, Python lists that grow. XLA has no
growing values, so each becomes a preallocated buffer (`BufferLayout`: an
element dtype and shape, and a capacity) written in place with dynamic
updates (`autoloop.backends.jax.buffers`). Which capacity and element
shape? That is read off the graph:

- *families*: the values that are versions of one list (a write's result
  and the list it wrote, a loop variable before, inside and after its
  loop, a branch's outputs, a captured value and its placeholder) share one
  buffer, so one layout (a union-find over the variant values);
- the element shape is what the family's writes, pushes and reads say,
  merged; it must be static;
- the capacity is the largest length any version can reach: a list of
  fixed size keeps its size; one that grows (``dynamic_size``, a stack, a
  converted list's appends) grows by its writes, and a loop multiplies the
  growth of one iteration by its bound (`autoloop.ir.trips`).
  Lengths are tracked as ``loop parameter + offset`` (`Length`) through
  loop bodies, so nested loops multiply;
- a gradient list (the gradient of a TensorArray) gets at least the
  capacity of the lists whose elements it has the shape of.

A list that grows in a loop with no bound is a `BackendError` naming the
write and the loop, with the fix (``maximum_iterations``).

The same walk finds each list's *exact* length where the graph fixes it
(a fixed size; appends in a loop whose count is exact), which gives
``stack(l)`` a static shape.

    >>> layouts = Layouts(graph)
    >>> layouts.of(flow)              # BufferLayout(element=ElementSpec(float32, (3,)), capacity=10)
    >>> layouts.exact_length(flow)    # 10, or None
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from autoloop import dtypes
from autoloop.ir.trips import captured_from, known, trip_count
from autoloop.backends.jax.lowering import unsupported
from autoloop.control_flow.array_elements import ArrayElements
from autoloop.ir import control_flow
from autoloop.shapes import TensorShape


@dataclass(frozen=True)
class ElementSpec:
    dtype: np.dtype
    shape: tuple


@dataclass(frozen=True)
class BufferLayout:
    """`capacity` elements of `element` (an `ElementSpec`, or a `BufferLayout` for a stack of lists);
    `host` keeps the buffer in host memory (``swap_memory``) where the platform has it."""

    element: object
    capacity: int
    host: bool = False


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
_VERSION_OF = {
    "Identity": (0,), "TensorListWrite": (0,), "TensorListScatter": (0,), "TensorListUnstack": (0,),
    "TensorListSplit": (0,), "StackPush": (0,), "TensorListGradAccumulate": (0,), "TensorListGradScatterAdd": (0,),
    "TensorListGradErase": (0,), "TensorListGradAdd": (0, 1), "CheckDefined": (1,), "CheckAssigned": (1,),
}
_GROWABLE_ALLOCATIONS = ("StackNew",)
_GRADIENT_ALLOCATIONS = ("TensorListGradInit", "TensorListGradUnstack", "TensorListGradSplit")


class Layouts:
    """Buffer layouts and exact lengths of the lists of `graph`; see the module docstring."""

    def __init__(self, graph):
        self._parent: dict = {}
        self._facts: dict = {}  # family root -> [(node, dtype, TensorShape) or (node, "list", value)]
        self._allocations: dict = {}  # family root -> [nodes]
        self._upper: dict = {}
        self._exact: dict = {}
        self._params: dict = {}  # loop parameter (symbol) -> its Length at an iteration's start
        self._symbols: dict = {}  # a loop condition's parameter -> the body's (one symbol per loop variable)
        self._layouts: dict = {}
        self._host: set = set()
        variants = [v for node in graph.walk() for v in node.outputs if v.dtype is dtypes.variant]
        self.empty = not variants
        if self.empty:
            return
        for value in variants:
            self._parent[value] = value
        for node in graph.walk():
            self._join(node)
            for sub in node.subgraphs():
                for outer, inner in sub.captures.items():
                    if inner.dtype is dtypes.variant:
                        self._union(outer, inner)
        for node in graph.walk():
            self._record(node)
        self._lengths(graph)

    # -- families ------------------------------------------------------------------------
    def _find(self, value):
        root = value
        while self._parent[root] is not root:
            root = self._parent[root]
        while self._parent[value] is not root:  # path compression
            self._parent[value], value = root, self._parent[value]
        return root

    def _union(self, a, b) -> None:
        a, b = self._find(a), self._find(b)
        if a is not b:
            self._parent[b] = a

    def family(self, value):
        return self._find(value)

    def _join(self, node) -> None:
        variant_outputs = [v for v in node.outputs if v.dtype is dtypes.variant]
        if not variant_outputs:
            return
        if node.op in _VERSION_OF:
            for position in _VERSION_OF[node.op]:
                self._union(node.outputs[0], node.inputs[position])
        elif node.op == "While":
            count = node.attrs["num_loop_vars"]
            cond, body = node.attrs["cond"], node.attrs["body"]
            for j in range(count):
                if node.outputs[j].dtype is dtypes.variant:
                    for value in (node.inputs[j], cond.inputs[j], body.inputs[j], body.outputs[j]):
                        self._union(node.outputs[j], value)
        elif node.op == "Cond":
            for j, output in enumerate(node.outputs):
                if output.dtype is dtypes.variant:
                    self._union(output, node.attrs["true_graph"].outputs[j])
                    self._union(output, node.attrs["false_graph"].outputs[j])
        elif node.op == "Scan":
            groups = control_flow.operands(node)
            num_xs, num_ys = len(groups.xs), node.attrs["num_ys"]
            cond, body = node.attrs["cond"], node.attrs["body"]
            for j, initial in enumerate(groups.initial):
                if initial.dtype is dtypes.variant:
                    for value in (cond.inputs[num_xs + j], body.inputs[num_xs + j], body.outputs[num_ys + j],
                                  node.outputs[num_ys + j]):
                        self._union(initial, value)

    def _record(self, node) -> None:
        """The element facts and allocations `node` adds to its lists' families."""
        rule = _ELEMENT_RULES.get(node.op)
        if rule is not None:
            for value, fact in rule(node):
                self._facts.setdefault(self._find(value), []).append((node, fact))
        if node.op in _ALLOCATION_OPS or (node.op == "Const" and node.outputs[0].dtype is dtypes.variant):
            self._allocations.setdefault(self._find(node.outputs[0]), []).append(node)
        if node.op == "Scan" and node.attrs["return_tensor_arrays"]:
            for output in node.outputs[:node.attrs["num_ys"]]:
                self._allocations.setdefault(self._find(output), []).append(node)
        if node.op == "StackPush" and _swaps(node.graph):
            self._host.add(self._find(node.outputs[0]))

    # -- layouts -----------------------------------------------------------------------------
    def of(self, value) -> BufferLayout:
        """The layout of the buffer holding the list `value`."""
        root = self._find(value)
        layout = self._layouts.get(root)
        if layout is None:
            layout = self._layouts[root] = BufferLayout(self._element(root), self._capacity(root),
                                                        host=root in self._host)
        return layout

    def _element(self, root):
        dtype, shape, nested, first = None, TensorShape(None), None, None
        for node, fact in self._facts.get(root, ()):
            first = first or node
            if fact[0] == "list":
                nested = fact[1]
                continue
            fact_dtype, fact_shape = fact
            if dtype is not None and fact_dtype is not dtype:
                raise unsupported(node, f"a list holding {dtype.name} elements gets a {fact_dtype.name} one, so it",
                                  "a list holds one dtype; cast the value")
            dtype = fact_dtype
            if not shape.is_compatible_with(fact_shape):
                raise unsupported(node, f"a list whose elements have shape {shape} gets one of shape {fact_shape}, "
                                        f"so it", "XLA keeps a list's elements in one buffer of one element shape. "
                                                  "Pad the elements to one shape, or run on backend='numpy'")
            shape = shape.merge_with(fact_shape)
        if nested is not None:
            return self.of(nested)
        if dtype is None:  # never written nor read: any element will do
            return ElementSpec(np.dtype(np.float32), ())
        if not shape.is_fully_defined():
            raise unsupported(first, f"the elements of this list have the shape {shape}, not fully known when "
                                     f"compiling, so the list",
                              "XLA keeps a list in a buffer of static shape. Give the TensorArray an "
                              "element_shape, or write values of static shape")
        return ElementSpec(np.dtype(dtype.as_numpy_dtype), tuple(shape.as_list()))

    def _capacity(self, root) -> int:
        capacity = 0
        for value, length in self._upper.items():
            if self._find(value) is root:
                if length is None:
                    raise _unbounded(value)
                capacity = max(capacity, self._concrete(length))
        allocations = self._allocations.get(root, ())
        if _is_gradient(allocations):
            element = self._element(root)
            capacity = max([capacity] + [self.of(other).capacity for other in self._allocations
                                         if other is not root and not _is_gradient(self._allocations[other])
                                         and self._element(other) == element])
        return capacity

    def _concrete(self, length: Length) -> int:
        total = length.offset
        while length.base is not None:
            length = self._params[length.base]
            total += length.offset
        return max(total, 0)

    def _declared_bound(self, value):
        """The ``bound`` a stack's maker declared (the most values it will hold), or None."""
        bounds = [node.attrs["bound"] for node in self._allocations.get(self._find(value), ())
                  if node.op == "StackNew" and node.attrs.get("bound") is not None]
        return min(bounds) if bounds else None

    def exact_length(self, value):
        """The length of list `value` when the graph fixes it, else None."""
        length = self._exact.get(value)
        if length is None or length.base is not None:
            return None
        return length.offset

    def growable(self, value) -> bool:
        """Whether writes past the end grow the list `value` (else they are errors, as on numpy)."""
        return _growable(self._allocations.get(self._find(value), ()))

    # -- lengths -------------------------------------------------------------------------------
    def _lengths(self, graph) -> None:
        """Upper bounds and exact lengths of every list value, graph by graph in node order."""
        for node in graph.nodes:
            if node.op == "Placeholder":
                continue
            if node.op in _LOOPS:
                self._loop(node)
            elif node.op == "Cond":
                for key in ("true_graph", "false_graph"):
                    self._lengths(node.attrs[key])
                for j, output in enumerate(node.outputs):
                    if output.dtype is dtypes.variant:
                        t, f = node.attrs["true_graph"].outputs[j], node.attrs["false_graph"].outputs[j]
                        self._upper[output] = _larger(self._upper_of(t), self._upper_of(f))
                        same = self._exact_of(t) == self._exact_of(f) and self._exact_of(t) is not None
                        self._exact[output] = self._exact_of(t) if same else None
            elif node.outputs and node.outputs[0].dtype is dtypes.variant:
                rule = _LENGTH_RULES.get(node.op)
                if rule is not None:
                    self._upper[node.outputs[0]], self._exact[node.outputs[0]] = rule(self, node)

    def _upper_of(self, value):
        if value not in self._upper:
            self._upper[value] = self._placeholder(value, self._upper_of)
        return self._upper[value]

    def _exact_of(self, value):
        if value not in self._exact:
            self._exact[value] = self._placeholder(value, self._exact_of)
        return self._exact[value]

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
            count = node.attrs["num_loop_vars"]
            pairs = [(node.inputs[j], cond.inputs[j], body.inputs[j], body.outputs[j], node.outputs[j])
                     for j in range(count)]
        else:
            groups = control_flow.operands(node)
            num_xs, num_ys = len(groups.xs), node.attrs["num_ys"]
            pairs = [(initial, cond.inputs[num_xs + j], body.inputs[num_xs + j], body.outputs[num_ys + j],
                      node.outputs[num_ys + j]) for j, initial in enumerate(groups.initial)]
        pairs = [p for p in pairs if p[0].dtype is dtypes.variant]
        for _, in_cond, in_body, _, _ in pairs:
            self._symbols[in_cond] = in_body
        self._lengths(cond)
        self._lengths(body)
        trips = trip_count(node)
        for initial, _, param, result, output in pairs:
            start, grown = self._upper_of(initial), self._upper_of(result)
            if start is None or grown is None:
                self._upper[output] = None
                continue
            if grown.base is param:
                growth = grown.offset
                added = 0
                if growth > 0:
                    declared = self._declared_bound(param)
                    if trips.upper is None and declared is None:
                        raise _unbounded_loop(node, grown.grows)
                    added = growth * trips.upper if trips.upper is not None else declared
                    added = min(added, declared) if declared is not None else added
                self._upper[output] = start.plus(added, grown.grows)
                self._params[param] = start.plus(max(added - max(growth, 0), 0), grown.grows)
            else:
                self._upper[output] = _larger(start, grown)
                self._params[param] = self._upper[output]
            exact_start, exact_grown = self._exact_of(initial), self._exact_of(result)
            self._exact[output] = None
            if exact_start is not None and exact_grown is not None and exact_grown.base is param:
                if exact_grown.offset == 0:
                    self._exact[output] = exact_start
                elif trips.exact is not None:
                    self._exact[output] = exact_start.plus(exact_grown.offset * trips.exact, None)
        if node.op == "Scan" and node.attrs["return_tensor_arrays"]:
            for output in node.outputs[:node.attrs["num_ys"]]:
                if trips.upper is None:
                    raise _unbounded_loop(node, node)
                self._upper[output] = Length(None, trips.upper)
                self._exact[output] = Length(None, trips.exact) if trips.exact is not None else None


# -- per-op rules -------------------------------------------------------------------------------
def _spec(value):
    return value.dtype, value.shape


def _rows(value):
    return value.dtype, value.shape[1:] if value.shape.rank else TensorShape(None)


def _attr_element(node):
    return node.attrs["element_dtype"], node.attrs.get("element_shape", TensorShape(None))


def _known_shape(value):
    dims = known(value)
    if dims is None:
        return TensorShape(None)
    return TensorShape([int(d) for d in np.ravel(dims)])


def _split_element(node, value, lengths):
    counts = known(lengths)
    if counts is None or len(set(int(c) for c in np.ravel(counts))) > 1:
        raise unsupported(node, "splitting into pieces of different (or unknown) lengths", (
            "XLA keeps a list's elements in one buffer of one shape. Split into equal pieces (a reshape), or "
            "run on backend='numpy'"))
    piece = int(np.ravel(counts)[0]) if np.size(counts) else 0
    return value.dtype, TensorShape([piece]).concatenate(value.shape[1:] if value.shape.rank else TensorShape(None))


def _push_element(node):
    value = node.inputs[2]
    return [(node.inputs[0], ("list", value) if value.dtype is dtypes.variant else _spec(value))]


def _get_element(node):
    output = node.outputs[0]
    return [(node.inputs[0], ("list", output) if output.dtype is dtypes.variant else _attr_element(node))]


def _const_element(node):
    elements = node.attrs["value"]
    items = [item for item in elements.to_list() if item is not None] if isinstance(elements, ArrayElements) else []
    if not items:
        return []
    item = np.asarray(items[0])
    return [(node.outputs[0], (dtypes.as_dtype(item.dtype), TensorShape(item.shape)))]


_ELEMENT_RULES = {
    "TensorListWrite": lambda n: [(n.inputs[0], _spec(n.inputs[2]))],
    "TensorListScatter": lambda n: [(n.inputs[0], _rows(n.inputs[2]))],
    "TensorListUnstack": lambda n: [(n.inputs[0], _rows(n.inputs[1]))],
    "TensorListSplit": lambda n: [(n.inputs[0], _split_element(n, n.inputs[1], n.inputs[2]))],
    "TensorListRead": lambda n: [(n.inputs[0], _attr_element(n))],
    "TensorListStack": lambda n: [(n.inputs[0], _attr_element(n))],
    "TensorListGather": lambda n: [(n.inputs[0], _attr_element(n))],
    "StackPush": _push_element,
    "StackGet": _get_element,
    "TensorListGradRead": lambda n: [(n.inputs[0], (n.attrs["element_dtype"], _known_shape(n.inputs[2])))],
    "TensorListGradAccumulate": lambda n: [(n.inputs[0], _spec(n.inputs[2]))],
    "TensorListGradScatterAdd": lambda n: [(n.inputs[0], _rows(n.inputs[2]))],
    "TensorListGradGather": lambda n: [(n.inputs[0], (n.attrs["element_dtype"], _known_shape(n.inputs[2])))],
    "TensorListGradStack": lambda n: [(n.inputs[0], (n.attrs["element_dtype"], _known_shape(n.inputs[2])))],
    "TensorListGradUnstack": lambda n: [(n.outputs[0], _rows(n.inputs[0]))],
    "TensorListGradSplit": lambda n: [(n.outputs[0], _split_element(n, n.inputs[0], n.inputs[1]))],
    "Const": _const_element,
    "Scan": lambda n: [(y, (frame.dtype, shape)) for y, frame, shape in
                       zip(n.outputs, n.attrs["body"].outputs, n.attrs["ys_frames"])]
    if n.attrs["return_tensor_arrays"] else [],
}
_ALLOCATION_OPS = ("TensorListReserve", "StackNew") + _GRADIENT_ALLOCATIONS
_LOOPS = ("While", "Scan")


def _growable(allocations) -> bool:
    for node in allocations:
        if node.op in _GROWABLE_ALLOCATIONS or node.op == "Scan":
            return True
        if node.op == "TensorListReserve" and node.attrs["dynamic_size"]:
            return True
        if node.op == "Const" and getattr(node.attrs["value"], "dynamic_size", False):
            return True
    return False


def _is_gradient(allocations) -> bool:
    return any(node.op in _GRADIENT_ALLOCATIONS for node in allocations)


def _swaps(graph) -> bool:
    """Whether `graph` is the body of a ``While`` built with ``swap_memory=True``."""
    parent = graph.parent
    if parent is None:
        return False
    return any(node.op == "While" and node.attrs["body"] is graph and node.attrs.get("swap_memory")
               for node in parent.nodes)


def _same(layouts, node, position=0):
    value = node.inputs[position]
    return layouts._upper_of(value), layouts._exact_of(value)


def _known_int(node, value, what):
    found = known(value)
    if found is None:
        raise unsupported(node, f"a list whose {what} is computed from the inputs' values", (
            "XLA preallocates lists. Give a size known while tracing (a Python int or a shape), or run on "
            "backend='numpy'"))
    return int(found)


def _reserve(layouts, node):
    size = Length(None, _known_int(node, node.inputs[0], "size"))
    return size, size


def _write(layouts, node, rows=1):
    upper, exact = _same(layouts, node)
    if not layouts.growable(node.inputs[0]):
        return upper, exact
    index = known(node.inputs[1])
    appends = node.inputs[1].node.op == "TensorListSize" and node.inputs[1].node.inputs[0] is node.inputs[0]
    if index is not None and np.ndim(index) == 0:
        end = int(index) + 1
        grown = _larger(upper, Length(None, end, node))
        exact = _larger(exact, Length(None, end)) if exact is not None and exact.base is None else None
        return grown, exact
    return (None if upper is None else upper.plus(rows, node)), (
        exact.plus(1, None) if appends and exact is not None else None)


def _scatter(layouts, node):
    indices = node.inputs[1]
    rows = indices.shape[0] if indices.shape.rank == 1 and indices.shape[0] is not None else None
    known_indices = known(indices)
    upper, exact = _same(layouts, node)
    if not layouts.growable(node.inputs[0]):
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


def _push(layouts, node):
    upper, exact = _same(layouts, node)
    return (None if upper is None else upper.plus(1, node)), (None if exact is None else exact.plus(1, None))


def _const_length(layouts, node):
    size = Length(None, len(node.attrs["value"]))
    return size, size


_LENGTH_RULES = {
    "TensorListReserve": _reserve,
    "TensorListWrite": _write,
    "TensorListScatter": _scatter,
    "TensorListUnstack": lambda layouts, node: _rows_of(node, node.inputs[1]),
    "TensorListSplit": lambda layouts, node: _pieces(node, node.inputs[2]),
    "StackNew": lambda layouts, node: (Length(None, 0), Length(None, 0)),
    "StackPush": _push,
    "TensorListGradInit": lambda layouts, node: (Length(None, 0), None),
    "TensorListGradUnstack": lambda layouts, node: _gradient_rows(node.inputs[0]),
    "TensorListGradSplit": lambda layouts, node: _pieces(node, node.inputs[1]),
    "TensorListGradAdd": lambda layouts, node: (_larger(layouts._upper_of(node.inputs[0]),
                                                        layouts._upper_of(node.inputs[1])), None),
    "Const": _const_length,
    "StackGet": lambda layouts, node: (Length(None, 0), None),
}
for _op, _positions in _VERSION_OF.items():
    if _op not in _LENGTH_RULES:
        _LENGTH_RULES[_op] = lambda layouts, node, position=_positions[0]: _same(layouts, node, position)


def _unbounded(value):
    return unsupported(value.node, "a list that grows by an amount not known when compiling", (
        "XLA preallocates lists. Bound the loops that append to it (maximum_iterations), or run on "
        "backend='numpy'"))


def _unbounded_loop(node, grows):
    what = "appends to a list" if grows is not None and grows.op != "StackPush" else \
        "saves values for a gradient"
    where = f" (at {_where(grows)})" if grows is not None and grows is not node else ""
    return unsupported(node, f"a loop that {what}{where} and whose number of iterations is not known when "
                             f"compiling", (
        "XLA preallocates what a loop appends to, so it needs a bound: pass maximum_iterations=N to "
        "while_loop (or set_loop_options(maximum_iterations=N) in the loop body; with checkpoint=True the "
        "gradient keeps about sqrt(N) states), iterate over a tensor or a range of known length, or run on "
        "backend='numpy'"))


def _where(node) -> str:
    from autoloop.ops.location import format_location
    return format_location(node.location)
