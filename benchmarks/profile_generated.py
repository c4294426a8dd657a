"""Where the generated code of each workload spends its time and memory, against the code it could be.

    python benchmarks/profile_generated.py            # print the findings tables
    python benchmarks/profile_generated.py --source   # also print the generated source of each workload

For each loop workload this prints the code the compiled executor generates
today, then times it (interleaved with numpy by hand, on the same inputs,
results checked) next to hand-edited versions of the same code: each
variant changes one thing a code generator could do, so the table says
what each change is worth. For the 4096² ``tanh`` loop it measures the peak
memory of the same variants. The findings are written up in
benchmarks/PROFILE.md.

Variants (written by hand here, in the generated code's style):

- ``locals``: constants bound to local names once per call instead of read
  as globals on every use.
- ``nested``: single-use values written inside the expression that uses
  them (``v5 = lv2 + lv1 * lv1``) instead of bound to names, and the loop
  test as the ``while`` condition.
- ``del``: each intermediate array deleted after its last use.
- ``in place``: an intermediate that nothing else holds is updated through
  ``out=``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import autoloop as al
from autoloop.execute import executor
import bench_loops
import bench_memory
from harness import (check_result, command_line, environment, format_ratio, format_seconds, interleaved,
                     markdown_table)

ONE, TWO, THREE, ZERO = np.int32(1), np.int32(2), np.int32(3), np.int32(0)


# -- W1 sum_square ------------------------------------------------------------------------------
def sum_square_locals(p0, c6=ONE):
    v0 = (p0 - p0)
    lv1, lv2 = v0, v0
    while True:
        v3 = (lv1 < p0)
        if not v3:
            break
        v4 = (lv1 * lv1)
        v5 = (lv2 + v4)
        v7 = (lv1 + c6)
        lv1, lv2 = v7, v5
    return (lv2,)


def sum_square_nested(p0, c6=ONE):
    lv1 = lv2 = p0 - p0
    while lv1 < p0:
        lv1, lv2 = lv1 + c6, lv2 + lv1 * lv1
    return (lv2,)


# -- W2 collatz ---------------------------------------------------------------------------------
def collatz_locals(p0, c3=ONE, c5=TWO, c7=ZERO, c12=THREE):
    v0 = (p0 - p0)
    lv1, lv2 = p0, v0
    while True:
        v4 = (lv1 != c3)
        if not v4:
            break
        v6 = (lv1 % c5)
        v8 = (v6 == c7)
        if v8:
            v11 = (lv1 // c5)
            v9 = v11
        else:
            v13 = (c12 * lv1)
            v15 = (v13 + c3)
            v9 = v15
        v17 = (lv2 + c3)
        lv1, lv2 = v9, v17
    return (lv2,)


def collatz_nested(p0, c3=ONE, c5=TWO, c7=ZERO, c12=THREE):
    lv1, lv2 = p0, p0 - p0
    while lv1 != c3:
        if lv1 % c5 == c7:
            lv1 = lv1 // c5
        else:
            lv1 = c12 * lv1 + c3
        lv2 = lv2 + c3
    return (lv2,)


# -- W3 RNN -------------------------------------------------------------------------------------
def rnn_counter_index(p0, p1, p2, c1=np.int32(1000), c6=ONE):
    """The converted loop with ``x[t]`` read at the loop counter instead of through a range array."""
    lv3, lv4 = ZERO, p2
    while True:
        v5 = (lv3 < c1)
        if not v5:
            break
        v7 = (lv3 + c6)
        v9 = (p0 @ lv4)
        v10 = p1[lv3]
        v11 = (v9 + v10)
        v13 = np.tanh(v11)
        lv3, lv4 = v7, v13
    return (lv4,)


def rnn_nested(p0, p1, p2, c1=np.int32(1000), c6=ONE):
    lv3, lv4 = ZERO, p2
    while lv3 < c1:
        lv3, lv4 = lv3 + c6, np.tanh(p0 @ lv4 + p1[lv3])
    return (lv4,)


# -- the 4096² loop -----------------------------------------------------------------------------
HALF, QUARTER = np.float32(0.5), np.float32(0.25)


def tanh_loop_del(p0, c1=np.int32(3), c6=ONE):
    lv3, lv4 = ZERO, p0
    while True:
        v5 = (lv3 < c1)
        if not v5:
            break
        v7 = (lv3 + c6)
        v9 = (lv4 * HALF)
        v11 = (v9 + QUARTER)
        del v9
        v13 = np.tanh(v11)
        del v11
        lv3, lv4 = v7, v13
        del v13
    return (lv4,)


def tanh_loop_nested(p0, c1=np.int32(3), c6=ONE):
    lv3, lv4 = ZERO, p0
    while lv3 < c1:
        lv3, lv4 = lv3 + c6, np.tanh(lv4 * HALF + QUARTER)
    return (lv4,)


def tanh_loop_in_place(p0, c1=np.int32(3), c6=ONE):
    lv3, lv4 = ZERO, p0
    while lv3 < c1:
        v11 = lv4 * HALF  # a new array that nothing else holds: updated in place from here
        v11 += QUARTER
        lv3, lv4 = lv3 + c6, np.tanh(v11, out=v11)
        del v11
    return (lv4,)


# -- measuring ----------------------------------------------------------------------------------
def quiet(fn):
    """`fn` under numpy's error state of generated code (int32 wraps without a warning), set the
    way `CompiledGraph` sets it, so a variant pays what the generated code pays per call."""
    def run(*args):
        token = executor._ERROR_STATE.set(executor._IGNORE_ALL)
        try:
            return fn(*args)
        finally:
            executor._ERROR_STATE.reset(token)
    return run


def compiled_of(function, *args):
    compiled = function.get_concrete_function(*args).compiled
    return compiled, compiled.source


def scalar_loops(rounds: int):
    """{workload: (generated source, {variant: Timing})} for W1, W2 and W3."""
    results = {}
    limit = al.constant(100_000)
    generated, source = compiled_of(bench_loops._sum_square_python, limit)
    w1 = bench_loops.sum_square(100_000)
    x = np.int32(100_000)
    results["W1 sum_square"] = (source, {
        "numpy": w1.impls["numpy"], "generated": lambda: generated(x)[0],
        "locals": lambda: quiet(sum_square_locals)(x)[0], "nested": lambda: quiet(sum_square_nested)(x)[0]})

    generated_w2, source_w2 = compiled_of(bench_loops._collatz_python, al.constant(27))
    w2 = bench_loops.collatz(200)
    n = np.int32(27)

    def calls(fn):
        def run():
            for _ in range(200):
                result = fn(n)
            return result[0]
        return run
    results["W2 collatz"] = (source_w2, {
        "numpy": w2.impls["numpy"], "generated": calls(generated_w2), "locals": calls(quiet(collatz_locals)),
        "nested": calls(quiet(collatz_nested))})

    w3 = bench_loops.rnn(64, 1000)
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((64, 64)) / np.sqrt(64)).astype(np.float32)
    xs = rng.standard_normal((1000, 64)).astype(np.float32)
    h0 = np.zeros(64, np.float32)
    generated_w3, source_w3 = compiled_of(bench_loops._rnn_python, al.constant(w), al.constant(xs), al.constant(h0))
    results["W3 RNN"] = (source_w3, {
        "numpy": w3.impls["numpy"], "generated": lambda: generated_w3(w, xs, h0)[0],
        "counter index": lambda: quiet(rnn_counter_index)(w, xs, h0)[0],
        "nested": lambda: quiet(rnn_nested)(w, xs, h0)[0]})

    timings = {}
    for workload, (source, impls) in results.items():
        expected = impls["numpy"]()
        for name, fn in impls.items():
            check_result(workload, name, fn(), expected, rtol=1e-4 if workload == "W3 RNN" else 0.0)
        timings[workload] = (source, interleaved(impls, rounds))
    return timings


def memory_loop(size: int):
    """{variant: (peak bytes, input included)} for the tanh loop, and the generated source."""
    x = al.constant(np.full((size, size), 0.5, np.float32))
    generated, source = compiled_of(bench_memory.autoloop_converted, x, 3)
    variants = {"numpy by hand": lambda x: bench_memory.numpy_by_hand(x, 3),
                "generated": lambda x: generated(x)[0], "del": lambda x: quiet(tanh_loop_del)(x)[0],
                "nested": lambda x: quiet(tanh_loop_nested)(x)[0],
                "in place": lambda x: quiet(tanh_loop_in_place)(x)[0]}
    expected = bench_memory.numpy_by_hand(bench_memory.numpy_input(size), 3)
    peaks = {}
    for name, run in variants.items():
        peak, seconds, result = bench_memory.peak_of(lambda size: bench_memory.numpy_input(size),
                                                     lambda x, steps: run(x), size, 3)
        check_result("tanh loop", name, result, expected)
        peaks[name] = (peak, seconds)
    return source, peaks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="store_true", help="print the generated source of each workload")
    args = command_line(__doc__, argv, "a smaller tensor and fewer rounds: a smoke run", rounds=9, parser=parser)
    print("\n".join(environment()))
    for workload, (source, timings) in scalar_loops(3 if args.quick else args.rounds).items():
        if args.source:
            print(f"\n{workload}, generated today:\n\n{source}")
        rows = [[name, format_seconds(t.seconds.median), format_ratio(t.ratio)] for name, t in timings.items()]
        print(f"\n{workload}\n")
        print(markdown_table(["code", "time of one run, median", "vs numpy by hand"], rows))
    size = 512 if args.quick else 4096
    source, peaks = memory_loop(size)
    if args.source:
        print(f"\ntanh loop, generated today:\n\n{source}")
    rows = [[name, f"{peak / 2**20:.0f} MiB", f"{peak / (size * size * 4):.2f}", f"{seconds * 1e3:.0f} ms"]
            for name, (peak, seconds) in peaks.items()]
    print(f"\nx = tanh(x * 0.5 + 0.25), {size}² float32, 3 steps\n")
    print(markdown_table(["code", "peak traced memory", "in tensors (input included)", "time (one run)"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
