"""The reference interpreter agrees with the compiled executor on every graph we can make.

Identical outputs (bit for bit), errors (type and message) and printed text
(`equivalence.assert_equivalent`) on: every op case of the op table, graphs
with effects and run-time errors, and generated programs of nested
while/if/for with break/continue/return, converted and traced. (Every graph
that the control-flow tests in tests/runtime_core trace is checked the same
way by their `mode` fixture.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import autoloop as al
from autoloop.errors import InvalidArgumentError
from autoloop.execute.interpreter import interpret
from tests.compiler.programs import make_function, programs
from tests.ops.op_cases import CASES

from .equivalence import assert_equivalent


def _arrays(args):
    return [np.asarray(a)[()] if np.ndim(a) == 0 else np.asarray(a) for a in args]


@pytest.mark.parametrize("case", CASES, ids=[f"{case.op}-{case.id}" for case in CASES])
def test_every_op_case(case):
    concrete = al.function(case.fn, autograph=False).get_concrete_function(*case.args)
    assert_equivalent(concrete.graph, _arrays(case.args))


# -- generated programs -------------------------------------------------------------------
INPUTS = [(-3, 2), (0, 1), (4, -2), (6, 6)]


@settings(max_examples=500, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(c_start="a - a"))
def test_generated_programs(source):
    function = al.function(make_function(source, "generated"))
    concrete = function.get_concrete_function(al.constant(0), al.constant(0))
    assert_equivalent(concrete.graph, *[[np.int32(a), np.int32(b)] for a, b in INPUTS])


# -- effects and run-time errors --------------------------------------------------------------
def _converted(fn, *args):
    return al.function(fn).get_concrete_function(*[al.constant(a) for a in args]).graph


def prints_and_asserts(n):
    total = 0
    for i in range(n):
        print("step", i)
        assert i < 3, "too many steps"
        if i % 2 == 0:
            total += i
    print("total", total)
    return total


def reads_maybe_unbound(x):
    if x > 0:
        y = x * 2
    return y


def reads_past_the_end(n):
    ta = al.TensorArray(al.int32, size=2, element_shape=[])
    return ta.read(n)


def checks_with_tf_assert(x):
    al.Assert(x > 0, ["x must be positive, got", x])
    return x


def reshapes(x, rows):
    return al.reshape(x, al.stack([rows, -1]))


@pytest.mark.parametrize("fn, runs, error", [
    (prints_and_asserts, [(3,), (0,)], None),
    (prints_and_asserts, [(5,)], AssertionError),
    (reads_maybe_unbound, [(2,)], None),
    (reads_maybe_unbound, [(-2,)], UnboundLocalError),
    (reads_past_the_end, [(1,)], None),
    (reads_past_the_end, [(5,)], InvalidArgumentError),
    (checks_with_tf_assert, [(-1,)], InvalidArgumentError),
    (reshapes, [(np.arange(6), 4)], InvalidArgumentError),
])
def test_effects_and_errors_are_the_same(fn, runs, error):
    graph = _converted(fn, *runs[0])
    outcomes = assert_equivalent(graph, *[_arrays(args) for args in runs])
    assert [type(o.error) for o in outcomes] == [error or type(None)] * len(runs)


def test_printed_text_and_the_failing_assert_come_in_program_order():
    graph = _converted(prints_and_asserts, 5)
    (outcome,) = assert_equivalent(graph, [np.int32(5)])
    assert outcome.stdout == "step 0\nstep 1\nstep 2\nstep 3\n"
    assert str(outcome.error) == "too many steps"


def test_maximum_iterations_and_nested_control_flow():
    def loops(n):
        def body(i, total):
            inner = al.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j), (0, total),
                                  maximum_iterations=2)[1]
            return i + 1, al.cond(inner > 10, lambda: inner - 10, lambda: inner)
        return al.while_loop(lambda i, t: i < n, body, (0, 0), maximum_iterations=7)

    graph = al.function(loops, autograph=False).get_concrete_function(al.constant(0)).graph
    outcomes = assert_equivalent(graph, *[[np.int32(n)] for n in (0, 3, 9)])
    assert [np.asarray(o.results[0]).tolist() for o in outcomes] == [0, 3, 7]


def test_the_interpreter_runs_kernels_not_templates_or_folded_constants():
    graph = al.function(lambda x: x + al.constant(2) * 3, autograph=False).get_concrete_function(
        al.constant(1)).graph
    folded = [n for n in graph.nodes if n.op == "Mul"]
    assert folded and folded[0].outputs[0].constant is not None
    folded[0].outputs[0].constant = np.int32(100)  # the compiled executor would use this
    assert interpret(graph, np.int32(1))[0] == 7
