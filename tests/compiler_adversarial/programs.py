"""A hypothesis strategy for small random programs over int variables.

Programs nest ``while`` (with ``else``), ``if``/``elif``/``else``, ``for`` over
``range`` (tensor or Python bounds, positive or negative steps) with ``break``,
``continue`` and ``return`` at any depth. Every ``while`` has its own counter,
incremented first thing in its body, so every program terminates in a few
dozen steps. Variable ``u`` starts unbound; with ``unbound=True`` expressions may read it
where no path assigned it, which must then raise UnboundLocalError both in
Python and converted (and must not raise where Python does not).
"""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

BOUND = ("a", "b", "c")  # always bound
VARIABLES = BOUND + ("u",)  # u: maybe unbound


@st.composite
def operands(draw, allow_unbound):
    choices = VARIABLES if allow_unbound and draw(st.integers(0, 5)) == 0 else BOUND
    return draw(st.one_of(st.sampled_from(choices), st.integers(-3, 5).map(str)))


@st.composite
def expressions(draw, unbound):
    left = draw(st.sampled_from(BOUND))
    op = draw(st.sampled_from(["+", "-", "*"]))
    right = draw(operands(unbound))
    return f"({left} {op} {right}) % 13"


@st.composite
def conditions(draw, unbound):
    left = draw(st.sampled_from(BOUND))
    op = draw(st.sampled_from(["<", ">", "==", "!=", "<=", ">="]))
    right = draw(operands(unbound))
    condition = f"{left} {op} {right}"
    shape = draw(st.integers(0, 7))
    if shape == 0:
        condition = f"{condition} and {draw(st.sampled_from(BOUND))} % 2 == 0"
    elif shape == 1:
        condition = f"{condition} or {draw(st.sampled_from(BOUND))} % 3 == 1"
    elif shape == 2:
        condition = f"not ({condition})"
    elif shape == 3:
        condition = f"0 <= {draw(st.sampled_from(BOUND))} < {draw(st.integers(1, 8))}"
    return condition


@st.composite
def blocks(draw, depth, in_loop, counters, unbound):
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        lines.extend(draw(statements(depth, in_loop, counters, unbound)))
        last = lines[-1].strip()
        if last in ("break", "continue") or last.startswith("return"):
            break
    return lines


def _indent(lines):
    return ["    " + line for line in lines]


@st.composite
def statements(draw, depth, in_loop, counters, unbound):
    kinds = ["assign", "assign", "augassign", "unbound", "swap", "ifexp"]
    if depth < 3:
        kinds += ["if", "if", "while", "for"]
    if in_loop:
        kinds += ["break", "continue"]
    kinds += ["return"]
    kind = draw(st.sampled_from(kinds))
    variable = draw(st.sampled_from(BOUND))
    if kind == "assign":
        return [f"{variable} = {draw(expressions(unbound))}"]
    if kind == "swap":
        return ["a, b = b, (a + c) % 13"]
    if kind == "ifexp":
        return [f"{variable} = {draw(expressions(unbound))} if {draw(conditions(unbound))} else "
                f"{draw(expressions(unbound))}"]
    if kind == "unbound":
        return [f"u = {draw(expressions(unbound))}"]
    if kind == "augassign":
        return [f"{variable} {draw(st.sampled_from(['+=', '-=']))} {draw(st.integers(1, 3))}"]
    if kind in ("break", "continue"):
        return [kind]
    if kind == "return":
        return [f"return {draw(expressions(unbound))}"]
    if kind == "if":
        inner = blocks(depth + 1, in_loop, counters, unbound)
        lines = [f"if {draw(conditions(unbound))}:"] + _indent(draw(inner))
        if draw(st.booleans()):
            lines += [f"elif {draw(conditions(unbound))}:"] + _indent(draw(inner))
        if draw(st.booleans()):
            lines += ["else:"] + _indent(draw(inner))
        return lines
    counter = f"k{next(counters)}"
    if kind == "while":
        limit = draw(st.integers(0, 3))
        # `a - a` keeps the counter a tensor when `a` is one (a staged loop).
        lines = [f"{counter} = a - a", f"while {counter} < {limit} and ({draw(conditions(unbound))}):",
                 f"    {counter} += 1"]
    else:
        bounds = draw(st.sampled_from([
            "range({v} % 4)", "range({n})", "range(1, {v} % 5)", "range({v} % 4, -1, -1)",
            "range({n}, {v} % 3 - 1, -2)", "[2, -1, {n}]"]))
        bounds = bounds.format(v=draw(st.sampled_from(BOUND)), n=draw(st.integers(0, 3)))
        lines = [f"for {counter} in {bounds}:"]
        if draw(st.booleans()):
            lines.append(f"    {draw(st.sampled_from(BOUND))} = ({draw(st.sampled_from(BOUND))} + {counter}) % 13")
    lines += _indent(draw(blocks(depth + 1, True, counters, unbound)))
    if draw(st.integers(0, 3)) == 0:
        lines += ["else:"] + _indent(draw(blocks(depth + 1, in_loop, counters, unbound)))
    return lines


@st.composite
def programs(draw, unbound=False):
    """Source of ``def generated(a, b):``; with `unbound`, expressions may read ``u``."""
    counters = itertools.count()
    body = draw(blocks(0, False, counters, unbound))
    lines = ["def generated(a, b):", "    c = b - b",
             "    if b is None:  # a Python test: makes u a local, never bound here",
             "        u = 0"] + _indent(body)
    lines.append("    return a + 2 * b + 3 * c")
    return "\n".join(lines) + "\n"
