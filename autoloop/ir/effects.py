"""Which nodes have effects, and the one predicate everything asks.

A node *has effects* when running it does something besides computing its
outputs: printing, failing an assertion, later updating a variable. Such a
node is never pruned, even when no output needs it, and effects run in
program order. The order is data: when a graph gets an effectful node, the
node's ``control_inputs`` name the graph's previous effectful node, so the
effects of one graph form a chain that every executor (node by node,
generated code, dataflow) follows whatever order it picks for the rest.

A control-flow node (``While``, ``Cond``, ...) has effects when any node of
its sub-graphs has: a loop that prints is itself a print, in its graph's
chain.

The op library declares its effectful ops (``OpDef(..., stateful=True)``
calls `declare_effects`); ir/ never imports the op library.

    >>> has_effects(print_node), has_effects(add_node)
    (True, False)
"""

from __future__ import annotations


_EFFECTFUL_OPS: set[str] = set()


def declare_effects(op_name: str) -> None:
    """Record that nodes of op `op_name` have effects (called once per op, at registration)."""
    _EFFECTFUL_OPS.add(op_name)


def has_effects(node) -> bool:
    """Whether running `node` does more than compute its outputs; see the module docstring."""
    if node.op in _EFFECTFUL_OPS:
        return True
    return any(has_effects(inner) for sub in node.subgraphs() for inner in sub.nodes)


def last_effect(graph):
    """The last effectful node of `graph`'s node list, or None.

    Scans backwards, so building a graph that interleaves effects with other
    nodes costs time linear in its size.
    """
    for node in reversed(graph.nodes):
        if has_effects(node):
            return node
    return None


def chain_effects(graph) -> None:
    """Give each effectful node of `graph` an ordering edge from the previous one.

    Tracing does this as it adds nodes (`Graph.add_node`); a rewrite that
    makes a node effectful after the fact (an effect added to a loop body)
    calls this to restore the chain. Existing ordering edges are kept. The
    top level of a TF1-style graph (``tf1_style``) has no chain, as
    `Graph.add_node` gives it none: its effects are ordered by data and
    ``control_dependencies`` only (an edge from a variable's initializer
    would re-run it on every ``Session.run``).
    """
    if graph.tf1_style:
        return
    previous = None
    for node in graph.nodes:
        if not has_effects(node):
            continue
        if previous is not None and previous not in node.control_inputs:
            node.control_inputs = node.control_inputs + (previous,)
        previous = node
