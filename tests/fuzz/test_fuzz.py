"""The differential fuzzer in CI: a few hundred generated programs, converted vs plain Python.

`python scripts/fuzz.py --programs 10000 --seed S` runs the same fuzzer at
scale. The other tests here check the fuzzer itself: that it tells wrong
answers, internal errors and documented limitations apart, and that the
minimizer keeps a failure while shrinking the program.
"""

from __future__ import annotations

import pytest

import autoloop as al
from tests.fuzz import minimize, runner
from tests.fuzz.generator import Program, generate
from tests.fuzz.runner import INTERNAL, LIMITATION, OK, WRONG, Result, classify, run_program

PROGRAMS = 300
SEED = 0


@pytest.mark.fuzz
def test_generated_programs_match_python():
    failures = []
    for index in range(PROGRAMS):
        outcome = run_program(generate(SEED, index))
        bad = [m for m in outcome.modes if m.kind in (WRONG, INTERNAL)]
        if bad:
            failures.append((outcome, bad[0]))
    if failures:
        outcome, first = failures[0]
        small = minimize.minimize(outcome.program, first.mode, max_runs=150)
        pytest.fail(f"{len(failures)} of {PROGRAMS} programs (seed {SEED}) differ from Python. The first, "
                    f"program {outcome.program.name} with (a, b, xs) = {outcome.program.args}, minimized:\n"
                    f"{small}\nPython {outcome.expected.describe()}; {first.describe()}\n"
                    f"(python scripts/fuzz.py --seed {SEED} --index {outcome.program.index} shows it)")


def test_programs_are_deterministic_and_varied():
    assert generate(3, 7).source == generate(3, 7).source
    sources = [generate(3, index).source for index in range(200)]
    assert len(set(sources)) == 200
    text = "\n".join(sources)
    for construct in ("while ", "for ", " in range(", " in xs:", "elif ", "else:", "break", "continue",
                      "return ", " if ", " and ", " or ", "not ", "acc.append(", "len(acc)", "acc[-1]",
                      "al.stack(acc)", "lambda:", "def total", "try:", "finally:", "except ValueError",
                      "assert ", "raise ValueError", "helper(", "size = len", " not in "):
        assert construct in text, f"no generated program uses {construct!r}"


def _program(source, args=(1, 2, [3]), mixed=(0,)):
    return Program(source, seed=0, index=0, args=args, mixed=mixed)


def test_a_different_value_is_a_wrong_answer():
    assert classify(Result(value=3), Result(value=al.constant(3)), "tensor").kind == OK
    assert classify(Result(value=(3, [1, 2])), Result(value=(al.constant(3), [al.constant(1), al.constant(2)])),
                    "tensor").kind == OK
    assert classify(Result(value=3), Result(value=al.constant(4)), "tensor").kind == WRONG
    assert classify(Result(error=ValueError("x")), Result(value=4), "python").kind == WRONG


def test_errors_are_ok_internal_or_documented():
    expected_error = Result(error=UnboundLocalError("u"))
    assert classify(expected_error, Result(error=UnboundLocalError("u")), "tensor").kind == OK
    assert classify(Result(value=1), Result(error=TypeError("oops")), "tensor").kind == INTERNAL
    leaked = Result(error=UnboundLocalError("MaybeUndefined(name='u')"))
    assert classify(expected_error, leaked, "tensor").kind == INTERNAL


def test_an_error_python_replaced_in_a_finally_block_is_documented():
    try:
        try:
            raise AssertionError("first")
        finally:
            raise UnboundLocalError("from the finally block")
    except UnboundLocalError as error:
        python_error = error
    graph_error = Result(error=AssertionError("first"))
    assert classify(Result(error=python_error), graph_error, "tensor").kind == LIMITATION
    assert classify(Result(error=python_error), graph_error, "eager").kind == INTERNAL
    assert classify(Result(error=UnboundLocalError("no context")), graph_error, "tensor").kind == INTERNAL


def test_a_documented_limitation_needs_the_users_line():
    source = ("def helper(x, y):\n    return x\n\n"
              "def generated(a, b, xs):\n    c = 0\n    try:\n        while c < a:\n            c += 1\n"
              "    except ValueError:\n        pass\n    return c\n")
    outcome = run_program(_program(source))
    kinds = {m.mode: m.kind for m in outcome.modes}
    assert kinds == {"eager": OK, "python": OK, "mixed": LIMITATION, "tensor": LIMITATION}
    without_line = NotImplementedError("a try statement (line 3) cannot be converted")
    assert classify(Result(value=1), Result(error=without_line), "tensor").kind == INTERNAL


def test_the_minimizer_keeps_the_failure(monkeypatch):
    # A stand-in bug: the converted function is wrong whenever the program holds `d = 7`.
    real_run_mode = runner.run_mode

    def buggy(function, program, mode, timeout_s=runner.TIMEOUT_S):
        result = real_run_mode(function, program, mode, timeout_s)
        if "d = 7" in runner.inspect_source(function) and result.error is None:
            return Result(value=-1)
        return result
    monkeypatch.setattr(runner, "run_mode", buggy)
    source = ("def helper(x, y):\n    return x\n\n"
              "def generated(a, b, xs):\n    c = 0\n    d = 1\n    for v in xs:\n        c += v\n"
              "        if c > 100:\n            d = 7\n    c = c * 2\n    return c + d\n")
    small = minimize.minimize(_program(source), "tensor")
    assert "d = 7" in small
    assert "c = c * 2" not in small and "for v in xs" not in small
    assert run_program(_program(small)).modes[-1].kind == WRONG
