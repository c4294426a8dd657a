"""Definedness: which local names are bound at each point.

Computes, for every CFG node, `defined_in` (locals bound on every path that
reaches it) and `maybe_defined_in` (locals bound on at least one path), and
the same after the node (`defined_out`, `maybe_defined_out`). Only plain
local names are tracked (parameters, and names the function assigns that
are not declared global or nonlocal). Needs scopes and the cfg.
"""

from __future__ import annotations

from autoloop.compiler.analysis.cfg import CFG, ENTRY


def compute(cfg: CFG, effects, local_names, parameters):
    """``(defined_in, maybe_defined_in, defined_out, maybe_defined_out)``."""
    everything = frozenset(local_names)
    defined_in, maybe_in = {}, {}
    defined_out = {node: everything for node in cfg.successors}
    maybe_out: dict = {node: frozenset() for node in cfg.successors}
    defined_out[ENTRY] = maybe_out[ENTRY] = frozenset(parameters)
    work = list(cfg.order)  # created last = earliest in the program: popped first
    pending = set(work)
    while work:
        node = work.pop()
        pending.discard(node)
        predecessors = cfg.predecessors[node]
        if predecessors:
            must = frozenset.intersection(*(defined_out[p] for p in predecessors))
            may = frozenset().union(*(maybe_out[p] for p in predecessors))
        else:  # unreachable
            must, may = everything, frozenset()
        defined_in[node], maybe_in[node] = must, may
        node_effects = effects.get(node)
        if node_effects is not None:
            bound = {n for n in node_effects.kills if n in everything} - node_effects.deletes
            must = (must | bound) - node_effects.deletes
            may = (may | bound) - node_effects.deletes
        if must != defined_out[node] or may != maybe_out[node]:
            defined_out[node], maybe_out[node] = must, may
            for successor in cfg.successors[node]:
                if successor not in pending:
                    pending.add(successor)
                    work.append(successor)
    return defined_in, maybe_in, defined_out, maybe_out
