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
  growth of one iteration by its bound (`autoloop.backends.jax.lengths`);
- a gradient list (the gradient of a TensorArray) gets at least the
  capacity of the lists whose elements it has the shape of.

A list that grows in a loop with no bound is a `BackendError` naming the
list, the write and the loop, with the fix (a ``capacity``).

The same walk finds each list's *exact* length where the graph fixes it
(a fixed size; appends in a loop whose count is exact), which gives
``stack(l)`` a static shape.

    >>> layouts = Layouts(graph)
    >>> layouts.of(flow)              # BufferLayout(element=ElementSpec(float32, (3,)), capacity=10)
    >>> layouts.exact_length(flow)    # 10, or None
"""

from __future__ import annotations

from typing import NamedTuple
import numpy as np

from autoloop import dtypes
from autoloop.ir.trips import known
from autoloop.backends.jax.lengths import VERSION_OF, Lengths
from autoloop.backends.jax.marks import unsupported
from autoloop.control_flow.array_elements import ArrayElements
from autoloop.ir import control_flow
from autoloop.shapes import TensorShape


# NamedTuples, not dataclasses: defining a dataclass costs 0.5 ms, on the first call of every process.
class ElementSpec(NamedTuple):
    """The dtype and shape of one element of a list."""

    dtype: np.dtype
    shape: tuple


class BufferLayout(NamedTuple):
    """`capacity` elements of `element` (an `ElementSpec`, or a `BufferLayout` for a stack of lists);
    `host` keeps the buffer in host memory (``swap_memory``) where the platform has it."""

    element: object
    capacity: int
    host: bool = False


_GROWABLE_ALLOCATIONS = ("StackNew",)
_GRADIENT_ALLOCATIONS = ("TensorListGradInit", "TensorListGradUnstack", "TensorListGradSplit")


class Layouts:
    """Buffer layouts and exact lengths of the lists of `graph`; see the module docstring. `capacities`
    (loop -> capacity, filled in) gives a loop with no bound a provisional one (`autoloop.backends.jax.growth`)
    instead of the error."""

    def __init__(self, graph, capacities=None):
        self._parent: dict = {}
        self._facts: dict = {}  # family root -> [(node, dtype, TensorShape) or (node, "list", value)]
        self._allocations: dict = {}  # family root -> [nodes]
        self._layouts: dict = {}
        self._host: set = set()
        variants = [v for node in graph.walk() for v in node.outputs if v.dtype is dtypes.variant]
        self.empty = not variants
        self.lengths = None
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
        self._join_elements(graph)
        for node in graph.walk():
            self._record(node)
        self.lengths = Lengths(self, graph, capacities)

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
        if node.op in VERSION_OF:
            for position in VERSION_OF[node.op]:
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

    def _join_elements(self, graph) -> None:
        """The lists one stack holds (a nested loop's stacks, pushed by the outer loop and read back in its
        gradient) share one buffer layout: the elements of one family are one family. Joining two
        stacks' families joins their elements' in turn, so repeat until nothing joins."""
        nodes = [n for n in graph.walk() if n.op in ("StackPush", "StackGet")]
        joined = True
        while joined:
            joined = False
            element_of: dict = {}
            for node in nodes:
                element = node.inputs[2] if node.op == "StackPush" else node.outputs[0]
                if element.dtype is not dtypes.variant:
                    continue
                first = element_of.setdefault(self._find(node.inputs[0]), element)
                if self._find(first) is not self._find(element):
                    self._union(first, element)
                    joined = True

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
        for value, length in self.lengths.upper.items():
            if self._find(value) is root:
                if length is None:
                    raise _unbounded(value)
                capacity = max(capacity, self.lengths.concrete(length))
        allocations = self._allocations.get(root, ())
        if _is_gradient(allocations):
            element = self._element(root)
            capacity = max([capacity] + [self.of(other).capacity for other in self._allocations
                                         if other is not root and not _is_gradient(self._allocations[other])
                                         and self._element(other) == element])
        return capacity

    def declared_bound(self, value):
        """The ``bound`` a stack's maker declared (the most values it will hold), or None."""
        bounds = [node.attrs["bound"] for node in self._allocations.get(self._find(value), ())
                  if node.op == "StackNew" and node.attrs.get("bound") is not None]
        return min(bounds) if bounds else None

    def exact_length(self, value):
        """The length of list `value` when the graph fixes it, else None."""
        return None if self.lengths is None else self.lengths.exact_length(value)

    def growable(self, value) -> bool:
        """Whether writes past the end grow the list `value` (else they are errors, as on numpy)."""
        return _growable(self._allocations.get(self._find(value), ()))

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


def _unbounded(value):
    return unsupported(value.node, "a list that grows by an amount not known when compiling", (
        "XLA preallocates lists. Give the loops that append to it a capacity (capacity=N to while_loop, or "
        "autoloop.set_loop_options(capacity=N) as the first statement of the loop body), or run on "
        "backend='numpy'"))
