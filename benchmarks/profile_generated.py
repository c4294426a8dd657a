"""What the generated code of each workload costs, apart from the call around it, against numpy by hand.

    python benchmarks/profile_generated.py            # print the tables
    python benchmarks/profile_generated.py --source   # also print the generated source of each workload

For each loop workload this prints the code the compiled executor generates
and times, interleaved with numpy by hand on the same inputs (results
checked), three layers of the same run: the generated function alone
(which sets numpy's error state and maps failures itself), the compiled
graph (`CompiledGraph.__call__` around it) and the `@autoloop.function`
call (trace lookup, tensors in and out). The difference between the layers
is the fixed cost of a call; the first layer against numpy is the code
generator's. For the 4096² ``tanh`` loop it measures the peak memory of
the generated code against numpy by hand and numpy in place. The findings
are written up in benchmarks/PROFILE.md.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import autoloop as al
import bench_loops
import bench_memory
from harness import (check_result, command_line, environment, format_ratio, format_seconds, interleaved,
                     markdown_table)


def layers(function, args, calls: int = 1) -> tuple[str, dict]:
    """(generated source, {layer: zero-argument callable}) for `function` on tensors `args`, each
    callable running it `calls` times and giving the last result as a numpy value."""
    compiled = function.get_concrete_function(*args).compiled
    arrays = [t.numpy() for t in args]
    generated = compiled.generated  # complete: it sets numpy's error state and maps failures itself

    def repeated(fn, *args):
        def run():
            for _ in range(calls):
                result = fn(*args)
            return result
        return run
    return compiled.source, {
        "generated code": (lambda run=repeated(generated, *arrays): run()[0]),
        "compiled graph": (lambda run=repeated(compiled, *arrays): run()[0]),
        "@function call": (lambda run=repeated(function, *args): run().numpy()),
    }


def loop_workloads(rounds: int, quick: bool):
    """{workload: (generated source, {implementation: Timing})}."""
    n, calls, d, steps, doublings = (2_000, 5, 16, 50, 5) if quick else (100_000, 200, 64, 1_000, 16)
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    xs = rng.standard_normal((steps, d)).astype(np.float32)
    cases = {
        "W1 sum_square": (bench_loops.sum_square(n), bench_loops._sum_square_python, [al.constant(n)], 1, 0.0),
        "W2 collatz": (bench_loops.collatz(calls), bench_loops._collatz_python, [al.constant(27)], calls, 0.0),
        "W3 RNN": (bench_loops.rnn(d, steps), bench_loops._rnn_python,
                   [al.constant(w), al.constant(xs), al.constant(np.zeros(d, np.float32))], 1, 1e-4),
        "W5 concat doubling": (bench_loops.concat_doubling(doublings), bench_loops.concat_python(doublings),
                               [al.constant(np.ones((2, 2), np.float32))], 1, 0.0),
    }
    results = {}
    for name, (workload, function, args, repeat, rtol) in cases.items():
        source, impls = layers(function, args, repeat)
        impls = {"numpy": workload.impls["numpy"], **impls}
        expected = impls["numpy"]()
        for impl, fn in impls.items():
            check_result(name, impl, fn(), expected, rtol=rtol, atol=rtol)
        results[name] = (source, interleaved(impls, rounds))
    return results


def memory_loop(size: int):
    """{implementation: (peak bytes, input included; seconds)} for the tanh loop, and the generated source."""
    x = al.constant(bench_memory.numpy_input(size))
    compiled = bench_memory.autoloop_converted.get_concrete_function(x, 3).compiled
    variants = {"numpy by hand": lambda x: bench_memory.numpy_by_hand(x, 3),
                "numpy in place": lambda x: bench_memory.numpy_in_place(x, 3),
                "generated code": lambda x: compiled(x)[0]}
    expected = bench_memory.numpy_by_hand(bench_memory.numpy_input(size), 3)
    peaks = {}
    for name, run in variants.items():
        peak, seconds, result = bench_memory.peak_of(bench_memory.numpy_input, lambda x, steps: run(x), size, 3)
        check_result("tanh loop", name, result, expected)
        peaks[name] = (peak, seconds)
    return compiled.source, peaks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="store_true", help="print the generated source of each workload")
    args = command_line(__doc__, argv, "a smaller tensor and fewer rounds: a smoke run", rounds=15, parser=parser)
    print("\n".join(environment()))
    for workload, (source, timings) in loop_workloads(3 if args.quick else args.rounds, args.quick).items():
        if args.source:
            print(f"\n{workload}, generated:\n\n{source}")
        rows = [[name, format_seconds(t.seconds.median), format_ratio(t.ratio)] for name, t in timings.items()]
        print(f"\n{workload}\n")
        print(markdown_table(["code", "time of one run, median", "vs numpy by hand"], rows))
    size = 512 if args.quick else 4096
    source, peaks = memory_loop(size)
    if args.source:
        print(f"\ntanh loop, generated:\n\n{source}")
    rows = [[name, f"{peak / 2**20:.0f} MiB", f"{peak / (size * size * 4):.2f}", f"{seconds * 1e3:.0f} ms"]
            for name, (peak, seconds) in peaks.items()]
    print(f"\nx = tanh(x * 0.5 + 0.25), {size}² float32, 3 steps\n")
    print(markdown_table(["code", "peak traced memory", "in tensors (input included)", "time (one run)"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
