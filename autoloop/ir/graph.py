"""Graphs of nodes, as small dataclasses.

A `Graph` is a list of `Node`s in creation order (which is a topological
order: a node's inputs exist before it). A node produces `Value`s; each value
carries its static dtype and (possibly partial) shape. A graph's parameters
are ``Placeholder`` nodes listed in `Graph.inputs`, its results in
`Graph.outputs`.

Sub-graphs (the cond and body of a ``While``, the branches of a ``Cond``)
are `Graph`s with a `parent`. A sub-graph never refers to a parent's values
directly: reading one *captures* it, adding a placeholder to the sub-graph
and recording ``outer value -> placeholder`` in `Graph.captures`; the
control-flow node then takes the outer value as an explicit input (see
`autoloop.ir.control_flow` for how its inputs are laid out).

Besides data edges (`Node.inputs`) a node may have ordering edges
(`Node.control_inputs`: nodes that must run before it). Tracing gives every
effectful node one from the previous effectful node of its graph (see
`autoloop.ir.effects`), so the node list is one valid order among many and
no executor needs to rely on it for the order of effects. A TF1-style graph
(``autoloop.compat.v1``) turns that off at its top level
(`Graph.tf1_style`): there ops run when a fetch needs them, ordered
only by the edges its ``control_dependencies`` blocks add
(`Graph.control_dependencies`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autoloop.dtypes import DType
from autoloop.ir.control_flow import subgraph_attrs
from autoloop.ir.effects import has_effects, last_effect
from autoloop.shapes import TensorShape


@dataclass(eq=False)
class Value:
    """Output `index` of `node`: what a symbolic tensor refers to."""

    node: Node
    index: int
    dtype: DType
    shape: TensorShape
    constant: Any = None  # the numpy value, when shape inference could fold it

    @property
    def graph(self) -> Graph:
        return self.node.graph

    @property
    def name(self) -> str:
        return f"{self.node.name}:{self.index}"

    def __repr__(self):
        return f"<Value {self.name} {self.dtype.name}{self.shape}>"


def known_value(value: Value):
    """The numpy value of `value` if it is known while tracing (a constant, or folded), else None."""
    if value.node.op == "Const":
        return value.node.attrs["value"]
    return value.constant


def dependencies(roots, ordering: bool = True, is_leaf=None) -> set[int]:
    """Ids of the nodes `roots` and of every node of their graph they depend on: through data edges,
    and with `ordering` through ordering edges too; the inputs of a node where `is_leaf(node)` holds
    are not followed."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if ordering:
            stack.extend(node.control_inputs)
        if is_leaf is None or not is_leaf(node):
            stack.extend(v.node for v in node.inputs)
    return seen


def op_attrs_of(attrs: dict) -> dict:
    """`attrs` without the records that transformations keep on a node under names starting with ``_``
    (reverse mode's ``_gradient``): what an op's rules and kernels read."""
    return {k: v for k, v in attrs.items() if not k.startswith("_")}


@dataclass(eq=False)
class Node:
    """One operation: `op` applied to `inputs` with static `attrs`.

    `location` is the user's ``(file, line)`` that created the node, used in
    error messages; `attrs` may hold sub-graphs (``cond``, ``body``, ...).
    `control_inputs` are nodes of the same graph that must run before this
    one although it reads none of their outputs (the order of effects).
    """

    op: str
    inputs: tuple[Value, ...]
    attrs: dict
    graph: Graph
    name: str
    location: tuple[str, int] | None = None
    outputs: list[Value] = field(default_factory=list)
    tuple_result: bool = False  # the kernel returns a tuple, even of one output
    control_inputs: tuple[Node, ...] = ()

    def subgraphs(self) -> list[Graph]:
        """The sub-graphs in this node's attrs, in the order its control-flow op registers them
        (`autoloop.ir.control_flow.subgraph_attrs`); [] for an ordinary op."""
        return [self.attrs[key] for key in subgraph_attrs(self.op)]

    # Filled by autoloop.compat.v1: ``run(node, feed_dict, session)`` in a Session (TF1's
    # ``tensor.op.run()``). A plugin hook set once at import, like ``Tensor.eval``'s.
    session_run = None

    def run(self, feed_dict=None, session=None):
        """Run this node in `session` (default: the default ``compat.v1.Session``) for its effect."""
        if Node.session_run is None:
            raise NotImplementedError("running a node needs autoloop.compat.v1's Session")
        Node.session_run(self, feed_dict, session)

    def __repr__(self):
        inputs = ", ".join(v.name for v in self.inputs)
        return f"<Node {self.name} = {self.op}({inputs})>"


class Graph:
    """A list of nodes with named parameters, results and captures."""

    def __init__(self, name: str = "graph", parent: Graph | None = None):
        self.name = name
        self.parent = parent
        self.nodes: list[Node] = []
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.captures: dict[Value, Value] = {}  # outer value -> our placeholder
        # The prefixes ("outer/inner_1/") of the `autoloop.name_scope` blocks open while this graph is
        # built, innermost last; each is complete (a reset to the root is an empty prefix).
        self.name_scopes: list[str] = []
        self._name_counts: dict[str, int] = {}  # names in use, lowercased -> how often each base was asked for
        # A TF1-style graph's top level (autoloop.compat.v1) gives effectful nodes no ordering edges
        # and its tensors hash by identity (feed_dict keys); the nodes every new node must come after
        # are those of TF1's control_dependencies blocks open on this graph.
        self.tf1_style = False
        self.control_dependencies: list[Node] = []
        # Traced for a backend that compiles static shapes only (XLA): transformations that build a graph
        # (a gradient) then keep every shape known while compiling.
        self.static_shapes = False

    # -- building -------------------------------------------------------
    def unique_name(self, base: str) -> str:
        """`base`, or ``base_1``, ``base_2``, ... if taken: TensorFlow's rule, which ignores case
        (after a node ``add``, ``Add`` becomes ``Add_1``)."""
        key = base.lower()
        index = self._name_counts.get(key, 0)
        self._name_counts[key] = index + 1
        if index == 0:
            return base
        while f"{key}_{index}" in self._name_counts:  # a name given as "add_1" earlier
            index += 1
        self._name_counts[f"{key}_{index}"] = 1
        return f"{base}_{index}"

    def scope_prefix(self) -> str:
        """``"outer/inner/"``: the innermost open name scope of this graph, else of the graphs enclosing it."""
        if self.name_scopes:
            return self.name_scopes[-1]
        return self.parent.scope_prefix() if self.parent is not None else ""

    def add_node(self, op: str, inputs, attrs: dict, output_specs, location=None, name=None) -> Node:
        """Append a node whose outputs have the given ``(dtype, shape)`` specs.

        Its name is `name` (default: `op`) after the open name scopes, made
        unique in this graph: ``scope/Add``, ``scope/Add_1``.
        """
        for value in inputs:
            if value.graph is not self:
                raise ValueError(
                    f"internal error: {op} in graph {self.name!r} was given {value.name} "
                    f"of graph {value.graph.name!r}; capture it first")
        node = Node(op, tuple(inputs), attrs, self, self.unique_name(self.scope_prefix() + (name or op)), location)
        node.outputs = [Value(node, i, dtype, shape) for i, (dtype, shape) in enumerate(output_specs)]
        before = []
        if not self.tf1_style and has_effects(node):
            previous = last_effect(self)
            before += [previous] if previous is not None else []
        if op != "Placeholder":
            before += self.control_dependencies
        node.control_inputs = tuple(dict.fromkeys(before))
        self.nodes.append(node)
        return node

    def add_input(self, dtype: DType, shape: TensorShape, name: str = "input") -> Value:
        """A new parameter of this graph."""
        node = self.add_node("Placeholder", (), {"dtype": dtype, "shape": shape}, [(dtype, shape)], name=name)
        self.inputs.append(node.outputs[0])
        return node.outputs[0]

    def capture(self, outer: Value) -> Value:
        """The value standing for `outer` (of an enclosing graph) in this graph."""
        if outer.graph is self:
            return outer
        if outer in self.captures:
            return self.captures[outer]
        if self.parent is None:
            raise ValueError(
                f"{outer.name} belongs to graph {outer.graph.name!r}, which does not enclose "
                f"{self.name!r}: a tensor from one traced function cannot be used in another; "
                f"pass it as an argument instead")
        in_parent = self.parent.capture(outer)
        if in_parent in self.captures:  # read before, through the same parent value
            return self.captures[in_parent]
        placeholder = self.add_input(outer.dtype, outer.shape, name="capture")
        self.captures[in_parent] = placeholder
        return placeholder

    def is_ancestor_of(self, other: Graph | None) -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False

    # -- reading --------------------------------------------------------
    def walk(self):
        """Every node of this graph and of its sub-graphs, depth first."""
        for node in self.nodes:
            yield node
            for sub in node.subgraphs():
                yield from sub.walk()

    def live_nodes(self, is_leaf=None) -> list[Node]:
        """The nodes that outputs or effects need, in graph order.

        Roots are the outputs, the placeholders and every effectful node;
        a needed node needs its inputs and its control inputs, except that
        the inputs of a node for which `is_leaf(node)` holds are not
        followed (the executor's folded constants).
        """
        roots = [v.node for v in self.outputs] + [n for n in self.nodes if n.op == "Placeholder" or has_effects(n)]
        needed = dependencies(roots, is_leaf=is_leaf)
        return [n for n in self.nodes if id(n) in needed]

    def __repr__(self):
        return f"<Graph {self.name!r}: {len(self.nodes)} nodes>"

    def __str__(self):
        from autoloop.ir.printer import format_graph
        return format_graph(self)
