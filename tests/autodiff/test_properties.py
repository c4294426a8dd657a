"""Generated loop/branch programs: their gradients, traced and eager, match finite differences.

Programs are plain Python on float64 vectors `a`, `b`, `c`: assignments,
``if`` on a tensor condition, ``while`` loops whose trip count depends on the
data (bounded by a counter), and ``for`` loops over a tensor range, nested.
Traced, each statement on a tensor condition becomes a ``While``/``Cond``
whose gradient is built from the rules; eagerly the tape records the ops.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autoloop as al
from tests.compiler.programs import make_function

from .checks import check_gradient

VARIABLES = ("a", "b", "c")
EXPRESSIONS = ["al.sin({u})", "{u} * al.tanh({w})", "{u} + {w}", "al.tanh({u}) * 1.5", "{u} * 0.7 + 0.3",
               "al.maximum({u}, {w})", "al.sqrt({u} * {u} + 1.0)"]


@st.composite
def assignments(draw, indent):
    target = draw(st.sampled_from(VARIABLES))
    expression = draw(st.sampled_from(EXPRESSIONS)).format(u=draw(st.sampled_from(VARIABLES)),
                                                           w=draw(st.sampled_from(VARIABLES)))
    return [f"{indent}{target} = {expression}"]


@st.composite
def blocks(draw, indent, depth):
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        lines += draw(statements(indent, depth))
    return lines


@st.composite
def statements(draw, indent="    ", depth=0):
    kinds = ["assign"] + (["if", "while", "for"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    inner = indent + "    "
    if kind == "assign":
        return draw(assignments(indent))
    test = f"al.reduce_sum({draw(st.sampled_from(VARIABLES))}) > {draw(st.sampled_from(['-0.5', '0.0', '0.8']))}"
    if kind == "if":
        return ([f"{indent}if {test}:"] + draw(blocks(inner, depth + 1)) + [f"{indent}else:"] +
                draw(blocks(inner, depth + 1)))
    if kind == "while":
        counter = f"i{depth}"
        limit = draw(st.integers(0, 4))
        return ([f"{indent}{counter} = al.constant(0)", f"{indent}while {counter} < {limit} and {test}:"] +
                draw(blocks(inner, depth + 1)) + [f"{inner}{counter} += 1"])
    return [f"{indent}for _ in al.range({draw(st.integers(0, 3))}):"] + draw(blocks(inner, depth + 1))


@st.composite
def programs(draw):
    body = draw(blocks("    ", 0))
    return "\n".join(["def generated(a, b):", "    c = a * 0.5"] + body + ["    return a * b + c"]) + "\n"


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(), st.integers(0, 2 ** 16))
def test_generated_programs_differentiate_like_finite_differences(source, seed):
    function = make_function(source, "generated", {"al": al})
    rng = np.random.default_rng(seed)
    arguments = [rng.uniform(-1.5, 1.5, 2), rng.uniform(-1.5, 1.5, 2)]
    try:
        check_gradient(function, arguments, autograph=True, step=1e-7, rtol=1e-5, atol=1e-6)
    except AssertionError as error:
        raise AssertionError(f"{error}\n--- program ---\n{source}") from None
