"""What the commands print: results as numpy prints them, ``--explain`` lines (pictures: `autoloop.pictures`)."""

from __future__ import annotations

import linecache
import os
import types


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
    """One line per loop and branch of the user's function and of the functions it calls.

    Statements no trace reached say so; a called function with loops or
    branches that no trace reached gets one line saying that. `converted` is
    False for a function with ``autograph=False``: its statements all ran as
    plain Python while tracing.
    """
    from autoloop.compiler import parse
    filename = function.__code__.co_filename
    seen: dict = {}
    for decision in decisions:
        key = decision.location
        verdict = "staged as graph control flow" if decision.staged else "ran as Python"
        seen.setdefault(key, (decision.statement, set()))[1].add(f"{verdict} ({decision.reason})")
    unreached = "not reached while tracing" if converted else \
        "ran as Python (the function has autograph=False, so it is not converted)"
    for line, statement in _control_statements(parse.parse_function(function)):
        seen.setdefault((filename, line), (statement, {unreached}))
    if converted:
        _add_called_functions(parse, function, seen)
    lines = []
    for (file, line), (statement, verdicts) in sorted(seen.items(), key=lambda item: (item[0][0] != filename, item[0])):
        where = f"line {line}" if file == filename else f"{os.path.basename(file)}:{line}"
        source = linecache.getline(file, line).strip()
        lines.append(f"{where}: {statement} `{source}`: {'; '.join(sorted(verdicts))}")
    return "\n".join(lines) if lines else "no loops or branches"


def _control_statements(parsed):
    """``(line, kind)`` of every loop and ``if`` in a parsed function."""
    import gast
    kinds = {gast.While: "while loop", gast.For: "for loop", gast.If: "if statement"}
    for node in gast.walk(parsed.node):
        kind = kinds.get(type(node))
        if kind is not None:
            yield parsed.source.user_line(node), kind


def _add_called_functions(parse, function, seen):
    """Into `seen`: the loops and branches of the user functions `function` calls (by name, at any
    depth) that no trace reached, or one line for such a function that no trace reached at all."""
    done = {function}
    pending = [function]
    while pending:
        caller = pending.pop()
        for callee, call_line in _called_user_functions(parse, caller):
            if callee in done:
                continue
            done.add(callee)
            try:
                parsed = parse.parse_function(callee)
            except (parse.SourceNotFoundError, NotImplementedError, SyntaxError):
                continue
            statements = list(_control_statements(parsed))
            file = callee.__code__.co_filename
            if any((file, line) in seen for line, _ in statements):
                for line, statement in statements:
                    seen.setdefault((file, line), (statement, {"not reached while tracing"}))
                pending.append(callee)
            elif statements:
                where = "line" if file == caller.__code__.co_filename else os.path.basename(caller.__code__.co_filename) + ":"
                seen[(file, parsed.source.user_line(parsed.node))] = (
                    f"function {callee.__name__}", {f"called at {where} {call_line} but not reached while "
                                                    f"tracing, so its loops and branches are not listed"})


def _called_user_functions(parse, function):
    """``(function, line)`` for each call in `function` to a name that holds a user function."""
    import gast

    from autoloop.compiler import conversion
    parsed = parse.parse_function(function)
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
    for node in gast.walk(parsed.node):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
            continue
        name = node.func.id
        try:
            value = cells[name].cell_contents if name in cells else function.__globals__.get(name)
        except ValueError:  # an empty cell
            continue
        value = getattr(value, "python_function", value)  # an autoloop.Function
        if isinstance(value, types.FunctionType) and not conversion.is_library(value):
            yield value, parsed.source.user_line(node)


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


def format_batching(graph, filename=None, backend="numpy") -> str:
    """One line per batched scan in `graph` (a ``scan`` with ``cond_dims``, or a ``vectorized_map`` loop whose
    condition differs per entry): whether finished entries are dropped (compaction) or masked, and why, and
    on ``backend="jax"`` the form XLA runs (`autoloop.backends.jax.scan_form`); and one per loop that batching
    kept shared by every entry (a Jacobian's backward loop) or made to run an op without a batching rule once
    per entry."""
    lines = []
    for node in graph.walk():
        if node.op == "While" and node.attrs.get("_batched"):
            file, line = node.location or ("?", 0)
            where = f"line {line}" if file == filename else f"{os.path.basename(file)}:{line}"
            lines.append(f"{where}: while loop {node.name!r} `{linecache.getline(file, line).strip()}`: "
                         f"{node.attrs['_batched']}")
            continue
        if node.op != "Scan" or not node.attrs["cond_dims"].rank:
            continue
        file, line = node.location or ("?", 0)
        source = linecache.getline(file, line).strip()
        what = "vectorized_map while loop" if node.attrs.get("_batching") else "batched scan"
        carried = [name[len("captured "):] for name in node.attrs.get("names", ()) if name.startswith("captured ")]
        if node.attrs["compaction"] == "compact":
            text = "finished entries compacted (cond and body treat entries independently"
            text += f"; captured per-entry tensors carried with them: {', '.join(carried)})" if carried else ")"
        elif node.attrs.get("_masked_because"):
            text = f"finished entries masked, not compacted: {node.attrs['_masked_because']}"
        else:
            text = "finished entries masked (compaction=False)"
        if backend == "jax":
            from autoloop.backends.jax.scan_form import jax_form
            text += f"; on XLA {jax_form(node)[1]}"
        where = f"line {line}" if file == filename else f"{os.path.basename(file)}:{line}"
        lines.append(f"{where}: {what} {node.name!r} `{source}`: {text}")
    return "\n".join(lines)

