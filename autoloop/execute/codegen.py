"""Compile a graph into one generated Python function.

Every node becomes one line of straight-line code; a ``While`` becomes a
Python ``while`` loop and a ``Cond`` an ``if``/``else``, with their
sub-graphs inlined. Ops with an ``expr`` template are inlined as Python
expressions (``v3 = (v1 + v2)``), others call their kernel, and folded
constants are bound once. Nothing is interpreted per call and no shape or
dtype that tracing proved is checked again, so a loop costs about what the
same loop hand-written over numpy costs.

Nodes are written in graph order, which the verifier guarantees is a
topological order of data and ordering edges: effects happen in program
order with no run-time cost for the ordering edges. A control-flow node is
written by its op's ``"numpy"`` rule (`autoloop.ir.control_flow`), which
inlines its sub-graphs.

For ``sum_square`` the generated code reads::

    def run(p0):
        v1, v2 = c0, c0
        while True:
            v3 = (v1 < p0)
            if not v3: break
            v4 = (v1 * v1)
            ...
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects
from autoloop.ir.graph import Graph, Node, Value
from autoloop.ops import registry


class Generator:
    """Writes the source of one graph, collecting the constants it refers to."""

    def __init__(self, check: bool = False):
        self.lines: list[str] = []
        self.namespace: dict[str, object] = {"np": np}  # expression templates may name numpy
        self.names: dict[Value, str] = {}
        self.line_nodes: dict[int, Node] = {}
        self.check = check
        self._counter = itertools.count()
        self._bound: dict[int, str] = {}

    # -- naming ------------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        return f"{prefix}{next(self._counter)}"

    def bind(self, obj, prefix: str = "c") -> str:
        """A global name of the generated code that holds `obj`."""
        key = id(obj)
        if key not in self._bound:
            name = self.fresh(prefix)
            self.namespace[name] = obj
            self._bound[key] = name
        return self._bound[key]

    # -- writing -------------------------------------------------------------
    def line(self, indent: int, text: str, node: Node | None = None) -> None:
        self.lines.append("    " * indent + text)
        if node is not None:
            self.line_nodes[len(self.lines)] = node

    def graph_body(self, graph: Graph, indent: int, input_names) -> list[str]:
        """Write `graph`'s nodes; return the expressions of its outputs."""
        for value, name in zip(graph.inputs, input_names):
            self.names[value] = name
        for node in graph.live_nodes(is_leaf=_all_folded):
            if node.op == "Placeholder":
                continue
            op = control_flow.lookup(node.op)
            writer = write_generic if op is None else op.kernel_for("numpy")
            writer(self, node, indent)
            if self.check:
                for value in node.outputs:
                    self.line(indent, f"_check({self.names[value]}, {self.bind(value, 'spec')})", node)
        return [self.names[v] for v in graph.outputs]

    def assign(self, indent: int, targets: list[str], sources: list[str], node=None) -> None:
        """``a, b = x, y`` (or ``a = x`` for one name: a trailing comma would make a tuple)."""
        if targets:
            self.line(indent, f"{', '.join(targets)} = {', '.join(sources)}", node)


def write_generic(gen: Generator, node: Node, indent: int) -> None:
    if node.op == "Const" or _all_folded(node):
        for value in node.outputs:
            constant = node.attrs["value"] if node.op == "Const" else value.constant
            gen.names[value] = gen.bind(constant)
        return
    args = [gen.names[v] for v in node.inputs]
    attrs = {k: v for k, v in node.attrs.items() if not k.startswith("_")}
    kernel = registry.get(node.op).kernel_for("numpy")
    template = _template(kernel, node, attrs)
    if template is not None:
        call = template.format(*args)
    else:
        kernel = functools.partial(kernel.fn, **attrs) if attrs else kernel.fn
        call = f"{gen.bind(kernel, 'k')}({', '.join(args)})"
    targets = [gen.fresh() for _ in node.outputs]
    for value, name in zip(node.outputs, targets):
        gen.names[value] = name
    if not targets:
        gen.line(indent, call, node)
    elif node.tuple_result:
        gen.line(indent, f"{', '.join(targets)}, = {call}", node)
    else:
        gen.line(indent, f"{targets[0]} = {call}", node)


def _template(kernel, node: Node, attrs) -> str | None:
    """The kernel's inline expression: its scalar form where tracing proved every input a scalar."""
    if kernel.scalar_expr is not None and all(v.shape.rank == 0 for v in node.inputs):
        scalar = kernel.scalar_expr
        if callable(scalar):
            scalar = scalar(attrs, [v.dtype for v in node.inputs])
        if scalar is not None:
            return scalar
    return kernel.expr(attrs) if callable(kernel.expr) else kernel.expr


def _all_folded(node: Node) -> bool:
    """Whether every output of `node` was computed while tracing (its inputs are then not needed)."""
    if not node.outputs or any(v.constant is None for v in node.outputs):
        return False  # control-flow nodes land here: their outputs are never folded
    return not has_effects(node)


# -- control flow: the "numpy" rules of the ops in autoloop.ir.control_flow -----------------
def write_while(gen: Generator, node: Node, indent: int) -> None:
    """A ``while True`` loop: test the cond graph, break, run the body graph."""
    cond, body = node.attrs["cond"], node.attrs["body"]
    groups = control_flow.split(node, [gen.names[v] for v in node.inputs])
    loop_vars = [gen.fresh("lv") for _ in groups.loop_vars]
    gen.line(indent, f"# While {node.name}")
    gen.assign(indent, loop_vars, list(groups.loop_vars), node)
    limit = groups.maximum_iterations[0] if groups.maximum_iterations else None
    counter = gen.fresh("it") if limit is not None else None
    if counter:
        gen.line(indent, f"{counter} = 0")
    gen.line(indent, "while True:", node)  # tagged: a Ctrl-C often lands here
    if counter:
        gen.line(indent + 1, f"if {counter} >= {limit}: break", node)
    (test,) = gen.graph_body(cond, indent + 1, loop_vars + list(groups.cond_captures))
    gen.line(indent + 1, f"if not {test}: break", node)
    if counter:
        gen.line(indent + 1, f"{counter} += 1")
    results = gen.graph_body(body, indent + 1, loop_vars + list(groups.body_captures))
    gen.assign(indent + 1, loop_vars, results, node)
    for value, name in zip(node.outputs, loop_vars):
        gen.names[value] = name


def write_cond(gen: Generator, node: Node, indent: int) -> None:
    """An ``if``/``else`` whose branches write the same output names."""
    true_graph, false_graph = node.attrs["true_graph"], node.attrs["false_graph"]
    groups = control_flow.split(node, [gen.names[v] for v in node.inputs])
    outputs = [gen.fresh() for _ in node.outputs]
    gen.line(indent, f"if {groups.pred[0]}:", node)
    results = gen.graph_body(true_graph, indent + 1, list(groups.true_captures))
    gen.assign(indent + 1, outputs, results, node)
    gen.line(indent + 1, "pass")
    gen.line(indent, "else:")
    results = gen.graph_body(false_graph, indent + 1, list(groups.false_captures))
    gen.assign(indent + 1, outputs, results, node)
    gen.line(indent + 1, "pass")
    for value, name in zip(node.outputs, outputs):
        gen.names[value] = name


def generate(graph: Graph, check: bool = False) -> Generator:
    """The generator holding `graph`'s source as a function ``run(p0, p1, ...)``."""
    gen = Generator(check)
    params = [f"p{i}" for i in range(len(graph.inputs))]
    gen.line(0, f"def run({', '.join(params)}):")
    results = gen.graph_body(graph, 1, params)
    gen.line(1, f"return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    return gen
