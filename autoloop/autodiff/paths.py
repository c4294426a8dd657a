"""Which outputs depend differentiably on which inputs: the paths a gradient can take.

A path runs through differentiable values (`rules.is_differentiable`) and
ops that are not declared `NOT_DIFFERENTIABLE` (``StopGradient`` blocks its
path, so do comparisons and casts to integers). Control-flow ops look
inside their sub-graphs: a ``While`` output depends on a loop variable's
initial value if the body carries it there in some number of iterations.

- `node_connections(node)`: for each output, the input positions it depends on;
- `graph_connections(graph)`: for each output, the input positions (parameters
  and captures) it depends on;
- `reachable(nodes, sources)`: the values some source reaches.

Results are memoized per node and graph in a `memo` dict that lives for one
differentiation.
"""

from __future__ import annotations

from autoloop.autodiff.rules import is_blocked, is_differentiable
from autoloop.ir import control_flow


def node_connections(node, memo: dict) -> list[frozenset]:
    key = ("node", id(node), len(node.inputs), len(node.outputs))
    if key not in memo:
        rule = _CONTROL_FLOW.get(node.op, _op_connections)
        memo[key] = rule(node, memo)
    return memo[key]


def graph_connections(graph, memo: dict) -> list[frozenset]:
    """Per output of `graph`, the positions in ``graph.inputs`` it depends on."""
    key = ("graph", id(graph), len(graph.nodes), len(graph.inputs), len(graph.outputs))
    if key in memo:
        return memo[key]
    depends: dict = {}
    for position, value in enumerate(graph.inputs):
        if is_differentiable(value.dtype):
            depends[value] = frozenset([position])
    for node in graph.nodes:
        if node.op == "Placeholder":
            continue
        connections = node_connections(node, memo)
        for value, inputs in zip(node.outputs, connections):
            found = frozenset().union(*(depends.get(node.inputs[k], frozenset()) for k in inputs))
            if found:
                depends[value] = found
    result = [depends.get(value, frozenset()) for value in graph.outputs]
    memo[key] = result
    return result


def reachable(nodes, sources, memo: dict, node_filter=None) -> set:
    """The values of `nodes` (in topological order) that a path from `sources` reaches, sources included."""
    reached = {value for value in sources if is_differentiable(value.dtype)}
    for node in nodes:
        if node.op == "Placeholder" or (node_filter is not None and not node_filter(node)):
            continue
        if not any(value in reached for value in node.inputs):
            continue
        for value, inputs in zip(node.outputs, node_connections(node, memo)):
            if any(node.inputs[k] in reached for k in inputs):
                reached.add(value)
    return reached


def op_connections(op_name: str, input_dtypes, output_dtypes) -> list[frozenset]:
    """An ordinary op: each differentiable output depends on every differentiable input, unless the
    op is declared `NOT_DIFFERENTIABLE`."""
    if is_blocked(op_name):
        return [frozenset()] * len(output_dtypes)
    inputs = frozenset(k for k, dtype in enumerate(input_dtypes) if is_differentiable(dtype))
    return [inputs if is_differentiable(dtype) else frozenset() for dtype in output_dtypes]


def _op_connections(node, memo) -> list[frozenset]:
    return op_connections(node.op, [v.dtype for v in node.inputs], [v.dtype for v in node.outputs])


def _while_connections(node, memo) -> list[frozenset]:
    """A loop variable's result depends on its own initial value and, through the body, on
    what any iteration reads: the fixed point of the body's connections."""
    count = node.attrs["num_loop_vars"]
    body = node.attrs["body"]
    body_captures_start = control_flow.group_start(node, "body_captures")
    inner = graph_connections(body, memo)
    depends = [frozenset([j]) if is_differentiable(body.inputs[j].dtype) else frozenset() for j in range(count)]
    changed = True
    while changed:
        changed = False
        for j in range(count):
            if not depends[j]:
                continue
            grown = set(depends[j])
            for m in inner[j]:
                grown |= depends[m] if m < count else {body_captures_start + m - count}
            if len(grown) != len(depends[j]):
                depends[j] = frozenset(grown)
                changed = True
    return depends


def _cond_connections(node, memo) -> list[frozenset]:
    result: list[set] = [set() for _ in node.outputs]
    for key, group in (("true_graph", "true_captures"), ("false_graph", "false_captures")):
        start = control_flow.group_start(node, group)
        for j, inputs in enumerate(graph_connections(node.attrs[key], memo)):
            if is_differentiable(node.outputs[j].dtype):
                result[j] |= {start + k for k in inputs}
    return [frozenset(r) for r in result]


def _scan_connections(node, memo) -> list[frozenset]:
    """Every result of a Scan may depend on every state value, frame and capture (its rule finds the real paths)."""
    inputs = frozenset(k for k, value in enumerate(node.inputs) if is_differentiable(value.dtype))
    return [inputs if is_differentiable(value.dtype) else frozenset() for value in node.outputs]


_CONTROL_FLOW = {"While": _while_connections, "Cond": _cond_connections, "Scan": _scan_connections}
