"""Loops run by autoloop against the same loops written by hand in numpy (and TF/JAX if installed).

    python benchmarks/bench_loops.py              # full sizes
    python benchmarks/bench_loops.py --quick      # small sizes: a smoke run, not a measurement

Workloads:

- W1 ``sum_square``: ``result += i * i`` over n = 100,000 int32 scalars.
- W2 ``collatz``: 200 calls of ``collatz(27)`` from Python
  (``while n != 1: if n % 2 == 0: n //= 2 else: n = 3 * n + 1``, 111 steps each).
- W3 RNN: ``h = tanh(W @ h + x[t])``, d = 64, T = 1,000 (float32).
- W4 matmul: ``m = m @ w``, 512 × 512 float32, 20 steps.
- W5 concat doubling: ``m = concat([m, m], 0)`` 16 times from a 2 × 2 tensor,
  with the shape invariant ``[None, 2]``.

The baseline ("numpy") is the loop a careful numpy programmer writes:
constants are numpy scalars of the loop's dtype (a Python ``1`` next to an
``np.int32`` takes numpy's slower mixed-type path). Where ``out=`` buffers
are natural (W3, W4) the loop is also written with them ("numpy, out="),
and each round's baseline is the faster of the two versions (at these sizes
the keyword arguments of ``out=`` cost more than the allocations they save,
so it is usually the plain expressions). autoloop runs each loop twice:
as a graph ``while_loop`` (``autograph=False``) and as the plain Python loop
converted by ``@autoloop.function``. TensorFlow rows run the converted
Python loop under ``tf.function`` (AutoGraph), JAX rows ``jax.lax`` loops
under ``jax.jit``. Every implementation's result is checked against the
baseline before timing. Short workloads get more rounds than ``--rounds``
(`rounds_for`: at least 20 ms of samples per implementation), since one
short run's time depends on where numpy's allocator puts its arrays.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from typing import Callable

import numpy as np

import autoloop as al
from harness import (check_result, command_line, environment, format_ratio, format_seconds, format_spread,
                     interleaved_apart, markdown_table, optional, skipped_frameworks)

# Column order of the tables; a workload may lack some of them.
IMPLEMENTATIONS = ["numpy", "numpy, out=", "autoloop while_loop", "autoloop converted", "tensorflow", "jax"]


@dataclasses.dataclass
class Workload:
    key: str
    title: str
    impls: dict[str, Callable[[], object]]
    rtol: float = 0.0  # 0: results must be identical to numpy's
    notes: list[str] = dataclasses.field(default_factory=list)


# -- W1: sum_square -------------------------------------------------------------------------
def sum_square(n: int) -> Workload:
    def numpy_loop():
        i, result, limit, one = np.int32(0), np.int32(0), np.int32(n), np.int32(1)
        with np.errstate(over="ignore"):  # int32 wraps around, as in the graph
            while i < limit:
                result += i * i
                i += one
        return result

    @al.function(autograph=False)
    def graph_loop(limit):
        return al.while_loop(lambda i, r: i < limit, lambda i, r: (i + 1, r + i * i),
                             (al.constant(0), al.constant(0)))[1]

    limit = al.constant(n)
    impls = {"numpy": numpy_loop, "autoloop while_loop": lambda: graph_loop(limit),
             "autoloop converted": lambda: _sum_square_python(limit)}
    tf = optional("tensorflow")
    if tf is not None:
        tf_function, tf_limit = tf.function(sum_square_python), tf.constant(n)
        impls["tensorflow"] = lambda: tf_function(tf_limit).numpy()
    jax = optional("jax")
    if jax is not None:
        impls["jax"] = _jax_sum_square(jax, n)
    return Workload("W1", f"sum_square, n = {n:,} int32", impls)


def sum_square_python(limit):
    """The plain loop that both autoloop and TensorFlow convert (zeros come from `limit`: no library call)."""
    i = result = limit - limit
    while i < limit:
        result += i * i
        i += 1
    return result


_sum_square_python = al.function(sum_square_python)


def _jax_sum_square(jax, n):
    import jax.numpy as jnp

    @jax.jit
    def loop(limit):
        return jax.lax.while_loop(lambda s: s[0] < limit, lambda s: (s[0] + 1, s[1] + s[0] * s[0]),
                                  (jnp.int32(0), jnp.int32(0)))[1]
    limit = jnp.int32(n)
    return lambda: np.asarray(loop(limit).block_until_ready())


# -- W2: collatz ----------------------------------------------------------------------------
def collatz(calls: int, start: int = 27) -> Workload:
    one, two, three, zero = np.int32(1), np.int32(2), np.int32(3), np.int32(0)

    def collatz_numpy(n):
        steps = zero
        while n != one:
            if n % two == zero:
                n = n // two
            else:
                n = three * n + one
            steps += one
        return steps

    def repeated(fn, argument):
        def run():
            for _ in range(calls):
                result = fn(argument)
            return result
        return run

    impls = {"numpy": repeated(collatz_numpy, np.int32(start)),
             "autoloop while_loop": repeated(_collatz_graph, al.constant(start)),
             "autoloop converted": repeated(_collatz_python, al.constant(start))}
    tf = optional("tensorflow")
    if tf is not None:
        tf_function = tf.function(collatz_python)
        impls["tensorflow"] = repeated(lambda n: tf_function(n).numpy(), tf.constant(start))
    jax = optional("jax")
    if jax is not None:
        jax_function = _jax_collatz(jax)
        impls["jax"] = repeated(lambda n: np.asarray(jax_function(n).block_until_ready()),
                                jax.numpy.int32(start))
    return Workload("W2", f"collatz({start}) called {calls} times", impls)


def collatz_python(n):
    """The plain loop that both autoloop and TensorFlow convert."""
    steps = n - n
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


_collatz_python = al.function(collatz_python)


@al.function(autograph=False)
def _collatz_graph(n):
    def body(n, steps):
        n = al.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1)
        return n, steps + 1
    return al.while_loop(lambda n, steps: n != 1, body, (n, al.constant(0)))[1]


def _jax_collatz(jax):
    import jax.numpy as jnp

    def body(state):
        n, steps = state
        n = jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1
    return jax.jit(lambda n: jax.lax.while_loop(lambda s: s[0] != 1, body, (n, jnp.int32(0)))[1])


# -- W3: RNN --------------------------------------------------------------------------------
def rnn(d: int, steps: int) -> Workload:
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    x = rng.standard_normal((steps, d)).astype(np.float32)
    h0 = np.zeros(d, np.float32)

    def numpy_buffers():
        h, pre = h0.copy(), np.empty(d, np.float32)
        for t in range(steps):
            np.matmul(w, h, out=pre)
            np.add(pre, x[t], out=pre)
            np.tanh(pre, out=h)
        return h

    def numpy_plain():
        h = h0
        for t in range(steps):
            h = np.tanh(w @ h + x[t])
        return h

    args = (al.constant(w), al.constant(x), al.constant(h0))
    impls = {"numpy": numpy_plain, "numpy, out=": numpy_buffers,
             "autoloop while_loop": lambda: _rnn_graph(*args), "autoloop converted": lambda: _rnn_python(*args)}
    tf = optional("tensorflow")
    if tf is not None:
        tf_function, tf_args = tf.function(_rnn_tf), (tf.constant(w), tf.constant(x), tf.constant(h0))
        impls["tensorflow"] = lambda: tf_function(*tf_args).numpy()
    jax = optional("jax")
    if jax is not None:
        jax_function = jax.jit(lambda w, x, h: jax.lax.fori_loop(
            0, x.shape[0], lambda t, h: jax.numpy.tanh(w @ h + x[t]), h))
        impls["jax"] = lambda: np.asarray(jax_function(w, x, h0).block_until_ready())
    return Workload("W3", f"RNN h = tanh(W @ h + x[t]), d = {d}, T = {steps:,}", impls, rtol=1e-4)


@al.function(autograph=False)
def _rnn_graph(w, x, h):
    n = al.shape(x)[0]
    return al.while_loop(lambda t, h: t < n, lambda t, h: (t + 1, al.tanh(w @ h + x[t])), (al.constant(0), h))[1]


@al.function
def _rnn_python(w, x, h):
    for t in al.range(al.shape(x)[0]):
        h = al.tanh(w @ h + x[t])
    return h


def _rnn_tf(w, x, h):
    import tensorflow as tf
    for t in tf.range(tf.shape(x)[0]):
        h = tf.tanh(tf.linalg.matvec(w, h) + x[t])
    return h


# -- W4: matmul -----------------------------------------------------------------------------
def matmul(size: int, steps: int) -> Workload:
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((size, size)))
    w = q.astype(np.float32)  # orthogonal: values neither blow up nor vanish
    m0 = rng.standard_normal((size, size)).astype(np.float32)

    def numpy_buffers():
        m, spare = m0.copy(), np.empty_like(m0)
        for _ in range(steps):
            np.matmul(m, w, out=spare)
            m, spare = spare, m
        return m

    def numpy_plain():
        m = m0
        for _ in range(steps):
            m = m @ w
        return m

    @al.function(autograph=False)
    def graph_loop(m, w):
        return al.while_loop(lambda t, m: t < steps, lambda t, m: (t + 1, m @ w), (al.constant(0), m))[1]

    args = (al.constant(m0), al.constant(w), al.constant(steps))
    impls = {"numpy": numpy_plain, "numpy, out=": numpy_buffers,
             "autoloop while_loop": lambda: graph_loop(*args[:2]), "autoloop converted": lambda: _matmul_python(*args)}
    tf = optional("tensorflow")
    if tf is not None:
        tf_function, tf_args = tf.function(matmul_python), (tf.constant(m0), tf.constant(w), tf.constant(steps))
        impls["tensorflow"] = lambda: tf_function(*tf_args).numpy()
    jax = optional("jax")
    if jax is not None:
        jax_function = jax.jit(lambda m, w: jax.lax.fori_loop(0, steps, lambda t, m: m @ w, m))
        impls["jax"] = lambda: np.asarray(jax_function(m0, w).block_until_ready())
    return Workload("W4", f"m = m @ w, {size} × {size} float32, {steps} steps", impls, rtol=1e-3)


def matmul_python(m, w, steps):
    """The plain loop that both autoloop and TensorFlow convert."""
    i = steps - steps
    while i < steps:
        m = m @ w
        i += 1
    return m


_matmul_python = al.function(matmul_python)


# -- W5: concat doubling --------------------------------------------------------------------
def concat_doubling(doublings: int) -> Workload:
    m0 = np.ones((2, 2), np.float32)

    def numpy_loop():
        m = m0
        for _ in range(doublings):
            m = np.concatenate((m, m), axis=0)
        return m

    @al.function(autograph=False)
    def graph_loop(m):
        return al.while_loop(lambda i, m: i < doublings, lambda i, m: (i + 1, al.concat([m, m], axis=0)),
                             (al.constant(0), m), shape_invariants=(al.TensorShape([]), al.TensorShape([None, 2])))[1]

    m = al.constant(m0)
    python_loop = concat_python(doublings)
    impls = {"numpy": numpy_loop, "autoloop while_loop": lambda: graph_loop(m),
             "autoloop converted": lambda: python_loop(m)}
    notes = []
    tf = optional("tensorflow")
    if tf is not None:
        @tf.function
        def tf_loop(m):
            return tf.while_loop(lambda i, m: i < doublings, lambda i, m: (i + 1, tf.concat([m, m], axis=0)),
                                 (tf.constant(0), m),
                                 shape_invariants=(tf.TensorShape([]), tf.TensorShape([None, 2])))[1]
        tf_m = tf.constant(m0)
        impls["tensorflow"] = lambda: tf_loop(tf_m).numpy()
    if optional("jax") is not None:
        notes.append("W5 has no JAX row: jax.lax loops need loop variables of one fixed shape.")
    return Workload("W5", f"m = concat([m, m], 0), {doublings} doublings from 2 × 2, shape invariant [None, 2]",
                    impls, notes=notes)


def concat_python(doublings: int):
    """The plain loop that autoloop converts, doubling `doublings` times (baked into the trace)."""
    @al.function
    def python_loop(m):
        i = al.constant(0)
        while i < doublings:
            al.set_loop_options(shape_invariants=[(m, al.TensorShape([None, 2]))])
            m = al.concat([m, m], axis=0)
            i += 1
        return m
    return python_loop


# -- running --------------------------------------------------------------------------------
def workloads(quick: bool) -> list[Callable[[], Workload]]:
    if quick:
        return [lambda: sum_square(2_000), lambda: collatz(5), lambda: rnn(16, 50), lambda: matmul(32, 3),
                lambda: concat_doubling(5)]
    return [lambda: sum_square(100_000), lambda: collatz(200), lambda: rnn(64, 1_000), lambda: matmul(512, 20),
            lambda: concat_doubling(16)]


def check(workload: Workload) -> None:
    """Every implementation's result against numpy by hand (AssertionError on a difference)."""
    expected = workload.impls["numpy"]()
    for name, fn in workload.impls.items():
        check_result(workload.title, name, fn(), expected, rtol=workload.rtol, atol=workload.rtol)


SAMPLED_SECONDS = 0.02  # each implementation is timed for at least this long in all (see `rounds_for`)


def rounds_for(workload: Workload, rounds: int) -> int:
    """`rounds`, or more for a short workload: at least `SAMPLED_SECONDS` of samples per implementation.

    A sample is one run, started after a garbage collection; a run of W5 (65 µs) takes 60 µs or 95 µs
    depending on where numpy's allocator finds its megabyte (fresh pages or reused ones), and the state
    changes every few dozen rounds. Nine such samples give a median ratio anywhere in 0.95–1.10; a few
    hundred give the same figure run after run.
    """
    baseline = workload.impls["numpy"]
    baseline()
    start = time.perf_counter()
    baseline()
    seconds = max(time.perf_counter() - start, 1e-6)
    return max(rounds, math.ceil(SAMPLED_SECONDS / seconds))


def measure(quick: bool = False, rounds: int = 9, progress=None) -> list[tuple[Workload, dict]]:
    results = []
    for build in workloads(quick):
        workload = build()
        check(workload)
        results.append((workload, interleaved_apart(workload.impls, rounds_for(workload, rounds))))
        if progress:
            progress(f"{workload.key} done")
    return results


def table(results) -> str:
    """One row per workload: median time of one run and median same-round ratio to numpy (min–max)."""
    present = [name for name in IMPLEMENTATIONS if any(name in timings for _, timings in results)]
    rows = []
    for workload, timings in results:
        row = [f"{workload.key} {workload.title}"]
        for name in present:
            timing = timings.get(name)
            row.append("—" if timing is None else
                       f"{format_seconds(timing.seconds.median)}, {format_ratio(timing.ratio)}")
        rows.append(row)
    return markdown_table(["workload"] + present, rows)


def detail_table(results) -> str:
    """Every measurement: median time with min–max per implementation."""
    rows = []
    for workload, timings in results:
        for name, timing in timings.items():
            rows.append([workload.key, name, format_spread(timing.seconds), format_ratio(timing.ratio)])
    return markdown_table(["workload", "implementation", "time per run, median (min–max)",
                           "vs numpy, same-round ratio"], rows)


def main(argv=None) -> int:
    args = command_line(__doc__, argv, "small sizes: a smoke run, not a measurement", rounds=9)
    print("\n".join(environment() + skipped_frameworks()))
    results = measure(args.quick, args.rounds, progress=lambda line: print(line, file=sys.stderr))
    print(table(results))
    print()
    print(detail_table(results))
    for workload, _ in results:
        for note in workload.notes:
            print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
