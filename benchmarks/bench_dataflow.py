"""The dataflow executor (what compat.v1.Session runs): non-strict iterations on two cores, and its cost per node.

    python benchmarks/bench_dataflow.py            # full sizes, markdown tables
    python benchmarks/bench_dataflow.py --quick    # small sizes, a smoke run

1. A TF1 loop in a Session whose counter runs ahead: each iteration adds
   ``reduce_sum(tanh(X * cast(i, float32)))`` over a 1M-element float32 ``X``
   to an accumulator. The big element-wise kernels of different iterations
   are independent, and numpy runs them without the GIL, so with
   ``parallel_iterations=10`` several iterations' kernels run at once on the
   executor's thread pool; with 1, one iteration at a time. Also shown: the
   same loop on the compiled executor (``@autoloop.function``, one thread).
2. ``sum_square`` (an int32 scalar loop): time per iteration on the dataflow
   executor against the compiled executor, which runs the loop as a Python
   ``while`` over numpy scalars.

Best of several runs after a warm-up; ratios are measured in the same
process. The load average is printed with the numbers: other work on the
machine takes cores away from the thread pool.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from bench_loops import best_time  # best of several runs after a warm-up

import autoloop as al
import autoloop.compat.v1 as tf
from autoloop.execute import dataflow


def non_strict(elements: int, iterations: int, repeats: int) -> list[tuple[str, float]]:
    data = np.random.default_rng(0).random(elements, dtype=np.float32)

    def loop(x, parallel_iterations=10):
        body = lambda i, acc: (i + 1, acc + al.reduce_sum(al.tanh(x * al.cast(i, al.float32))))  # noqa: E731
        return al.while_loop(lambda i, acc: i < iterations, body, (al.constant(0), al.constant(0.0)),
                             parallel_iterations=parallel_iterations)[1]

    rows, results = [], []
    for parallel_iterations in (1, 10):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, shape=[elements])
            total = loop(x, parallel_iterations)
        session = tf.Session(graph=graph)
        seconds = best_time(lambda: results.append(session.run(total, {x: data})), repeats)
        rows.append((f"Session, parallel_iterations={parallel_iterations}", seconds))

    compiled = al.function(loop, autograph=False)
    rows.append(("compiled executor (@autoloop.function)", best_time(lambda: results.append(compiled(data).numpy()),
                                                                     repeats)))
    assert len({float(r) for r in results}) == 1, f"the runs disagree: {set(results)}"
    return rows


def sum_square_per_iteration(dataflow_n: int, compiled_n: int, repeats: int) -> list[tuple[str, float]]:
    def sum_square(n):
        return al.while_loop(lambda i, r: i < n, lambda i, r: (i + 1, r + i * i), (al.constant(0), al.constant(0)))[1]

    concrete = al.function(sum_square, autograph=False).get_concrete_function(al.constant(0))
    rows = []
    for parallel_iterations in (1, 10):
        lowered = dataflow.lower(concrete.graph, parallel_iterations)
        seconds = best_time(lambda: dataflow.call(lowered, np.int32(dataflow_n)), repeats)
        rows.append((f"dataflow executor, parallel_iterations={parallel_iterations}", seconds / dataflow_n))
    seconds = best_time(lambda: concrete.compiled(np.int32(compiled_n)), repeats)
    rows.append(("compiled executor", seconds / compiled_n))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    options = parser.parse_args()
    elements, iterations, repeats = (1 << 16, 8, 2) if options.quick else (1 << 20, 40, 5)
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{os.cpu_count()} cores, load average {load}, numpy {np.__version__}\n")

    rows = non_strict(elements, iterations, repeats)
    single = rows[0][1]
    print(f"Non-strict loop, {iterations} iterations over {elements:,} float32 elements (best of {repeats}):\n")
    print("| executor | time | speed-up over parallel_iterations=1 |\n| --- | --- | --- |")
    for name, seconds in rows:
        print(f"| {name} | {seconds * 1e3:.0f} ms | {single / seconds:.2f}x |")

    dataflow_n, compiled_n = (2_000, 20_000) if options.quick else (20_000, 200_000)
    rows = sum_square_per_iteration(dataflow_n, compiled_n, repeats)
    compiled = rows[-1][1]
    print(f"\nsum_square, time per iteration (best of {repeats}):\n")
    print("| executor | per iteration | against the compiled executor |\n| --- | --- | --- |")
    for name, seconds in rows:
        print(f"| {name} | {seconds * 1e6:.2f} µs | {seconds / compiled:.0f}x |")


if __name__ == "__main__":
    main()
