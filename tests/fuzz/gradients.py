"""The fuzzer's gradient mode: float programs whose traced gradients must equal the eager tape's.

`generate(seed, index)` writes ``generated(a, b, xs)`` over float64 tensors
(``a``, ``b`` scalars, ``xs`` a vector): smooth assignments, ``if`` on tensor
conditions, ``while`` loops with a data-dependent condition (bounded by a
counter), `while_loop` calls, ``for`` over ``xs`` and over ``range``, ``break``/``continue``
under conditions, a list appended to and stacked, nested at random. The
program returns a scalar, and ``gradient_of(a, b, xs)`` (added to the
module) returns it with its `GradientTape` gradient with respect to
``a``, ``b`` and ``xs``.

`run_gradients` runs ``gradient_of``:

- eagerly, unconverted on eager tensors: the eager tape (``eager tape``),
  checked against central finite differences where the function is smooth
  (two step sizes agree, and so do the one-sided differences on either
  side: a kink exactly at the point fools the first test alone), to 1e-5;
- traced with ``@autoloop.function`` on ``numpy`` and ``jax``, with and
  without checkpointing (``set_loop_options(checkpoint=True)`` as the first
  statement of every loop, ``checkpoint=True`` in every `while_loop` call):
  value and gradients must equal the eager tape's to 1e-9 (relative).

A gradient the tape returns as None (no path from that source) counts as
zeros.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

import autoloop as al

from tests.fuzz.generator import Program
from tests.fuzz import runner
from tests.fuzz.runner import INTERNAL, OK, WRONG, ModeOutcome, Outcome, Result

RUNS = runner.RUNS["gradient"]
GRADIENT_OF = """

def gradient_of(a, b, xs):
    with al.GradientTape() as tape:
        tape.watch(a)
        tape.watch(b)
        tape.watch(xs)
        y = generated(a, b, xs)
    return y, tape.gradient(y, [a, b, xs])
"""
CHECKPOINT = "al.autograph.experimental.set_loop_options(checkpoint=True)"
CHECKPOINT_ARGUMENT = "CHECKPOINT_ARGUMENT"  # in a while_loop call: None, or True when checkpointed
TRACED_RTOL, FD_RTOL, FD_ATOL = 1e-9, 1e-5, 1e-6

# Smooth, bounded updates: {u} and {w} are variables or loop values.
UPDATES = ["al.tanh({u} * 0.9 + {w} * 0.4)", "al.sin({u} + {w}) * 0.8", "{u} * 0.7 + {w} * 0.3",
           "{u} + 0.1 * {w} * {w}", "al.sqrt({u} * {u} + 1.0) - 0.5", "al.maximum({u}, {w} * 0.5)",
           "{u} * al.cos({u} - {w})", "al.exp(-{u} * {u}) + {w} * 0.2"]
CONDITIONS = ["{u} > {w}", "{u} < 0.3", "{u} * {w} > 0.1", "al.sin({u}) > {w} * 0.5"]


@dataclasses.dataclass
class _Writer:
    rng: random.Random
    budget: int
    counter: int = 0

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def value(self, names):
        return self.rng.choice(names) if self.rng.random() < 0.85 else f"{self.rng.uniform(-1, 1):.2f}"

    def update(self, names):
        return self.rng.choice(UPDATES).format(u=self.rng.choice(names), w=self.value(names))

    def condition(self, names):
        return self.rng.choice(CONDITIONS).format(u=self.rng.choice(names), w=self.value(names))

    def block(self, names, indent, depth, in_loop):
        lines = []
        for _ in range(self.rng.randint(1, 3)):
            if self.budget <= 0 and lines:
                break
            lines += self.statement(names, indent, depth, in_loop)
        return lines

    def statement(self, names, indent, depth, in_loop):
        self.budget -= 1
        kinds = {"assign": 5, "append": 1, "while_loop": 0.7}
        if depth < 3 and self.budget > 0:
            kinds.update({"if": 3, "while": 2, "for_xs": 2, "for_range": 1})
        if in_loop:
            kinds.update({"break": 0.5, "continue": 0.5})
        kind = self.rng.choices(list(kinds), weights=list(kinds.values()))[0]
        target = self.rng.choice(["c", "d"])
        if kind == "assign":
            return [f"{indent}{target} = {self.update(names)}"]
        if kind == "append":
            return [f"{indent}acc.append({self.update(names)})"]
        if kind == "while_loop":  # the functional form, its checkpoint option an argument
            return [f"{indent}c, d = al.while_loop(lambda c, d: {self.condition(['c', 'd'])}, "
                    f"lambda c, d: ({self.update(['c', 'd', 'a'])}, {self.update(['c', 'd', 'b'])}), (c, d), "
                    f"maximum_iterations={self.rng.randint(1, 4)}, checkpoint={CHECKPOINT_ARGUMENT})"]
        if kind in ("break", "continue"):
            return [f"{indent}if {self.condition(names)}:", f"{indent}    {kind}"]
        inner = indent + "    "
        if kind == "if":
            lines = [f"{indent}if {self.condition(names)}:"] + self.block(names, inner, depth + 1, in_loop)
            if self.rng.random() < 0.5:
                lines += [f"{indent}else:"] + self.block(names, inner, depth + 1, in_loop)
            return lines
        if kind == "while":
            counter = self.fresh("k")
            head = [f"{indent}{counter} = 0", f"{indent}while {counter} < {self.rng.randint(1, 4)} and "
                                                f"{self.condition(names)}:"]
            body = [f"{inner}{counter} += 1"] + self.block(names, inner, depth + 1, True)
            return head + [None] + body  # None: where the checkpoint option goes
        variable = self.fresh("v")
        iterable = "xs" if kind == "for_xs" else f"range({self.rng.randint(1, 3)})"
        loop_names = names + [variable] if kind == "for_xs" else names
        return [f"{indent}for {variable} in {iterable}:", None] + self.block(loop_names, inner, depth + 1, True)


def generate(seed: int, index: int) -> Program:
    """Gradient program `index` of `seed` (the same pair gives the same program)."""
    lines, args = _lines(seed, index)
    return Program(_source(lines, checkpoint=False), seed, index, args, mixed=())


def checkpointed(program: Program) -> str:
    """`program`'s source with ``set_loop_options(checkpoint=True)`` first in every loop body."""
    return _source(_lines(program.seed, program.index)[0], checkpoint=True)


def _lines(seed, index):
    """The lines of ``generated`` (None where a loop body starts) and its arguments."""
    rng = random.Random(seed * 7_000_003 + index)
    writer = _Writer(rng, budget=rng.randint(3, 12))
    lines = ["def generated(a, b, xs):", "    c = a * 0.5 + 0.1", "    d = b - 0.2", "    acc = [a]"]
    lines += writer.block(["a", "b", "c", "d"], "    ", 0, False)
    lines.append("    return c * d + al.reduce_sum(xs * c) + al.reduce_sum(al.stack(acc)) * 0.3")
    args = (round(rng.uniform(-1, 1), 3), round(rng.uniform(-1, 1), 3),
            [round(rng.uniform(-1, 1), 3) for _ in range(rng.randint(1, 3))])
    return lines, args


def _source(lines, checkpoint):
    out = []
    for position, line in enumerate(lines):
        if line is None:
            if checkpoint:
                header = lines[position - 1]
                indent = header[:len(header) - len(header.lstrip())] + "    "
                out.append(indent + CHECKPOINT)
            continue
        out.append(line.replace(CHECKPOINT_ARGUMENT, "True" if checkpoint else "None"))
    return "\n".join(out) + "\n" + GRADIENT_OF


def tensors(program: Program):
    a, b, xs = program.args
    return al.constant(a, al.float64), al.constant(b, al.float64), al.constant(xs, al.float64)


def run_gradients(program: Program, runs=RUNS, timeout_s=runner.TIMEOUT_S) -> Outcome:
    """The eager tape (the oracle, itself checked against finite differences) and each traced run.

    Runs of one source share its loaded ``gradient_of``, as one user's
    function would be shared (so ``numpy`` and ``jax`` convert it once), and
    runs of one source on one backend share its `autoloop.function`: a
    program without loops is the same program checkpointed, so its
    checkpoint run is a second call of the same function (its cached trace
    and XLA executable, not a second compilation of the same graph).
    """
    loaded, functions = {}, {}

    def gradient_of(source):
        if source not in loaded:
            loaded[source] = runner.load(source, "gradient_of")
        return loaded[source]
    expected = runner._call(gradient_of(program.source), tensors(program), timeout_s)
    outcomes = []
    for run in runs:
        if run == "eager tape":
            outcomes.append(_against_differences(program, expected, timeout_s))
            continue
        backend, _, checkpoint = run.partition(" ")
        source = checkpointed(program) if checkpoint else program.source
        if (source, backend) not in functions:
            functions[source, backend] = al.function(gradient_of(source), backend=backend)
        limit = max(timeout_s, runner.JAX_TIMEOUT_S) if backend == "jax" else timeout_s
        result = runner._call(functions[source, backend], tensors(program), limit)
        outcomes.append(_against_tape(run, expected, result))
    return Outcome(program, expected, outcomes)


def _flat(value) -> np.ndarray:
    """``(y, [da, db, dxs])`` as one float64 vector, a None gradient as zeros."""
    y, grads = value
    parts = [np.atleast_1d(np.asarray(y, np.float64))]
    for grad, size in zip(grads, (1, 1, None)):
        if grad is None:
            parts.append(np.zeros(size if size else 0))
            continue
        parts.append(np.atleast_1d(np.asarray(grad, np.float64)))
    return np.concatenate(parts)


def _against_tape(run, expected: Result, result: Result) -> ModeOutcome:
    if expected.error is not None:  # the eager program itself failed: compare as any program's errors
        return runner.classify(expected, result, run, True)
    if result.error is not None:  # a limitation at the user's line, or an internal error
        return runner.classify(expected, result, run, True)
    got, want = _flat(result.value), _flat(expected.value)
    if got.shape == want.shape and np.allclose(got, want, rtol=TRACED_RTOL, atol=1e-12):
        return ModeOutcome(run, OK, result)
    return ModeOutcome(run, WRONG, result, f"differs from the eager tape by {_difference(got, want)}")


def _against_differences(program: Program, expected: Result, timeout_s) -> ModeOutcome:
    """The eager tape against central differences of the eager forward run."""
    if expected.error is not None:
        return ModeOutcome("eager tape", INTERNAL, expected, runner.signature_of(expected.error))
    forward = runner.load(program.source, "generated")
    point = np.concatenate([[program.args[0], program.args[1]], program.args[2]]).astype(np.float64)

    def value_at(vector):
        a, b, xs = vector[0], vector[1], vector[2:]
        return float(forward(al.constant(a, al.float64), al.constant(b, al.float64), al.constant(xs, al.float64)))

    def differences(step):
        result = np.empty_like(point)
        for position in range(point.size):
            delta = np.zeros_like(point)
            delta[position] = step
            result[position] = (value_at(point + delta) - value_at(point - delta)) / (2 * step)
        return result
    def one_sided(step):
        # At a kink exactly on the point (``maximum(a, 0.3)`` at ``a = 0.3``) central differences of every step
        # agree with each other on the mean of the two slopes: the one-sided differences tell it apart.
        here, result = value_at(point), np.empty_like(point)
        for position in range(point.size):
            delta = np.zeros_like(point)
            delta[position] = step
            result[position] = (value_at(point + delta) - here) / step
        return result
    try:
        fine, coarse = differences(1e-6), differences(1e-4)
        ahead, behind = one_sided(1e-6), one_sided(-1e-6)
    except Exception as error:
        return ModeOutcome("eager tape", INTERNAL, Result(error=error), runner.signature_of(error))
    tape = _flat(expected.value)[1:]
    smooth = (np.isclose(fine, coarse, rtol=1e-3, atol=1e-4)  # a branch flips near the point where not
              & np.isclose(ahead, behind, rtol=1e-3, atol=1e-4))
    if np.allclose(tape[smooth], fine[smooth], rtol=FD_RTOL, atol=FD_ATOL):
        return ModeOutcome("eager tape", OK, expected)
    return ModeOutcome("eager tape", WRONG, expected,
                       f"differs from finite differences by {_difference(tape[smooth], fine[smooth])}")


def _difference(got, want) -> str:
    if got.shape != want.shape:
        return f"shape {got.shape} vs {want.shape}"
    return f"{np.max(np.abs(got - want)):.3g}"
