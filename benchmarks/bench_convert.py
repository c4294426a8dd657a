"""Conversion speed: a 7-line and a 40-line function, converted without the cache.

    python benchmarks/bench_convert.py

Targets: at most 3 ms and 20 ms per conversion. Each conversion runs the
whole compiler (find source, parse, analyse, every pass, unparse, compile);
the per-function and per-code caches are bypassed.
"""

from __future__ import annotations

import statistics
import sys
import time

from autoloop.compiler import conversion


def short(n):
    i, result = 0, 0
    while i < n:
        result += i * i
        i += 1
    return result


def long(xs, n, limit):
    total = 0
    count = 0
    for step in range(n):
        if step % 3 == 0:
            continue
        if total < limit:
            j = 0
            while j < step:
                if xs[j] < 0:
                    break
                total += xs[j] * step
                j += 1
            count += 1
        else:
            k = step
            while k > 0:
                k -= 2
                if k == 5:
                    continue
                total -= k
        if total > 10 * limit:
            return total
        scale = 2 if step > 4 else 1
        total = total * scale
        if count > 7 and total > limit:
            count = 0
        elif count > 3:
            count -= 1
        else:
            count += 1
    while count > 0:
        count -= 1
        total += count
        if total < 0:
            break
    result = total + count
    assert result >= -1000, "result out of range"
    print("result", result)
    return result


def measure(function, repeats=200):
    conversion._convert_uncached(function)  # warm imports and template parses
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        conversion._convert_uncached(function)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, min(times) * 1e3


def main():
    results = {}
    for name, function, target in (("7-line", short, 3.0), ("40-line", long, 20.0)):
        median, best = measure(function)
        results[name] = median
        status = "ok" if median <= target else "SLOW"
        print(f"{name:8s} median {median:6.2f} ms  best {best:6.2f} ms  target {target:4.1f} ms  {status}")
    return 0 if results["7-line"] <= 3.0 and results["40-line"] <= 20.0 else 1


if __name__ == "__main__":
    sys.exit(main())
