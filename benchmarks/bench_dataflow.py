"""The dataflow executor (what compat.v1.Session runs): planned loops, non-strict iterations on two cores.

    python benchmarks/bench_dataflow.py            # full sizes, markdown tables
    python benchmarks/bench_dataflow.py --quick    # small sizes, a smoke run

1. A TF1 loop in a Session whose counter runs ahead: each iteration adds
   ``reduce_sum(work(X, cast(i, float32)))`` over a 1M-element float32 ``X``
   to an accumulator. With ``parallel_iterations=10`` the loop runs as
   frames (the cost rule: its values are large), and several iterations'
   kernels run at once on the executor's thread pool, numpy releasing the
   GIL; with 1 the cost rule compiles the loop into one node. Also shown:
   the same loop with ``parallel_iterations=1`` forced to run as frames;
   with 10, its chain ``X * i -> tanh -> reduce_sum`` run kernel by kernel,
   not block by block (``fuse_sums=False``: the whole product ``X * i`` in
   memory, as before fused sums); on
   the compiled executor (``@autoloop.function``), and the same numpy work
   spread over two threads by hand, on whole arrays and on 2 MiB blocks of
   ``X`` (no whole temporary: the most two cores give for that work);
   the peak memory (tracemalloc) of one run, in arrays of X's size; and the
   CPU time of one run, all threads together (median of three): what a run
   costs whatever else the machine runs, so on two free cores a run can
   take no less than half of it. Two
   works: ``tanh(X * i)`` (numpy's vectorised float32 tanh is nearly as
   fast as memory, so cores mostly share the memory bus), and
   ``tanh(X ** (1 + i / 1000))`` (a power is compute-bound).
2. ``sum_square`` (an int32 scalar loop) as a ``compat.v1`` ``while_loop``
   run by a Session: time per iteration, against the compiled executor, and
   with its loop forced to run as frames.

With TensorFlow installed in another Python (``--tensorflow PYTHON``,
default ``/work/tfenv/bin/python`` when it exists), the same graphs also
run in TensorFlow's ``compat.v1`` Session, in a child process that times
nothing itself: each of its runs is one call in the same interleaved
rounds, so its rows compare within a round like the others (a round trip
through a pipe adds about 0.1 ms to runs of tens of milliseconds).

Timing follows `harness` (interleaved rounds, medians with min–max, ratios
within a round). The machine's load is printed with the numbers: other work
takes cores away from the thread pool, and then no speed-up can show.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from bench_gradients import peak_bytes
from harness import environment, interleaved

import autoloop as al
import autoloop.compat.v1 as tf
from autoloop.execute import dataflow

SERIAL = "Session, one iteration at a time (parallel_iterations=1)"  # no other name starts with it
COMPILED = "compiled executor"
KERNEL_BY_KERNEL = "the same, its chain kernel by kernel, not block by block (fuse_sums=False)"
BY_HAND = "numpy on 2 threads by hand, whole arrays"
BY_HAND_BLOCKS = "numpy on 2 threads by hand, block by block (the ceiling)"
HAND_BLOCK = 1 << 19  # elements: 2 MiB of float32, the executor's block (`autoloop.execute.dataflow.fused`)
TENSORFLOW = "TensorFlow compat.v1 Session"
DEFAULT_TENSORFLOW = "/work/tfenv/bin/python"


WORKLOADS = {
    # numpy's float32 tanh is vectorised: it runs about as fast as memory delivers the array, so
    # two cores share one memory bus and may gain little.
    "tanh(X * i)": (lambda x, c: al.tanh(x * c), lambda x, c: np.tanh(x * c)),
    # A float32 power costs far more per element than moving it: two cores can each do their own.
    "tanh(X ** (1 + i / 1000))": (lambda x, c: al.tanh(x ** (1.0 + c * 1e-3)),
                                  lambda x, c: np.tanh(x ** (np.float32(1.0) + c * np.float32(1e-3)))),
}

# The child process's program: the same graphs in TensorFlow's compat.v1 Session, run on request.
_TENSORFLOW_CHILD = r"""
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
sizes = json.loads(sys.argv[1])
data = np.random.default_rng(0).random(sizes["elements"], dtype=np.float32)
works = {"tanh(X * i)": lambda x, c: tf.tanh(x * c),
         "tanh(X ** (1 + i / 1000))": lambda x, c: tf.tanh(x ** (1.0 + c * 1e-3))}
session = tf.Session()
runs = {}
for work, fn in works.items():
    for parallel in (1, 10):
        x = tf.placeholder(tf.float32, shape=[sizes["elements"]])
        body = lambda i, acc, x=x, fn=fn: (i + 1, acc + tf.reduce_sum(fn(x, tf.cast(i, tf.float32))))
        total = tf.while_loop(lambda i, acc: i < sizes["iterations"], body, (tf.constant(0), tf.constant(0.0)),
                              parallel_iterations=parallel)[1]
        runs[f"{work} {parallel}"] = lambda total=total, x=x: session.run(total, {x: data})
n = tf.placeholder(tf.int32, shape=[])
result = tf.while_loop(lambda i, r: i < n, lambda i, r: (i + 1, r + i * i), (tf.constant(0), tf.constant(0)))[1]
runs["sum_square"] = lambda: session.run(result, {n: sizes["loop_iterations"]})
print(json.dumps({"version": tf.__version__}), flush=True)
for line in sys.stdin:
    print(json.dumps(float(runs[line.strip()]())), flush=True)
"""


class TensorFlowChild:
    """TensorFlow's compat.v1 Session in a child process: ``child.run(name)`` runs one of its graphs."""

    def __init__(self, python: str, elements: int, iterations: int, loop_iterations: int):
        sizes = json.dumps({"elements": elements, "iterations": iterations, "loop_iterations": loop_iterations})
        self.process = subprocess.Popen([python, "-c", _TENSORFLOW_CHILD, sizes], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.version = json.loads(self.process.stdout.readline())["version"]

    def run(self, name: str) -> float:
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def tensorflow_child(python: str | None, elements: int, iterations: int, loop_iterations: int):
    """A `TensorFlowChild`, or None when `python` is None or has no TensorFlow."""
    if python is None or not os.path.exists(python):
        return None
    try:
        return TensorFlowChild(python, elements, iterations, loop_iterations)
    except (OSError, ValueError):  # no TensorFlow there: the child printed nothing
        return None


def non_strict(work: str, elements: int, iterations: int, rounds: int, child=None) -> tuple[dict, dict, dict]:
    """The loop ``acc += reduce_sum(work(X, float(i)))`` in a Session at parallel_iterations 1 and 10, as frames
    at 1, on the compiled executor, by hand on 2 threads (and in TensorFlow's Session with `child`): timings,
    peak memory in arrays of X's size, and CPU seconds per run (all threads; not TensorFlow's child)."""
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
        metadata = tf.RunMetadata()
        results[f"Session, parallel_iterations={parallel_iterations}"] = session.run(total, {x: data},
                                                                                     run_metadata=metadata)
        (plan,) = metadata.loops
        name = (f"{SERIAL}, {plan.executor}" if parallel_iterations == 1 else
                f"Session, parallel_iterations={parallel_iterations}, {plan.executor}")
        impls[name] = lambda session=session, total=total, x=x: session.run(total, {x: data})
        lowered = graph.lowered()
        fetch, feed = lowered.values[total._value], lowered.values[x._value]
        if parallel_iterations == 10 and plan.executor == "frames":
            unfused = dataflow.Plan(lowered, [fetch], [feed], fuse_sums=False)
            impls[KERNEL_BY_KERNEL] = lambda unfused=unfused: dataflow.execute(unfused, [data])
        if parallel_iterations == 1:
            frames = dataflow.Plan(lowered, [fetch], [feed], compile_loops=False)
            impls["the same, its loop forced to run as frames (compile_loops=False)"] = \
                lambda frames=frames: dataflow.execute(frames, [data])
    compiled = al.function(loop, autograph=False)
    results[COMPILED] = compiled(data).numpy()
    impls[COMPILED] = lambda: compiled(data)
    if len({float(value) for value in results.values()}) != 1:
        raise AssertionError(f"the executors disagree: {results}")
    pool = ThreadPoolExecutor(2)
    impls[BY_HAND] = lambda: sum(pool.map(lambda i: np.sum(numpy_work(data, np.float32(i))), range(iterations)))

    def blocks(i):  # what a careful numpy programmer writes for two cores: no whole temporary
        c, total = np.float32(i), np.float32(0)
        for start in range(0, elements, HAND_BLOCK):
            total += np.add.reduce(numpy_work(data[start:start + HAND_BLOCK], c))
        return total
    impls[BY_HAND_BLOCKS] = lambda: sum(pool.map(blocks, range(iterations)))
    if child is not None:
        for parallel_iterations in (1, 10):
            impls[f"{TENSORFLOW}, parallel_iterations={parallel_iterations}"] = \
                lambda key=f"{work} {parallel_iterations}": child.run(key)
    peaks = {name: peak_bytes(impls[name]) / data.nbytes for name in impls
             if name.startswith(("Session", "the same", COMPILED))}
    cpu = {name: cpu_seconds(impls[name]) for name in impls if not name.startswith(TENSORFLOW)}
    try:
        return interleaved(impls, rounds, baseline=SERIAL), peaks, cpu
    finally:
        pool.shutdown()


def cpu_seconds(run, repeats: int = 3) -> float:
    """The CPU time of one `run()`, all of this process's threads together (median of `repeats`)."""
    spent = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        spent.append(time.process_time() - start)
    return float(np.median(spent))


def sum_square(iterations: int, rounds: int, child=None) -> dict:
    """``sum_square`` as a compat.v1 while_loop in a Session, as frames, compiled (and in TensorFlow's Session)."""
    def sum_square(n):
        return al.while_loop(lambda i, r: i < n, lambda i, r: (i + 1, r + i * i), (al.constant(0), al.constant(0)))[1]

    concrete = al.function(sum_square, autograph=False).get_concrete_function(al.constant(0))
    n = np.int32(iterations)
    expected = concrete.compiled(n)[0]
    impls = {COMPILED: lambda: concrete.compiled(n)}
    graph = tf.Graph()
    with graph.as_default():
        limit = tf.placeholder(tf.int32, shape=[])
        result = sum_square(limit)
    session = tf.Session(graph=graph)
    metadata = tf.RunMetadata()
    if session.run(result, {limit: n}, run_metadata=metadata) != expected:
        raise AssertionError("the Session disagrees with the compiled executor on sum_square")
    impls[f"Session ({metadata.loops[0].executor}: the cost rule)"] = lambda: session.run(result, {limit: n})
    lowered = graph.lowered()
    for parallel_iterations in (1, 10):
        frames_form = dataflow.lower(graph.graph, parallel_iterations)
        frames = dataflow.Plan(frames_form, [frames_form.values[result._value]], [frames_form.values[limit._value]],
                               compile_loops=False)
        if dataflow.execute(frames, [n])[0] != expected:
            raise AssertionError("the dataflow executor disagrees with the compiled executor on sum_square")
        impls[f"Session's loop forced to run as frames, parallel_iterations={parallel_iterations}"] = \
            lambda frames=frames: dataflow.execute(frames, [n])
    del lowered
    if child is not None:
        if child.run("sum_square") != expected:
            raise AssertionError("TensorFlow disagrees with the compiled executor on sum_square")
        impls[TENSORFLOW] = lambda: child.run("sum_square")
    return interleaved(impls, rounds, baseline=COMPILED)


def report(quick: bool = False, rounds: int = 7, tensorflow: str | None = None) -> str:
    elements, iterations, loop_iterations = (1 << 14, 6, 300) if quick else (1 << 20, 40, 20_000)
    child = tensorflow_child(tensorflow, elements, iterations, loop_iterations)
    lines = ["```", *environment(), f"TensorFlow {child.version} (a child process)" if child else
             "TensorFlow: not run (no --tensorflow Python with TensorFlow)", "```", ""]
    try:
        for work in WORKLOADS:
            timings, peaks, cpu = non_strict(work, elements, iterations, rounds, child)
            lines += [f"Non-strict loop in a Session, `acc += reduce_sum({work})`: {iterations} iterations over "
                      f"{elements:,} float32 elements (median with min–max over {rounds} interleaved rounds):", "",
                      "| executor | time | speed-up over parallel_iterations=1 (same round) | peak memory (arrays of X) "
                      "| CPU time, all threads |", "| --- | --- | --- | --- | --- |"]
            for name, timing in timings.items():
                seconds, ratio = timing.seconds, timing.ratio
                peak = f"{peaks[name]:.1f}" if name in peaks else ""
                spent = _ms(cpu[name]) if name in cpu else ""
                lines.append(f"| {name} | {_ms(seconds.median)} ({_ms(seconds.low)}–{_ms(seconds.high)}) | "
                             f"{1 / ratio.median:.2f}x ({1 / ratio.high:.2f}–{1 / ratio.low:.2f}) | {peak} | {spent} |")
            lines += [f"load average after this table: {_load()}", ""]
        timings = sum_square(loop_iterations, rounds, child)
    finally:
        if child is not None:
            child.close()
    lines += [f"sum_square, {loop_iterations:,} iterations: time per iteration (median over {rounds} rounds):", "",
              "| executor | per iteration | against the compiled executor (same round) |", "| --- | --- | --- |"]
    for name, timing in timings.items():
        lines.append(f"| {name} | {timing.seconds.median / loop_iterations * 1e6:.2f} µs | "
                     f"{timing.ratio.median:.1f}x |")
    return "\n".join(lines)


def _load() -> str:
    """The load average (1, 5, 15 minutes): other work on the machine takes cores from the thread pool."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tensorflow", default=DEFAULT_TENSORFLOW if os.path.exists(DEFAULT_TENSORFLOW) else None,
                        help="a Python with TensorFlow installed, to run its compat.v1 Session beside (default: "
                             f"{DEFAULT_TENSORFLOW} if it exists)")
    options = parser.parse_args(argv)
    print(report(options.quick, 2 if options.quick else options.rounds, options.tensorflow))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
