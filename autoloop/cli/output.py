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
