"""Running a loop body again: its nodes copied into the graph being built.

Checkpointed loop gradients recompute forward iterations in the backward
pass. `inline(graph, inputs, outputs)` copies the nodes of `graph` that
`outputs` need into the current graph, with `graph`'s parameters replaced by
`inputs` and its captured values by what `captured(placeholder)` gives:
the same ops with the same attributes, so every value comes out bit for bit
as in the forward pass.

A replay must not repeat what the forward pass did to the world: prints and
assertions (effects without outputs) are left out, nested sub-graphs
included. An op with effects *and* outputs (a random draw) would give
different values on a second run, so it is an error; so is a variable read,
unless the function never updates that variable.
"""

from __future__ import annotations

import re

from autoloop.ir import context, control_flow, rewrite
from autoloop.ir.effects import chain_effects, has_effects
from autoloop.ir.graph import dependencies
from autoloop.ops.dispatch import graph_value, infer_node
from autoloop.ops.location import format_location
from autoloop.ops.v1_ops import updates, variable_of
from autoloop.tensor import Tensor


def inline(graph, inputs: dict, outputs, captured, variable_reads: bool = False) -> list:
    """`outputs` (values of `graph`) computed in the current graph; see the module docstring.

    `inputs` maps parameters of `graph` to Tensors; `captured(placeholder)`
    gives the Tensor for a captured value. Returns Tensors. With
    `variable_reads`, variables are read where the copy runs (a user's
    gradient function: not a replay, so a changed value is the one wanted).
    """
    target = context.current_graph()
    needed = dependencies([v.node for v in outputs], ordering=False)  # effects are not replayed
    values: dict = {}

    def value_of(value):
        if value not in values:
            if value in inputs:
                values[value] = graph_value(target, inputs[value])
            else:
                values[value] = graph_value(target, captured(value))
        return values[value]

    for node in graph.nodes:
        if id(node) not in needed or node.op == "Placeholder":
            continue
        _refuse_replaying(node, variable_reads)
        mapped = [value_of(v) for v in node.inputs]
        attrs = dict(node.attrs)
        for key, sub in node.attrs.items():
            if hasattr(sub, "captures") and hasattr(sub, "nodes"):
                attrs[key] = _copy_subgraph(sub, values, value_of, target, variable_reads)
        copy = target.add_node(node.op, mapped, attrs, [(v.dtype, v.shape) for v in node.outputs],
                               location=node.location, name=re.sub(r"_\d+$", "", node.name))
        copy.tuple_result = node.tuple_result
        for old, new, (_, shape) in zip(node.outputs, copy.outputs, _inferred(copy)):
            new.constant = old.constant
            new.shape = new.shape.merge_with(shape)  # the inputs given may be more specific than the graph's
            values[old] = new
    return [Tensor(value=value_of(v)) for v in outputs]


def _inferred(node) -> list:
    """``(dtype, shape)`` per output of `node`, by its op's rule, from its inputs as they are now."""
    declared = control_flow.lookup(node.op)
    return declared.infer(node) if declared is not None else infer_node(node)


def _copy_subgraph(sub, values, value_of, target, variable_reads):
    for outer in sub.captures:
        value_of(outer)  # the copy's captures must be values of the target graph
    copy = rewrite.clone(sub, dict(values), parent=target)
    _drop_effects(copy, variable_reads)
    return copy


def _drop_effects(graph, variable_reads) -> None:
    """Remove prints and assertions from `graph` and its sub-graphs; refuse other effects."""
    for node in graph.nodes:
        for sub in node.subgraphs():
            _drop_effects(sub, variable_reads)
    kept = []
    for node in graph.nodes:
        if has_effects(node) and not node.outputs:
            continue
        _refuse_replaying(node, variable_reads)
        kept.append(node)
    dropped = {id(n) for n in graph.nodes} - {id(n) for n in kept}
    for node in kept:
        node.control_inputs = tuple(n for n in node.control_inputs if id(n) not in dropped)
    graph.nodes = kept
    chain_effects(graph)


def _refuse_replaying(node, variable_reads: bool) -> None:
    if node.op == "ReadVariableOp":
        if variable_reads:
            return
        root = node.graph
        while root.parent is not None:
            root = root.parent
        if not updates(root, variable_of(node.inputs[0])):
            return  # the function never updates the variable: a second read gives the same value
        raise ValueError(
            f"differentiating this loop recomputes its iterations, but the loop body reads a variable at "
            f"{format_location(node.location)} that the function also updates, so a second read may see another "
            f"value: read it once before the loop (value = variable.read_value()) and use that value in the body")
    if node.outputs and has_effects(node) and not any(sub for sub in node.subgraphs()):
        raise ValueError(
            f"checkpointing recomputes loop iterations, but the loop body's {node.op} at "
            f"{format_location(node.location)} has effects (a random draw gives new numbers each time it "
            f"runs): draw the numbers before the loop, or differentiate the loop without checkpoint")

