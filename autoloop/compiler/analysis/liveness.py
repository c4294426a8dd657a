"""Liveness: which names may be read before being overwritten.

Computes `live_in[node]` and `live_out[node]` for every CFG node: the
composite names (and ``name.*`` whole-object markers) whose current value
some path from that point may read. Needs scopes (effects) and the cfg.
Nothing is live at the function's exit: writes to globals, nonlocals and
object attributes that outlive the function are handled by the passes, not
by liveness.
"""

from __future__ import annotations

from autoloop.compiler.analysis.cfg import CFG, EXIT
from autoloop.compiler.analysis.names import WHOLE


def _killed(name: str, kills) -> bool:
    """Whether overwriting `kills` overwrites `name` too (``x`` kills ``x.a``)."""
    bare = name[:-len(WHOLE)] if name.endswith(WHOLE) else name
    if bare in kills:
        return True
    if bare.isidentifier():  # only an exact kill overwrites a plain name
        return False
    for killed in kills:
        if bare == killed or bare.startswith(killed + ".") or bare.startswith(killed + "["):
            return True
    return False


def compute(cfg: CFG, effects) -> tuple[dict, dict]:
    """``(live_in, live_out)`` for every node of `cfg`."""
    live_in: dict = {node: frozenset() for node in cfg.successors}
    live_out = dict(live_in)
    work = list(reversed(cfg.order))
    pending = set(work)
    while work:
        node = work.pop()
        pending.discard(node)
        out: set = set()
        for successor in cfg.successors[node]:
            out |= live_in[successor]
        node_effects = effects.get(node)
        if node_effects is None:  # ENTRY / EXIT
            new_in = frozenset(out)
        elif not node_effects.kills:
            new_in = frozenset(out | node_effects.reads)
        else:
            kills = node_effects.kills
            new_in = frozenset({n for n in out if not _killed(n, kills)} | node_effects.reads)
        live_out[node] = frozenset(out)
        if new_in != live_in[node]:
            live_in[node] = new_in
            for predecessor in cfg.predecessors[node]:
                if predecessor not in pending:
                    pending.add(predecessor)
                    work.append(predecessor)
    live_in[EXIT] = frozenset()
    return live_in, live_out
