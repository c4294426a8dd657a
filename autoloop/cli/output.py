"""What the commands print: results as numpy prints them, ``--explain`` lines (pictures: `autoloop.pictures`)."""

from __future__ import annotations

import linecache
import os


def format_result(result) -> str:
    import numpy as np

    import autoloop
    if isinstance(result, autoloop.Tensor):
        return str(np.asarray(result.numpy()))
    if isinstance(result, (list, tuple)):
        inner = ", ".join(format_result(item) for item in result)
        return f"({inner})" if isinstance(result, tuple) else f"[{inner}]"
    if isinstance(result, dict):
        return "{" + ", ".join(f"{k!r}: {format_result(v)}" for k, v in result.items()) + "}"
    return str(result)


def format_explanation(function, decisions, converted=True) -> str:
    """One line per loop and branch of the user's function (and of functions it called).

    `converted` is False for a function with ``autograph=False``: its
    statements all ran as plain Python while tracing.
    """
    from autoloop.compiler import parse
    filename = function.__code__.co_filename
    seen = {}
    for decision in decisions:
        key = decision.location
        verdict = "staged as graph control flow" if decision.staged else "ran as Python"
        seen.setdefault(key, (decision.statement, set()))[1].add(f"{verdict} ({decision.reason})")
    unreached = "not reached while tracing" if converted else \
        "ran as Python (the function has autograph=False, so it is not converted)"
    for line, statement in _control_statements(parse, function):
        seen.setdefault((filename, line), (statement, {unreached}))
    lines = []
    for (file, line), (statement, verdicts) in sorted(seen.items(), key=lambda item: (item[0][0] != filename, item[0])):
        where = f"line {line}" if file == filename else f"{os.path.basename(file)}:{line}"
        source = linecache.getline(file, line).strip()
        lines.append(f"{where}: {statement} `{source}`: {'; '.join(sorted(verdicts))}")
    return "\n".join(lines) if lines else "no loops or branches"


def _control_statements(parse, function):
    import gast
    parsed = parse.parse_function(function)
    kinds = {gast.While: "while loop", gast.For: "for loop", gast.If: "if statement"}
    for node in gast.walk(parsed.node):
        kind = kinds.get(type(node))
        if kind is not None:
            yield parsed.source.user_line(node), kind


def format_gradients(graph, filename=None) -> str:
    """One line per loop a gradient in `graph` went through: how many values its backward pass
    saves per iteration, and its checkpoints (empty when nothing was differentiated). Lines in
    `filename` (the function's file) are ``line N``, as `format_explanation` writes them."""
    lines = []
    for node in graph.walk():
        record = node.attrs.get("_gradient") if node.op == "While" else None
        if record is None:
            continue
        file, line = node.location or ("?", 0)
        source = linecache.getline(file, line).strip()
        names = ", ".join(sorted({v.node.op if v.node.op != "Placeholder" else "a loop variable" for v in record.saved}))
        saved = f"{len(record.saved)} value{'s' if len(record.saved) != 1 else ''} per iteration" + \
            (f" ({names})" if names else "")
        if record.schedule is not None:
            text = f"differentiated with checkpoints ({record.schedule}); recomputed stretches save {saved}"
        else:
            text = f"differentiated; its backward pass saves {saved}"
        where = f"line {line}" if file == filename else f"{os.path.basename(file)}:{line}"
        lines.append(f"{where}: while loop {node.name!r} `{source}`: {text}")
    return "\n".join(lines)

