"""The graph verifier: re-derive every node's dtype and shape and check the wiring.

``verify(graph, infer_node)`` raises `GraphError` naming the first node that
is wrong. `infer_node(node)` (supplied by the op library, so that ir/ does
not depend on ops/) returns the ``(dtype, shape)`` of each output as the
op's rule computes it from the node's inputs. It checks:

- every input and ordering edge comes from the same graph and from a node
  listed earlier (the node list is a topological order);
- effectful nodes form one chain of ordering edges (`autoloop.ir.effects`),
  except at the top level of a TF1-style graph (`Graph.tf1_style`);
- each output's recorded dtype is the op's and its shape at least as
  specific as the op's;
- a control-flow node (`autoloop.ir.control_flow`): its operand groups add
  up to its inputs; each capture group lists exactly what its sub-graph
  captured, and the sub-graph's last inputs are the matching placeholders;
  the op's own checks; and every sub-graph, verified the same way.
"""

from __future__ import annotations

from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects
from autoloop.ir.graph import Graph


class GraphError(AssertionError):
    """A graph that breaks the IR's invariants (always a bug in autoloop)."""


def verify(graph, infer_node) -> None:
    _verify(graph, infer_node)


def _verify(graph, infer_node) -> bool:
    """Check `graph`; whether it has effects (found on the way, not by walking sub-graphs again)."""
    defined: set[int] = set()  # ids of the nodes and values seen so far
    previous_effect = None
    for node in graph.nodes:
        for value in node.inputs:
            if value.graph is not graph:
                _fail(node, f"input {value.name} belongs to graph {value.graph.name!r}")
            if id(value) not in defined:
                _fail(node, f"input {value.name} is used before it is defined")
        for before in node.control_inputs:
            if before.graph is not graph or id(before) not in defined:
                _fail(node, f"ordering edge from {before.name}, which does not come earlier in this graph")
        _check_graph_attrs(node)
        op = control_flow.lookup(node.op)
        if op is not None:
            node_has_effects = _check_control_flow(node, op, infer_node)
        else:
            node_has_effects = has_effects(node)
            if node.op != "Placeholder":
                _check_outputs(node, infer_node(node))
        if node_has_effects:
            chained = not graph.tf1_style
            if chained and previous_effect is not None and previous_effect not in node.control_inputs:
                _fail(node, f"has effects but no ordering edge from the previous effectful node "
                            f"{previous_effect.name}")
            previous_effect = node
        defined.add(id(node))
        defined.update(id(v) for v in node.outputs)
    for value in graph.inputs:
        if value.node.op != "Placeholder" or value.graph is not graph:
            raise GraphError(f"graph {graph.name!r}: input {value.name} is not one of its placeholders")
    for value in graph.outputs:
        if id(value) not in defined:
            raise GraphError(f"graph {graph.name!r}: output {value.name} is not computed in it")
    for outer, inner in graph.captures.items():
        if inner not in graph.inputs:
            raise GraphError(f"graph {graph.name!r}: capture of {outer.name} is not an input")
    return previous_effect is not None


def _fail(node, problem: str):
    raise GraphError(f"node {node.name} ({node.op}) in graph {node.graph.name!r}: {problem}")


def _check_graph_attrs(node) -> None:
    """Graphs sit only in the attrs the node's control-flow op registers: the ones every walker visits."""
    declared = control_flow.subgraph_attrs(node.op)
    for key, attr in node.attrs.items():
        if isinstance(attr, Graph) and key not in declared:
            _fail(node, f"attr {key!r} holds a graph, but {node.op} registers sub-graphs only in "
                        f"{list(declared)} (autoloop.ir.control_flow)")


def _check_outputs(node, inferred) -> None:
    if len(inferred) != len(node.outputs):
        _fail(node, f"has {len(node.outputs)} outputs but its op gives {len(inferred)}")
    for value, (dtype, shape) in zip(node.outputs, inferred):
        if value.dtype is not dtype:
            _fail(node, f"output {value.index} is recorded as {value.dtype.name}, the op gives {dtype.name}")
        if not value.shape.is_subtype_of(shape):
            _fail(node, f"output {value.index} is recorded with shape {value.shape}, the op gives {shape}")


def _check_control_flow(node, op, infer_node) -> bool:
    """Check a control-flow node and its sub-graphs; whether they have effects."""
    try:
        groups = control_flow.operands(node)
    except (KeyError, ValueError) as error:
        _fail(node, f"its inputs do not match its operand layout: {error}; it has {len(node.inputs)} inputs, "
                    f"expected {_expected_inputs(node, op)}")
    for key in op.subgraphs:
        sub = node.attrs.get(key)
        if sub is None or not hasattr(sub, "captures"):
            _fail(node, f"attr {key!r} is not a sub-graph")
        if sub.parent is not node.graph:
            _fail(node, f"sub-graph {sub.name!r} does not have the node's graph as its parent")
    for group in op.capture_groups():
        sub = node.attrs[group.captures_of]
        captured = groups[group.name]
        if list(sub.captures) != list(captured):
            _fail(node, f"its {group.name} are not the outer values sub-graph {sub.name!r} captured "
                        f"({len(captured)} given, {len(sub.captures)} captured)")
        trailing = sub.inputs[len(sub.inputs) - len(captured):] if captured else []
        if list(sub.captures.values()) != list(trailing):
            _fail(node, f"the capture placeholders of sub-graph {sub.name!r} are not its last inputs")
    effects = [_verify(sub, infer_node) for sub in node.subgraphs()]
    for problem in op.verify(node):
        _fail(node, problem)
    _check_outputs(node, op.infer(node))
    return any(effects)


def _expected_inputs(node, op) -> str:
    sizes = []
    for group in op.operands:
        try:
            sizes.append(f"{group.size_of(node.attrs)} {group.name}")
        except KeyError:
            sizes.append(f"? {group.name} (no attr {group.size!r})")
    return " + ".join(sizes)
