"""The differential fuzzer in CI: generated programs in every mode, converted vs plain Python.

`python scripts/fuzz.py --mode M --programs 10000 --seed S` runs the same
fuzzer at scale. CI runs a few hundred programs per mode (fewer on JAX,
which compiles each with XLA), about 90 s in all on 2 cores. The other tests
here check the fuzzer itself: that it tells wrong answers, internal errors
and documented limitations apart, that its modes catch what they are for,
and that the minimizer keeps a failure while shrinking the program.
"""

from __future__ import annotations

import pytest

import autoloop as al
from tests.fuzz import gradients, minimize, runner
from tests.fuzz.generator import Program, generate
from tests.fuzz.runner import INTERNAL, LIMITATION, OK, RUNS, WRONG, Result, classify, run_program

SEED = 0
# mode -> (the runs CI takes, how many programs): about 60 s of CPU in all.
CI = {
    "numpy": (RUNS["numpy"], 300),
    "interpreter": (RUNS["interpreter"], 300),
    "session": (RUNS["session"], 300),
    "object": (RUNS["object"], 100),
    "jax": (("jax tensor",), 60),
    "gradient": (("numpy", "numpy checkpoint", "eager tape"), 60),
    "gradient jax": (("jax", "jax checkpoint"), 15),
}
# Programs of seed SEED that fail in CI's runs, each with the reason; any failure not listed fails the test.
KNOWN_FAILURES: dict = {}


def outcome_of(mode, index, runs):
    if mode.startswith("gradient"):
        return gradients.run_gradients(gradients.generate(SEED, index), runs)
    return run_program(generate(SEED, index), runs)


@pytest.mark.fuzz
@pytest.mark.parametrize("mode", list(CI))
def test_generated_programs_match_python(mode):
    if "jax" in mode:
        pytest.importorskip("jax")
    runs, programs = CI[mode]
    known = KNOWN_FAILURES.get(mode, {})
    failures = []
    for index in range(programs):
        outcome = outcome_of(mode, index, runs)
        bad = [m for m in outcome.modes if m.kind in (WRONG, INTERNAL)]
        if bad and index not in known:
            failures.append((outcome, bad[0]))
    if not failures:
        return
    outcome, first = failures[0]
    shown = outcome.program.source
    if not mode.startswith("gradient"):
        shown = minimize.minimize(outcome.program, first.mode, max_runs=150)
    pytest.fail(f"{len(failures)} of {programs} programs (seed {SEED}) fail in mode {mode}: "
                f"{sorted(o.program.index for o, _ in failures)}. The first, program {outcome.program.name} "
                f"with (a, b, xs) = {outcome.program.args}{', minimized' if shown != outcome.program.source else ''}:\n"
                f"{shown}\nPython {outcome.expected.describe()}; {first.describe()} {first.signature}\n"
                f"(python scripts/fuzz.py --mode {mode.split()[0]} --seed {SEED} --index {outcome.program.index} "
                f"shows it)")


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


def test_the_interpreter_mode_runs_the_reference_interpreter(monkeypatch):
    graphs = []
    real = runner.interpret

    def counting(graph, *inputs):
        graphs.append(graph)
        return real(graph, *inputs)
    monkeypatch.setattr(runner, "interpret", counting)
    source = ("def helper(x, y):\n    return x\n\n"
              "def generated(a, b, xs):\n    c = 0\n    acc = []\n    for v in xs:\n        c += v * a\n"
              "        acc.append(c)\n    return c + b, acc\n")
    outcome = run_program(_program(source, args=(2, 1, [3, 4])), ("interpreter", "session"))
    assert [m.kind for m in outcome.modes] == [OK, OK]
    assert graphs  # the interpreter ran the trace
    assert runner.ConcreteFunction.compile is not counting  # and the executor is put back


def test_the_object_mode_catches_a_stale_trace(monkeypatch):
    source = "def helper(x, y):\n    return x\n\ndef generated(a, b, xs):\n    return a * b + len(xs)\n"
    program = _program(source, args=(2, 3, [1, 1]))
    expected = runner._call(runner.load(source), (2, 3, [1, 1]))
    assert runner.run_with_config(source, program, "plain object", expected).kind == OK
    # The rule before it was fixed: a plain object keyed by its identity alone.
    monkeypatch.setattr(al.arguments, "python_key", lambda value, ancestors=(): ("py-id", id(value)))
    assert runner.run_with_config(source, program, "plain object", expected).kind == WRONG


def test_the_gradient_mode_checks_the_tape_against_finite_differences(monkeypatch):
    source = "def generated(a, b, xs):\n    return al.sin(a) * b + al.reduce_sum(xs * xs)\n" + gradients.GRADIENT_OF
    program = Program(source, seed=0, index=0, args=(0.3, -0.7, [0.5, 1.5]), mixed=())
    assert [m.kind for m in gradients.run_gradients(program, ("numpy", "eager tape")).modes] == [OK, OK]
    # A wrong rule, which the eager tape and traced gradients share: only finite differences see it.
    from autoloop.ops import registry
    sin = registry.get("Sin")
    right_rule = sin.gradient
    monkeypatch.setattr(sin, "gradient", lambda *args, **kwargs: [2 * g for g in right_rule(*args, **kwargs)])
    assert [m.kind for m in gradients.run_gradients(program, ("numpy", "eager tape")).modes] == [OK, WRONG]


def test_a_kink_exactly_at_the_point_is_not_checked_against_finite_differences():
    # maximum(a, 0.3) at a = 0.3: the tape takes the first argument's slope (1, TensorFlow's rule), central
    # differences of every step give the mean of the two (0.5) and agree with each other (seed 517, program 112).
    source = "def generated(a, b, xs):\n    return al.maximum(a, 0.60 * 0.5) * b + al.reduce_sum(xs)\n"
    program = Program(source + gradients.GRADIENT_OF, seed=0, index=0, args=(0.3, 0.8, [0.5]), mixed=())
    assert [m.kind for m in gradients.run_gradients(program, ("numpy", "eager tape")).modes] == [OK, OK]


def test_a_gradient_program_without_loops_is_traced_once_for_both_of_its_runs(monkeypatch):
    # Checkpointing changes only loops: without any, the checkpoint run calls the same function again
    # (its cached trace), and with one it gets a function and a trace of its own.
    made = []
    real_function = al.function

    def recording(*args, **kwargs):
        made.append(real_function(*args, **kwargs))
        return made[-1]
    monkeypatch.setattr(al, "function", recording)
    straight = "def generated(a, b, xs):\n    return al.sin(a) * b + al.reduce_sum(xs * xs)\n"
    looped = ("def generated(a, b, xs):\n    c = a\n    for v in xs:\n        c = al.sin(c) * v\n"
              "    return c * b\n")
    # `checkpointed` regenerates a generated program: for these, the option first in the loop body
    monkeypatch.setattr(gradients, "checkpointed", lambda p: p.source.replace(
        "    for v in xs:\n", f"    for v in xs:\n        {gradients.CHECKPOINT}\n"))
    for source, functions in ((straight, 1), (looped, 2)):
        made.clear()
        program = Program(source + gradients.GRADIENT_OF, seed=0, index=0, args=(0.3, -0.7, [0.5, 1.5]), mixed=())
        outcome = gradients.run_gradients(program, ("numpy", "numpy checkpoint"))
        assert [m.kind for m in outcome.modes] == [OK, OK]
        assert len(made) == functions
        assert sum(f.experimental_get_tracing_count() for f in made) == functions
