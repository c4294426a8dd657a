"""Pictures of graphs (`autoloop.visualize`): Graphviz ``dot`` text for both forms, SVG drawn by Graphviz.

    autoloop.visualize(sum_square, autoloop.constant(10))             # in a notebook: the picture
    autoloop.visualize(sum_square, autoloop.constant(10), lowered=True)
    to_dot(graph)                                                     # the dot text, no Graphviz needed

The functional form draws each ``While`` as a node with its loop beside it:
a cluster holding one node per loop variable (the user's name, dtype and
shape), the condition's and the body's nodes, and dashed edges from the
body's results back to the loop variables. A ``Cond`` is a node with a
cluster of its two branches. A value a loop or branch captures is an edge
from the node computing it straight into the cluster. Ordering edges
(effects) are dotted.

The lowered form (Enter/Merge/Switch/NextIteration/Exit) draws each frame
as a cluster; back-edges (``NextIteration`` into ``Merge``) are bold and
orange, a Switch's outputs are marked T and F.

Drawing SVG needs the ``graphviz`` package (``pip install
'autoloop[graph]'``) and Graphviz's ``dot`` program; without them
`GraphvizMissing` says how to install what is missing.
"""

from __future__ import annotations

import collections
import html
import itertools

from autoloop.ir import control_flow

_GRAPH_STYLE = ('  graph [compound=true, rankdir=TB, newrank=true, nodesep=0.25, ranksep=0.3, '
                'fontname="Helvetica", fontsize=12, labeljust=l];\n'
                '  node [shape=box, style="rounded,filled", fillcolor="#f4f4f5", color="#71717a", '
                'fontname="Helvetica", fontsize=11, margin="0.08,0.03", height=0.3];\n'
                '  edge [color="#52525b", arrowsize=0.6, fontname="Helvetica", fontsize=9];\n')


class GraphvizMissing(RuntimeError):
    """Drawing needs the graphviz package or Graphviz's ``dot`` program, and one is not installed."""


def visualize(fn, *args, lowered: bool = False, **kwargs) -> GraphPicture:
    """The traced graph of `fn` for `args` (an ``autoloop.function`` or a plain function) as a picture.

    The result shows itself in a notebook (``_repr_svg_``); ``.source`` is
    its dot text, ``.svg()`` the drawing. `GraphvizMissing` at once if
    Graphviz cannot draw here.
    """
    from autoloop.concrete_function import ConcreteFunction
    from autoloop.traced_function import Function, function
    if isinstance(fn, ConcreteFunction):
        graph = fn.graph
    else:
        traced = fn if isinstance(fn, Function) else function(fn)
        graph = traced.get_concrete_function(*args, **kwargs).graph
    picture = GraphPicture(to_dot(graph, lowered=lowered))
    picture.svg()
    return picture


class GraphPicture:
    """A drawing of a graph: `source` (dot text), `svg()`, `png()`, `pdf()`, `save(path)`, and
    ``_repr_svg_`` so that a notebook shows it.

        picture = autoloop.visualize(sum_square, autoloop.constant(10))
        picture.save("sum_square.png")        # the format from the extension: .svg, .png or .pdf
    """

    FORMATS = ("svg", "png", "pdf")

    def __init__(self, source: str):
        self.source = source
        self._svg = None

    def svg(self) -> str:
        if self._svg is None:
            self._svg = render(self.source, "svg")
        return self._svg

    def png(self) -> bytes:
        return render(self.source, "png")

    def pdf(self) -> bytes:
        return render(self.source, "pdf")

    def save(self, path) -> None:
        """Write the drawing to `path`, in the format its extension names (``.svg``, ``.png``, ``.pdf``)."""
        import os
        extension = os.path.splitext(str(path))[1].lstrip(".").lower()
        if extension not in self.FORMATS:
            raise ValueError(f"save writes {', '.join('.' + f for f in self.FORMATS)} files; {str(path)!r} has "
                             f"{'.' + extension if extension else 'no extension'}: name the file with one of them")
        drawn = self.svg().encode("utf-8") if extension == "svg" else render(self.source, extension)
        with open(path, "wb") as file:
            file.write(drawn)

    def _repr_svg_(self) -> str:
        return self.svg()

    def __repr__(self):
        return f"<GraphPicture: {self.source.count(chr(10))} lines of dot>"


def render(source: str, format: str = "svg") -> str | bytes:
    """`source` drawn by Graphviz's dot in `format` (text for svg, bytes otherwise)."""
    try:
        import graphviz
    except ImportError:
        raise GraphvizMissing("drawing graphs needs the graphviz package: pip install 'autoloop[graph]' "
                              "(and Graphviz's dot program)") from None
    try:
        drawn = graphviz.Source(source).pipe(format=format)
    except graphviz.ExecutableNotFound:
        raise GraphvizMissing("drawing graphs needs Graphviz's dot program: install Graphviz (apt-get install "
                              "graphviz, brew install graphviz, or https://graphviz.org/download/)") from None
    return drawn.decode("utf-8") if format == "svg" else drawn


def to_dot(graph, lowered: bool = False) -> str:
    """The dot text of `graph` (a top-level ``autoloop.ir`` graph), functional or lowered."""
    if lowered:
        from autoloop.execute.dataflow import lower
        return _LoweredDrawing(lower(graph)).dot()
    return _FunctionalDrawing(graph).dot()


def _label(*lines: str) -> str:
    """An HTML-like label: the first line bold, the others small."""
    first, *rest = [html.escape(line) for line in lines if line] or [""]
    small = "".join(f'<BR/><FONT POINT-SIZE="9" COLOR="#52525b">{line}</FONT>' for line in rest)
    return f"<<B>{first}</B>{small}>"


def _titled(kind: str, name: str) -> str:
    """`kind` with the node's name where the user gave one: "While", "While decode" (not "While while")."""
    base = name.rsplit("/", 1)[-1]
    default = base.lower() == kind.lower() or base.lower().startswith(kind.lower() + "_")
    return kind if default else f"{kind} {base}"


def _type(value) -> str:
    shape = value.shape
    dims = "?" if shape.rank is None else ",".join("?" if d is None else str(d) for d in shape.as_list())
    return f"{value.dtype.name}[{dims}]"


class _Writer:
    """Dot text: nodes inside their clusters, every edge after them at the top level.

    (An edge written inside a cluster would pull the nodes it names into that cluster.)
    """

    def __init__(self, name: str):
        self.name = name
        self.lines: list[str] = []
        self.edges: list[str] = []
        self._ids = itertools.count()

    def fresh(self, prefix: str = "n") -> str:
        return f"{prefix}{next(self._ids)}"

    def add(self, indent: int, text: str) -> None:
        self.lines.append("  " * indent + text)

    def edge(self, source: str, target: str, attrs: str = "") -> None:
        self.edges.append(f"  {source} -> {target}" + (f" [{attrs}]" if attrs else "") + ";")

    def finish(self) -> str:
        return f'digraph "{self.name}" {{\n{_GRAPH_STYLE}' + "\n".join(self.lines + self.edges) + "\n}\n"


# -- the functional form -----------------------------------------------------------------------------
class _FunctionalDrawing:
    def __init__(self, graph):
        self.graph = graph
        self.out = _Writer(graph.name)
        self.ids: dict[int, str] = {}  # node -> dot id
        self.params: dict[int, str] = {}  # sub-graph parameter value -> the dot id standing for it
        self.outer: dict[int, object] = {}  # capture placeholder -> the outer value
        self.anchors: list[str] = []  # what constants in the loop or branch being drawn hang below

    def dot(self) -> str:
        for value in self.graph.inputs:
            self.params[id(value)] = node_id = self.out.fresh()
            self.out.add(1, f'{node_id} [label={_label(value.node.name, _type(value))}, shape=ellipse, '
                            f'fillcolor="#dbeafe", color="#3b82f6"];')
        self.draw(self.graph, 1)
        results = self.out.fresh("result")
        self.out.add(1, f'{results} [label="return", shape=plaintext, style=""];')
        for value in self.graph.outputs:
            self.edge(value, results)
        return self.out.finish()

    def source(self, value) -> str:
        """The dot id of what computes `value`: its node, or for a parameter what stands for it."""
        while id(value) in self.outer:
            value = self.outer[id(value)]
        if id(value) in self.params:
            return self.params[id(value)]
        return self.ids[id(value.node)]

    def edge(self, value, target: str, attrs: str = "") -> None:
        captured = id(value) in self.outer
        style = ['color="#2563eb", style=dashed, penwidth=1.2'] if captured else []
        self.out.edge(self.source(value), target, ", ".join(([attrs] if attrs else []) + style))

    def draw(self, graph, indent: int) -> None:
        for node in graph.nodes:
            if node.op == "Placeholder":
                continue
            op = control_flow.lookup(node.op)
            if op is None:
                self.ordinary(node, indent)
            else:
                _CONTROL_FLOW.get(node.op, _FunctionalDrawing.other_control_flow)(self, node, indent)
            for before in node.control_inputs:
                self.out.edge(self.ids[id(before)], self.ids[id(node)],
                              'style=dotted, arrowhead=odot, color="#a1a1aa", constraint=false')

    def ordinary(self, node, indent: int) -> None:
        self.ids[id(node)] = node_id = self.out.fresh()
        if node.op == "Const":
            value = node.attrs["value"]
            shown = repr(value.tolist()) if getattr(value, "size", 2) <= 4 else _type(node.outputs[0])
            self.out.add(indent, f'{node_id} [label="{html.escape(shown)}", shape=plaintext, style="", '
                                 f'fontsize=10, height=0.2];')
        else:
            types = ", ".join(_type(v) for v in node.outputs) or "(no outputs)"
            self.out.add(indent, f"{node_id} [label={_label(node.op, types)}];")
        for value in node.inputs:
            self.edge(value, node_id)
        if not node.inputs and self.anchors:  # a constant in a loop or branch: below where it starts
            self.out.edge(self.anchors[-1], node_id, "style=invis")

    def control_flow_node(self, node, indent: int, title: str, detail: str, fill: str) -> str:
        self.ids[id(node)] = node_id = self.out.fresh()
        self.out.add(indent, f'{node_id} [label={_label(title, detail)}, shape=box, style="filled,bold", '
                             f'fillcolor="{fill}"];')
        return node_id

    def while_loop(self, node, indent: int) -> None:
        """The loop's cluster (variables, condition, body), then the While node its results leave through."""
        cond, body = node.attrs["cond"], node.attrs["body"]
        count = node.attrs["num_loop_vars"]
        groups = control_flow.operands(node)
        names = list(node.attrs.get("names") or [f"loop_vars[{k}]" for k in range(count)])
        cluster = self.out.fresh("cluster_")
        self.out.add(indent, f"subgraph {cluster} {{")
        pi = node.attrs.get("parallel_iterations", 10)
        self.out.add(indent + 1, f'label={_label(_titled("While", node.name) + " loop", f"parallel_iterations={pi}")}; '
                                 f'style="rounded,filled"; fillcolor="#fffbeb"; color="#d97706";')
        variables = []
        for k, (name, param, initial) in enumerate(zip(names, body.inputs[:count], groups.loop_vars)):
            var_id = self.out.fresh("var")
            variables.append(var_id)
            self.out.add(indent + 1, f'{var_id} [label={_label(name, _type(param))}, shape=ellipse, '
                                     f'fillcolor="#fef3c7", color="#d97706"];')
            self.edge(initial, var_id)
            self.params[id(param)] = self.params[id(cond.inputs[k])] = var_id
        self.out.add(indent + 1, f"{{rank=same; {'; '.join(variables)}}}")  # the loop's state, side by side
        for left, right in zip(variables, variables[1:]):
            self.out.edge(left, right, "style=invis")
        self.map_captures(cond, groups.cond_captures, count)
        self.map_captures(body, groups.body_captures, count)
        self.anchors.append(variables[0])
        self.sub_cluster(cond, indent + 1, "condition", "#ffffff")
        test = self.out.fresh("test")
        self.out.add(indent + 1, f'{test} [label="continue?", shape=diamond, style=filled, fillcolor="#fde68a", '
                                 f'fontsize=10, height=0.35];')
        self.edge(cond.outputs[0], test)
        for value in groups.maximum_iterations:
            self.edge(value, test, 'label="maximum_iterations"')
        self.sub_cluster(body, indent + 1, "body", "#ffffff")
        self.anchors.pop()
        self.out.add(indent, "}")
        node_id = self.control_flow_node(node, indent, _titled("While", node.name), ", ".join(names), "#fde68a")
        for var_id, value in zip(variables, body.outputs):
            self.out.edge(self.source(value), var_id, 'style=dashed, color="#d97706", constraint=false, label="next", '
                                                      'fontcolor="#b45309"')
            self.out.edge(self.source(value), node_id, "style=invis")  # the While node below the body
        self.out.edge(test, node_id, f'ltail={cluster}, style=bold, color="#d97706", label="no: results"')

    def cond(self, node, indent: int) -> None:
        """A cluster of the two branches, then the Cond node the chosen branch's results leave through."""
        groups = control_flow.operands(node)
        cluster = self.out.fresh("cluster_")
        self.out.add(indent, f"subgraph {cluster} {{")
        self.out.add(indent + 1, f'label={_label("branches of " + _titled("Cond", node.name))}; style="rounded,filled"; '
                                 f'fillcolor="#f0fdf4"; color="#16a34a";')
        self.anchors.append(self.source(groups.pred[0]))
        branches = []
        for key, captures, title in (("true_graph", groups.true_captures, "true"),
                                     ("false_graph", groups.false_captures, "false")):
            branch = node.attrs[key]
            self.map_captures(branch, captures, 0)
            self.sub_cluster(branch, indent + 1, title, "#ffffff")
            branches.append((title, branch))
        self.anchors.pop()
        self.out.add(indent, "}")
        node_id = self.control_flow_node(node, indent, _titled("Cond", node.name), "runs one branch", "#bbf7d0")
        self.edge(groups.pred[0], node_id, 'label="pred", style=bold, color="#16a34a"')
        for title, branch in branches:
            for value in branch.outputs:
                self.edge(value, node_id, f'label="{title}"')
            for inner in branch.nodes:
                if inner.op != "Placeholder" and id(inner) in self.ids:
                    self.out.edge(self.ids[id(inner)], node_id, "style=invis")  # the Cond node below its branches

    def other_control_flow(self, node, indent: int) -> None:
        node_id = self.control_flow_node(node, indent, node.op, node.name, "#e9d5ff")
        for value in node.inputs:
            self.edge(value, node_id)

    def map_captures(self, sub, outer_values, leading: int) -> None:
        for outer, placeholder in zip(outer_values, sub.inputs[leading:]):
            self.outer[id(placeholder)] = outer

    def sub_cluster(self, sub, indent: int, title: str, fill: str) -> None:
        cluster = self.out.fresh("cluster_")
        self.out.add(indent, f"subgraph {cluster} {{")
        self.out.add(indent + 1, f'label="{title}"; style="rounded,filled"; fillcolor="{fill}"; color="#d4d4d8";')
        self.draw(sub, indent + 1)
        self.out.add(indent, "}")


_CONTROL_FLOW = {"While": _FunctionalDrawing.while_loop, "Cond": _FunctionalDrawing.cond}


# -- the lowered form ------------------------------------------------------------------------------
_LOWERED_STYLES = {
    "Enter": 'shape=invhouse, fillcolor="#bbf7d0", color="#16a34a"',
    "Exit": 'shape=house, fillcolor="#fecaca", color="#dc2626"',
    "Merge": 'shape=invtrapezium, fillcolor="#bfdbfe", color="#2563eb"',
    "Switch": 'shape=trapezium, fillcolor="#fde68a", color="#d97706"',
    "NextIteration": 'shape=box, fillcolor="#fed7aa", color="#ea580c"',
    "LoopCond": 'shape=diamond, fillcolor="#fde68a", color="#d97706"',
    "Token": 'style="rounded,filled,dashed", fillcolor="#e4e4e7", fontsize=8',
    "Placeholder": 'shape=ellipse, fillcolor="#dbeafe", color="#3b82f6"',
}


class _LoweredDrawing:
    def __init__(self, lowered):
        self.lowered = lowered
        self.out = _Writer(lowered.name)
        self.ids = {id(node): self.out.fresh() for node in lowered.nodes}
        # A node is labelled with its name inside its frame, or with its whole name where another frame has a
        # node of the same short name (the Switch_1 of an outer and of an inner loop).
        shorts = [node.name.rsplit("/", 1)[-1] for node in lowered.nodes]
        counts = collections.Counter(shorts)
        self.labels = {id(node): node.name if counts[short] > 1 else short for node, short in zip(lowered.nodes, shorts)}

    def dot(self) -> str:
        members: dict = {frame: [] for frame in self.lowered.frames}
        children: dict = {frame: [] for frame in self.lowered.frames}
        for frame in self.lowered.frames[1:]:
            children[frame.parent].append(frame)
        for node in self.lowered.nodes:
            members[node.frame].append(node)
        self.frame(self.lowered.root, members, children, 1)
        for node in self.lowered.nodes:
            self.edges(node)
        results = self.out.fresh("result")
        self.out.add(1, f'{results} [label="return", shape=plaintext, style=""];')
        for value in self.lowered.outputs:
            self.out.edge(self.ids[id(value.node)], results)
        return self.out.finish()

    def frame(self, frame, members, children, indent: int) -> None:
        for node in members[frame]:
            short = node.name.rsplit("/", 1)[-1]
            name = self.labels[id(node)]
            types = ", ".join(_type(v) for v in node.outputs[:1])
            if node.op == "Const":
                value = node.attrs["value"]
                types = repr(value.tolist()) if getattr(value, "size", 2) <= 4 else types
            detail = types if short.split("_")[0] == node.op or node.op in _LOWERED_STYLES else f"{node.op} {types}"
            if node.op == "Enter":
                detail += " (invariant)" if node.attrs["is_constant"] else f' ({node.attrs.get("loop_var", "")})'
            style = _LOWERED_STYLES.get(node.op, "")
            self.out.add(indent, f"{self.ids[id(node)]} [label={_label(name, detail)}{', ' + style if style else ''}];")
        for child in children[frame]:
            cluster = self.out.fresh("cluster_")
            self.out.add(indent, f"subgraph {cluster} {{")
            self.out.add(indent + 1, f'label={_label(f"frame {child.name}", f"parallel_iterations={child.parallel_iterations}")}; '
                                     f'style="rounded,filled"; fillcolor="#fafaf9"; color="#78716c";')
            self.frame(child, members, children, indent + 1)
            self.out.add(indent, "}")

    def edges(self, node) -> None:
        target = self.ids[id(node)]
        for value in node.inputs:
            source = self.ids[id(value.node)]
            if value.node.op == "NextIteration" and node.op == "Merge":
                self.out.edge(source, target, 'color="#ea580c", penwidth=2.2, constraint=false, label="next"')
            elif value.node.op == "Switch":
                self.out.edge(source, target, f'label="{"T" if value.index else "F"}"')
            else:
                self.out.edge(source, target)
        for before in node.control_inputs:
            self.out.edge(self.ids[id(before)], target, 'style=dotted, arrowhead=odot, color="#a1a1aa"')
