"""TensorArray writes in a graph loop: time per write stays flat as n grows (O(1) amortised).

    python benchmarks/bench_tensor_array.py            # n = 2k, 16k, 128k
    python benchmarks/bench_tensor_array.py --quick    # small sizes, a smoke run

Each workload writes n scalars in one graph loop and stacks them: a
`while_loop` over ``ta.write(i, i * 3)`` on a growing TensorArray, and the
same loop as converted Python appending to a list. We report the best of a
few runs (after a warm-up that traces and compiles), the time per write,
and that time relative to the smallest n: a linear cost gives about 1.0x at
every n, a quadratic one (copying the elements on each write) grows with n.
"""

from __future__ import annotations

import argparse
import time

import autoloop as al


def best_time(fn, repeats: int) -> float:
    fn()  # warm-up: trace, compile
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@al.function(autograph=False)
def while_loop_writes(n):
    ta = al.TensorArray(al.int32, size=0, dynamic_size=True)
    return al.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * 3)), (0, ta))[1].stack()


@al.function
def converted_appends(n):
    multiples = []
    for i in al.range(n):
        multiples.append(i * 3)
    return al.stack(multiples)


WORKLOADS = {"while_loop, ta.write": while_loop_writes, "converted Python, list.append": converted_appends}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run, not a measurement")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = [200, 1_600, 12_800] if args.quick else [2_000, 16_000, 128_000]
    print("| workload | n | time | per write | per write vs smallest n |")
    print("| --- | --- | --- | --- | --- |")
    for title, fn in WORKLOADS.items():
        first = None
        for n in sizes:
            limit = al.constant(n)
            result = fn(limit).numpy()
            assert len(result) == n and result[-1] == 3 * (n - 1), result[-3:]
            seconds = best_time(lambda: fn(limit), args.repeats)
            per_write = seconds / n
            first = per_write if first is None else first
            print(f"| {title} | {n:,} | {seconds * 1e3:.1f} ms | {per_write * 1e6:.2f} µs | "
                  f"{per_write / first:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
