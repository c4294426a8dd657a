"""Compile a graph into one generated Python function.

Every node becomes one line of straight-line code; a ``While`` becomes a
Python ``while`` loop and a ``Cond`` an ``if``/``else``, with their
sub-graphs inlined. Ops with an ``expr`` template are inlined as Python
expressions (``v3 = (v1 + v2)``), others call their kernel, and folded
constants are bound once. Nothing is interpreted per call and no shape or
dtype that tracing proved is checked again, so a loop costs about what the
same loop hand-written over numpy costs.

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

from autoloop.ir.graph import Graph, Node, Value
from autoloop.ops import registry

# Ops the generator writes itself; everything else goes through its OpDef.
_SPECIAL: dict[str, callable] = {}


def special(op_name):
    """Register a function that writes the code for `op_name` nodes."""
    def decorate(fn):
        _SPECIAL[op_name] = fn
        return fn
    return decorate


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
        for node in live_nodes(graph):
            if node.op == "Placeholder":
                continue
            writer = _SPECIAL.get(node.op, write_generic)
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
    opdef = registry.get(node.op)
    if node.op == "Const" or _all_folded(node):
        for value in node.outputs:
            constant = node.attrs["value"] if node.op == "Const" else value.constant
            gen.names[value] = gen.bind(constant)
        return
    args = [gen.names[v] for v in node.inputs]
    attrs = {k: v for k, v in node.attrs.items() if not k.startswith("_")}
    template = _template(opdef, node, attrs)
    if template is not None:
        call = template.format(*args)
    else:
        kernel = functools.partial(opdef.kernel, **attrs) if attrs else opdef.kernel
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


def _template(opdef, node: Node, attrs) -> str | None:
    """The op's inline expression: its scalar form where tracing proved every input a scalar."""
    if opdef.scalar_expr is not None and all(v.shape.rank == 0 for v in node.inputs):
        scalar = opdef.scalar_expr
        if callable(scalar):
            scalar = scalar(attrs, [v.dtype for v in node.inputs])
        if scalar is not None:
            return scalar
    return opdef.expr(attrs) if callable(opdef.expr) else opdef.expr


def _all_folded(node: Node) -> bool:
    if registry.get(node.op).stateful or not node.outputs:
        return False
    return all(v.constant is not None for v in node.outputs)


def is_stateful(node: Node) -> bool:
    if node.op in _SPECIAL:
        return any(is_stateful(n) for sub in node.subgraphs() for n in sub.nodes)
    return registry.get(node.op).stateful


def live_nodes(graph: Graph) -> list[Node]:
    """The nodes that outputs or side effects need, in graph order."""
    needed: set[int] = set()
    stack = [v.node for v in graph.outputs] + [n for n in graph.nodes if is_stateful(n)]
    while stack:
        node = stack.pop()
        if id(node) in needed:
            continue
        needed.add(id(node))
        if _all_folded(node) and node.op not in _SPECIAL:
            continue  # its inputs are not needed at run time
        stack.extend(v.node for v in node.inputs)
    return [n for n in graph.nodes if id(n) in needed]


@special("While")
def write_while(gen: Generator, node: Node, indent: int) -> None:
    """A ``while True`` loop: test the cond graph, break, run the body graph."""
    cond, body = node.attrs["cond"], node.attrs["body"]
    count = node.attrs["num_loop_vars"]
    inputs = [gen.names[v] for v in node.inputs]
    initial = inputs[:count]
    cond_captured = inputs[count:count + len(cond.captures)]
    body_captured = inputs[count + len(cond.captures):count + len(cond.captures) + len(body.captures)]
    loop_vars = [gen.fresh("lv") for _ in range(count)]
    gen.line(indent, f"# While {node.name}")
    gen.assign(indent, loop_vars, initial, node)
    limit = inputs[-1] if node.attrs.get("has_maximum_iterations") else None
    counter = gen.fresh("it") if limit is not None else None
    if counter:
        gen.line(indent, f"{counter} = 0")
    gen.line(indent, "while True:")
    if counter:
        gen.line(indent + 1, f"if {counter} >= {limit}: break", node)
    (test,) = gen.graph_body(cond, indent + 1, loop_vars + cond_captured)
    gen.line(indent + 1, f"if not {test}: break", node)
    if counter:
        gen.line(indent + 1, f"{counter} += 1")
    results = gen.graph_body(body, indent + 1, loop_vars + body_captured)
    gen.assign(indent + 1, loop_vars, results, node)
    for value, name in zip(node.outputs, loop_vars):
        gen.names[value] = name


@special("Cond")
def write_cond(gen: Generator, node: Node, indent: int) -> None:
    """An ``if``/``else`` whose branches write the same output names."""
    true_graph, false_graph = node.attrs["true_graph"], node.attrs["false_graph"]
    inputs = [gen.names[v] for v in node.inputs]
    true_captured = inputs[1:1 + len(true_graph.captures)]
    false_captured = inputs[1 + len(true_graph.captures):]
    outputs = [gen.fresh() for _ in node.outputs]
    gen.line(indent, f"if {inputs[0]}:", node)
    results = gen.graph_body(true_graph, indent + 1, true_captured)
    gen.assign(indent + 1, outputs, results, node)
    gen.line(indent + 1, "pass")
    gen.line(indent, "else:")
    results = gen.graph_body(false_graph, indent + 1, false_captured)
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
