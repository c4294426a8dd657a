"""Editing graphs: how every transformation changes a traced graph.

In the spirit of torch.fx's editable graph, a few operations keep every
invariant the verifier checks (node order, capture layout, effect chains):

- `clone(graph, value_map)`: a deep copy, sub-graphs included, recording
  ``old value -> new value``;
- `replace_all_uses(old, new)`: every reader of `old` reads `new`;
- `add_loop_var(while_node, initial, update)`: one more loop variable for an
  existing ``While``, whose next value `update` builds in the body
  (`add_loop_vars`: several at once, each update seeing all of them);
- `append_outputs(subgraph, values)` and `add_cond_output(cond_node, ...)`:
  more results from a sub-graph;
- `remove_dead_nodes(graph)`: drop what no output and no effect needs, and
  the captures nobody reads any more;
- `sort_nodes(graph)`: restore a topological node order after an edit.

Builder callbacks run inside the sub-graph (``context.building``), take and
return graph `Value`s, and may read any value of the sub-graph or of the
graphs around it (outer values are captured, and the control-flow nodes on
the way take them as inputs). ``autoloop.ops.dispatch.on_values`` turns a
function of Tensors into such a callback:

    >>> counter = add_loop_var(loop, zero, on_values(lambda i: i + 1))
    >>> graph.outputs.append(counter)     # how many iterations ran
"""

from __future__ import annotations

import heapq

from autoloop.ir import context, control_flow
from autoloop.ir.effects import chain_effects
from autoloop.ir.graph import Graph, Node, Value, dependencies
from autoloop.shapes import TensorShape, as_shape


# -- copying ------------------------------------------------------------------------------
def clone(graph: Graph, value_map: dict | None = None, parent: Graph | None = None) -> Graph:
    """A copy of `graph` and its sub-graphs; `value_map` receives ``old value -> new value``.

    Entries already in `value_map` say what outer values (captured by
    `graph`) become in the copy; the copy's parent is `parent` (by default
    `graph`'s). Attributes other than sub-graphs are shared, not copied.
    """
    value_map = {} if value_map is None else value_map
    node_map: dict[int, Node] = {}
    new = Graph(graph.name, graph.parent if parent is None else parent)
    new._name_counts = dict(graph._name_counts)
    new.tf1_style = graph.tf1_style
    new.static_shapes = graph.static_shapes
    for node in graph.nodes:
        attrs = dict(node.attrs)
        attrs.update({key: clone(attrs[key], value_map, parent=new) for key in control_flow.subgraph_attrs(node.op)})
        copy = Node(node.op, tuple(value_map[v] for v in node.inputs), attrs, new, node.name, node.location,
                    tuple_result=node.tuple_result,
                    control_inputs=tuple(node_map[id(n)] for n in node.control_inputs))
        copy.outputs = [Value(copy, v.index, v.dtype, v.shape, v.constant) for v in node.outputs]
        value_map.update(zip(node.outputs, copy.outputs))
        node_map[id(node)] = copy
        new.nodes.append(copy)
    new.inputs = [value_map[v] for v in graph.inputs]
    new.outputs = [value_map[v] for v in graph.outputs]
    new.captures = {value_map.get(outer, outer): value_map[inner] for outer, inner in graph.captures.items()}
    return new


# -- replacing ----------------------------------------------------------------------------
def replace_all_uses(old: Value, new: Value) -> None:
    """Make the nodes and outputs of `old`'s graph that read `old` read `new` instead.

    Nodes that `new` is computed from keep reading `old` (so ``y = f(x);
    replace_all_uses(x, y)`` puts ``f`` in front of every other reader).
    Sub-graphs that captured `old` capture `new` (merged with an existing
    capture of `new`). ValueError if `new` belongs to another graph,
    TypeError if its dtype differs.
    """
    graph = old.graph
    if new.graph is not graph:
        raise ValueError(f"replace_all_uses: {new.name} belongs to graph {new.graph.name!r}, "
                         f"{old.name} to {graph.name!r}; capture it first")
    if old.dtype is not new.dtype:
        raise TypeError(f"replace_all_uses: {old.name} is {old.dtype.name} but {new.name} is {new.dtype.name}")
    feeding_new = dependencies([new.node])
    for node in graph.nodes:
        if id(node) in feeding_new or not any(v is old for v in node.inputs):
            continue
        node.inputs = tuple(new if v is old else v for v in node.inputs)
        if control_flow.lookup(node.op) is not None:
            for sub in node.subgraphs():
                _recapture(sub, old, new)
            control_flow.sync_captures(node)
    graph.outputs = [new if v is old else v for v in graph.outputs]
    sort_nodes(graph)


def _recapture(sub: Graph, old: Value, new: Value) -> None:
    """`sub` captured `old`: let it capture `new` (one placeholder if it captured both)."""
    if old not in sub.captures:
        return
    if new in sub.captures:
        duplicate, kept = sub.captures[old], sub.captures[new]
        replace_all_uses(duplicate, kept)
        _remove_placeholders(sub, {id(duplicate)})
        sub.captures = {outer: inner for outer, inner in sub.captures.items() if outer is not old}
    else:
        sub.captures = {(new if outer is old else outer): inner for outer, inner in sub.captures.items()}


# -- loops and branches ---------------------------------------------------------------------
def add_loop_var(node: Node, initial: Value, update, shape=None, name: str = "loop_var") -> Value:
    """Give the ``While`` `node` one more loop variable; return its value after the loop.

    `initial` (a value of `node`'s graph) enters the loop; each iteration
    the variable becomes ``update(v)``, built in the body with ``v`` the
    variable's body parameter. `shape` is its shape invariant (by default
    `initial`'s shape). TypeError/ValueError, and the graph unchanged, if
    the update's dtype or shape does not fit.
    """
    (after,) = add_loop_vars(node, [initial], lambda parameters: [update(parameters[0])], [shape], [name])
    return after


def add_loop_vars(node: Node, initials, update, shapes=None, names=None) -> list:
    """`add_loop_var` for several variables whose updates depend on each other:
    ``update(parameters)`` returns the new value of each, given all their body parameters."""
    if node.op != "While":
        raise ValueError(f"add_loop_var needs a While node, got {node.op} node {node.name}")
    shapes = [None] * len(initials) if shapes is None else shapes
    names = ["loop_var"] * len(initials) if names is None else names
    shapes = [initial.shape if shape is None else as_shape(shape) for initial, shape in zip(initials, shapes)]
    for initial, shape in zip(initials, shapes):
        if initial.graph is not node.graph:
            raise ValueError(f"add_loop_var: the initial value {initial.name} must belong to the loop's graph "
                             f"{node.graph.name!r}")
        if not initial.shape.is_subtype_of(shape):
            raise ValueError(f"add_loop_var: the initial value's shape {initial.shape} does not fit the "
                             f"invariant {shape}")
    cond, body = node.attrs["cond"], node.attrs["body"]
    count = node.attrs["num_loop_vars"]
    saved = [(sub, list(sub.nodes), list(sub.inputs), dict(sub.captures)) for sub in (cond, body)]
    try:
        parameters = []
        for k, (initial, shape, name) in enumerate(zip(initials, shapes, names)):
            _insert_parameter(cond, count + k, initial.dtype, shape, name)
            parameters.append(_insert_parameter(body, count + k, initial.dtype, shape, name))
        with context.building(body):
            results = [body.capture(value) for value in update(parameters)]
        for result, initial, shape in zip(results, initials, shapes):
            if result.dtype is not initial.dtype:
                raise TypeError(f"add_loop_var: the update gives {result.dtype.name}, the loop variable is "
                                f"{initial.dtype.name}")
            if not result.shape.is_subtype_of(shape):
                raise ValueError(f"add_loop_var: the update gives shape {result.shape}, which does not fit the "
                                 f"invariant {shape}; pass a less specific shape")
    except BaseException:
        for sub, nodes, inputs, captures in saved:
            sub.nodes, sub.inputs, sub.captures = nodes, inputs, captures
        _sync_enclosing(node.graph)
        raise
    body.outputs.extend(results)
    first = len(node.outputs)
    node.outputs.extend(Value(node, first + k, initial.dtype, shape)
                        for k, (initial, shape) in enumerate(zip(initials, shapes)))
    control_flow.regroup(node, loop_vars=control_flow.operands(node).loop_vars + tuple(initials))
    if "names" in node.attrs:  # the loop variables' names, for messages and printing
        node.attrs["names"] = tuple(node.attrs["names"]) + tuple(names)
    _sync_enclosing(body)
    return node.outputs[first:]


def add_cond_output(node: Node, true_fn, false_fn) -> Value:
    """Give the ``Cond`` `node` one more output: ``true_fn()`` in one branch, ``false_fn()`` in the other.

    Each builder runs in its branch and returns a value of it (or of a graph
    around it). TypeError if the two dtypes differ; the output's shape is
    the most specific one compatible with both.
    """
    if node.op != "Cond":
        raise ValueError(f"add_cond_output needs a Cond node, got {node.op} node {node.name}")
    results = []
    for key, build in (("true_graph", true_fn), ("false_graph", false_fn)):
        branch = node.attrs[key]
        with context.building(branch):
            results.append(branch.capture(build()))
    true_value, false_value = results
    if true_value.dtype is not false_value.dtype:
        raise TypeError(f"add_cond_output: the true branch gives {true_value.dtype.name}, the false "
                        f"branch {false_value.dtype.name}")
    append_outputs(node.attrs["true_graph"], [true_value])
    append_outputs(node.attrs["false_graph"], [false_value])
    shape = true_value.shape.most_specific_compatible_shape(false_value.shape)
    node.outputs.append(Value(node, len(node.outputs), true_value.dtype, shape))
    return node.outputs[-1]


def append_outputs(sub: Graph, values) -> None:
    """Append `values` (of `sub` or of a graph around it, captured then) to `sub`'s outputs.

    The caller keeps the owning node's outputs in step (`add_cond_output`).
    """
    sub.outputs.extend(sub.capture(value) for value in values)
    _sync_enclosing(sub)


def owner(sub: Graph) -> Node:
    """The control-flow node whose attrs hold the sub-graph `sub`."""
    node = _owner_if_built(sub)
    if node is not None:
        return node
    raise ValueError(f"graph {sub.name!r} is not a sub-graph of a node of "
                     f"{sub.parent.name if sub.parent is not None else None!r}")


def _owner_if_built(sub: Graph) -> Node | None:
    if sub.parent is None:  # a top-level graph: no node holds it
        return None
    return next((node for node in sub.parent.nodes if any(graph is sub for graph in node.subgraphs())), None)


def _insert_parameter(sub: Graph, position: int, dtype, shape: TensorShape, name: str) -> Value:
    """A new placeholder at `position` of `sub`'s inputs (before its captures)."""
    placeholder = sub.add_input(dtype, shape, name=name)
    sub.inputs.pop()
    sub.inputs.insert(position, placeholder)
    return placeholder


def built_into(graph: Graph) -> None:
    """Call after adding nodes to the sub-graph `graph` of a built control-flow node (see `_sync_enclosing`)."""
    _sync_enclosing(graph)


def _sync_enclosing(graph: Graph) -> None:
    """After `graph` was built into, update the control-flow nodes holding it and the graphs around.

    They take the values newly captured as inputs, join their graph's
    chain of effects if they have effects now, and come after their inputs.
    """
    while graph.parent is not None:
        node = _owner_if_built(graph)
        if node is None:  # a sub-graph still being traced: its node will take its captures when made
            break
        control_flow.sync_captures(node)
        chain_effects(node.graph)  # the node may have effects now; the list still has program order
        sort_nodes(node.graph)
        graph = node.graph


# -- pruning ------------------------------------------------------------------------------
def remove_dead_nodes(graph: Graph) -> None:
    """Drop the nodes no output and no effect needs, here and in every sub-graph.

    Parameters stay; a sub-graph's captures that nothing reads any more are
    dropped, with the matching inputs of its control-flow node (tracing
    leaves such dead nodes and captures behind, for example a loop test
    evaluated once only to decide whether to stage the loop).
    """
    for node in graph.nodes:
        op = control_flow.lookup(node.op)
        if op is None:
            continue
        for sub in node.subgraphs():
            remove_dead_nodes(sub)
        _drop_unused_captures(node, op)
    graph.nodes = graph.live_nodes()


def _drop_unused_captures(node: Node, op) -> None:
    dropped = False
    for group in op.capture_groups():
        sub = node.attrs[group.captures_of]
        if not sub.captures:
            continue
        read = {id(v) for inner in sub.nodes for v in inner.inputs} | {id(v) for v in sub.outputs}
        unused = {id(p) for p in sub.captures.values() if id(p) not in read}
        if unused:
            sub.captures = {outer: inner for outer, inner in sub.captures.items() if id(inner) not in unused}
            _remove_placeholders(sub, unused)
            dropped = True
    if dropped:
        control_flow.sync_captures(node)


def _remove_placeholders(sub: Graph, value_ids: set[int]) -> None:
    sub.inputs = [v for v in sub.inputs if id(v) not in value_ids]
    sub.nodes = [n for n in sub.nodes if not (n.op == "Placeholder" and id(n.outputs[0]) in value_ids)]


# -- order ----------------------------------------------------------------------------------
def sort_nodes(graph: Graph) -> None:
    """Reorder `graph`'s nodes so each comes after what it reads and its ordering edges.

    Stable: nodes already in order keep their order. ValueError if the
    edges form a cycle.
    """
    position = {id(node): k for k, node in enumerate(graph.nodes)}
    waiting: dict[int, int] = {}
    readers: dict[int, list[Node]] = {}
    for node in graph.nodes:
        before = {id(v.node) for v in node.inputs if v.graph is graph} | {id(n) for n in node.control_inputs}
        waiting[id(node)] = len(before)
        for producer in before:
            readers.setdefault(producer, []).append(node)
    ready = [(position[id(n)], n) for n in graph.nodes if waiting[id(n)] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, node = heapq.heappop(ready)
        order.append(node)
        for reader in readers.get(id(node), ()):
            waiting[id(reader)] -= 1
            if waiting[id(reader)] == 0:
                heapq.heappush(ready, (position[id(reader)], reader))
    if len(order) != len(graph.nodes):
        stuck = [n.name for n in graph.nodes if waiting[id(n)] > 0]
        raise ValueError(f"graph {graph.name!r} has a cycle through {stuck[:5]}")
    graph.nodes = order
