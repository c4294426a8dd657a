"""Helpers for compiler tests: functions from source text, and a hypothesis
strategy for small programs of nested while/if/for with break/continue/return.
"""

from __future__ import annotations

import itertools
import linecache
import textwrap

from hypothesis import strategies as st

_serial = itertools.count()


def make_function(source: str, name: str | None = None, namespace: dict | None = None):
    """Define the functions in `source` as if from a file; return the one named `name`."""
    source = textwrap.dedent(source)
    filename = f"<test source {next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    globals_ = {"__name__": "test_programs"}
    globals_.update(namespace or {})
    exec(compile(source, filename, "exec"), globals_)
    if name is None:
        name = next(k for k, v in globals_.items() if callable(v) and getattr(v, "__code__", None)
                    and v.__code__.co_filename == filename)
    return globals_[name]


VARIABLES = ("a", "b", "c")


@st.composite
def expressions(draw):
    left = draw(st.sampled_from(VARIABLES))
    op = draw(st.sampled_from(["+", "-", "*"]))
    right = draw(st.one_of(st.sampled_from(VARIABLES), st.integers(-3, 3).map(str)))
    return f"({left} {op} {right}) % 17"


@st.composite
def conditions(draw):
    left = draw(st.sampled_from(VARIABLES))
    op = draw(st.sampled_from(["<", ">", "==", "!=", "<="]))
    right = draw(st.one_of(st.sampled_from(VARIABLES), st.integers(-2, 8).map(str)))
    condition = f"{left} {op} {right}"
    if draw(st.booleans()) and draw(st.booleans()):
        other = draw(st.sampled_from(VARIABLES))
        joiner = draw(st.sampled_from(["and", "or"]))
        condition = f"{condition} {joiner} {other} % 2 == 0"
    if draw(st.integers(0, 5)) == 0:
        condition = f"not ({condition})"
    return condition


@st.composite
def blocks(draw, depth, in_loop, counters):
    count = draw(st.integers(1, 3))
    lines = []
    for _ in range(count):
        lines.extend(draw(statements(depth, in_loop, counters)))
        if lines and lines[-1].strip() in ("break", "continue") or lines[-1].strip().startswith("return"):
            break
    return lines


@st.composite
def statements(draw, depth, in_loop, counters):
    kinds = ["assign", "assign", "augassign"]
    if depth < 3:
        kinds += ["if", "while", "for"]
    if in_loop:
        kinds += ["break", "continue"]
    kinds += ["return"]
    kind = draw(st.sampled_from(kinds))
    variable = draw(st.sampled_from(VARIABLES))
    if kind == "assign":
        return [f"{variable} = {draw(expressions())}"]
    if kind == "augassign":
        return [f"{variable} += {draw(st.integers(1, 3))}"]
    if kind in ("break", "continue"):
        return [kind]
    if kind == "return":
        return [f"return {draw(expressions())}"]
    if kind == "if":
        lines = [f"if {draw(conditions())}:"]
        lines += ["    " + line for line in draw(blocks(depth + 1, in_loop, counters))]
        if draw(st.booleans()):
            lines.append("else:")
            lines += ["    " + line for line in draw(blocks(depth + 1, in_loop, counters))]
        return lines
    counter = f"k{next(counters)}"
    if kind == "while":
        limit = draw(st.integers(0, 4))
        lines = [f"{counter} = 0", f"while {counter} < {limit} and ({draw(conditions())}):",
                 f"    {counter} += 1"]
    else:
        lines = [f"for {counter} in range({draw(st.integers(0, 4))}):"]
    body = draw(blocks(depth + 1, True, counters))
    lines += ["    " + line for line in body]
    return lines


@st.composite
def programs(draw, c_start="0"):
    """A function ``generated(a, b)``; `c_start` initialises ``c`` (``a - a`` keeps it a tensor)."""
    counters = itertools.count()
    body = draw(blocks(0, False, counters))
    lines = ["def generated(a, b):", f"    c = {c_start}"] + ["    " + line for line in body]
    lines.append("    return a + 2 * b + 3 * c")
    return "\n".join(lines) + "\n"
