"""The dataflow executor (what compat.v1.Session runs): non-strict iterations on two cores, and its cost per node.

    python benchmarks/bench_dataflow.py            # full sizes, markdown tables
    python benchmarks/bench_dataflow.py --quick    # small sizes, a smoke run

1. A TF1 loop in a Session whose counter runs ahead: each iteration adds
   ``reduce_sum(work(X, cast(i, float32)))`` over a 1M-element float32 ``X``
   to an accumulator. The big element-wise kernels of different iterations
   are independent, and numpy runs them without the GIL, so with
   ``parallel_iterations=10`` several iterations' kernels run at once on the
   executor's thread pool; with 1, one iteration at a time. Also shown: the
   same loop on the compiled executor (``@autoloop.function``, one thread)
   and the same numpy work spread over two threads by hand, the most two
   cores give for that work. Two works: ``tanh(X * i)`` (numpy's vectorised
   float32 tanh is nearly as fast as memory, so cores mostly share the
   memory bus), and ``tanh(X ** (1 + i / 1000))`` (a power is compute-bound).
2. ``sum_square`` (an int32 scalar loop): time per iteration on the dataflow
   executor against the compiled executor, which runs the loop as a Python
   ``while`` over numpy scalars.

Timing follows `harness` (interleaved rounds, medians with min–max, ratios
within a round). The machine's load is printed with the numbers: other work
takes cores away from the thread pool, and then no speed-up can show.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from harness import environment, interleaved

import autoloop as al
import autoloop.compat.v1 as tf
from autoloop.execute import dataflow

SERIAL = "Session, one iteration at a time (parallel_iterations=1)"  # no other name starts with it
COMPILED = "compiled executor"
BY_HAND = "numpy on 2 threads by hand (the ceiling)"


WORKLOADS = {
    # numpy's float32 tanh is vectorised: it runs about as fast as memory delivers the array, so
    # two cores share one memory bus and may gain little.
    "tanh(X * i)": (lambda x, c: al.tanh(x * c), lambda x, c: np.tanh(x * c)),
    # A float32 power costs far more per element than moving it: two cores can each do their own.
    "tanh(X ** (1 + i / 1000))": (lambda x, c: al.tanh(x ** (1.0 + c * 1e-3)),
                      lambda x, c: np.tanh(x ** (np.float32(1.0) + c * np.float32(1e-3)))),
}


def non_strict(work: str, elements: int, iterations: int, rounds: int) -> dict:
    """The loop ``acc += reduce_sum(work(X, float(i)))`` in a Session at parallel_iterations 1 and 10,
    on the compiled executor, and the same per-iteration numpy work spread by hand over 2 threads
    (what two cores can give at best)."""
    graph_work, numpy_work = WORKLOADS[work]
    data = np.random.default_rng(0).random(elements, dtype=np.float32)

    def loop(x, parallel_iterations=10):
        body = lambda i, acc: (i + 1, acc + al.reduce_sum(graph_work(x, al.cast(i, al.float32))))  # noqa: E731
        return al.while_loop(lambda i, acc: i < iterations, body, (al.constant(0), al.constant(0.0)),
                             parallel_iterations=parallel_iterations)[1]

    impls, results = {}, {}
    for parallel_iterations in (1, 10):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, shape=[elements])
            total = loop(x, parallel_iterations)
        session = tf.Session(graph=graph)
        name = SERIAL if parallel_iterations == 1 else f"Session, parallel_iterations={parallel_iterations}"
        results[name] = session.run(total, {x: data})
        impls[name] = lambda session=session, total=total, x=x: session.run(total, {x: data})
    compiled = al.function(loop, autograph=False)
    results[COMPILED] = compiled(data).numpy()
    impls[COMPILED] = lambda: compiled(data)
    if len({float(value) for value in results.values()}) != 1:
        raise AssertionError(f"the executors disagree: {results}")
    pool = ThreadPoolExecutor(2)
    impls[BY_HAND] = lambda: sum(pool.map(lambda i: np.sum(numpy_work(data, np.float32(i))), range(iterations)))
    try:
        return interleaved(impls, rounds, baseline=SERIAL)
    finally:
        pool.shutdown()


def sum_square(iterations: int, rounds: int) -> dict:
    def sum_square(n):
        return al.while_loop(lambda i, r: i < n, lambda i, r: (i + 1, r + i * i), (al.constant(0), al.constant(0)))[1]

    concrete = al.function(sum_square, autograph=False).get_concrete_function(al.constant(0))
    n = np.int32(iterations)
    expected = concrete.compiled(n)[0]
    impls = {COMPILED: lambda: concrete.compiled(n)}
    for parallel_iterations in (1, 10):
        lowered = dataflow.lower(concrete.graph, parallel_iterations)
        if dataflow.call(lowered, n)[0] != expected:
            raise AssertionError("the dataflow executor disagrees with the compiled executor on sum_square")
        impls[f"dataflow executor, parallel_iterations={parallel_iterations}"] = \
            lambda lowered=lowered: dataflow.call(lowered, n)
    return interleaved(impls, rounds, baseline=COMPILED)


def report(quick: bool = False, rounds: int = 7) -> str:
    elements, iterations, loop_iterations = (1 << 14, 6, 300) if quick else (1 << 20, 40, 20_000)
    lines = ["```", *environment(), "```", ""]
    for work in WORKLOADS:
        timings = non_strict(work, elements, iterations, rounds)
        lines += [f"Non-strict loop in a Session, `acc += reduce_sum({work})`: {iterations} iterations over "
                  f"{elements:,} float32 elements (median with min–max over {rounds} interleaved rounds):", "",
                  "| executor | time | speed-up over parallel_iterations=1 (same round) |", "| --- | --- | --- |"]
        for name, timing in timings.items():
            seconds, ratio = timing.seconds, timing.ratio
            lines.append(f"| {name} | {_ms(seconds.median)} ({_ms(seconds.low)}–{_ms(seconds.high)}) | "
                         f"{1 / ratio.median:.2f}x ({1 / ratio.high:.2f}–{1 / ratio.low:.2f}) |")
        lines.append("")
    timings = sum_square(loop_iterations, rounds)
    lines += [f"sum_square, {loop_iterations:,} iterations: time per iteration (median over {rounds} rounds):", "",
              "| executor | per iteration | against the compiled executor (same round) |", "| --- | --- | --- |"]
    for name, timing in timings.items():
        lines.append(f"| {name} | {timing.seconds.median / loop_iterations * 1e6:.2f} µs | "
                     f"{timing.ratio.median:.0f}x |")
    return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args(argv)
    print(report(options.quick, 2 if options.quick else options.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
