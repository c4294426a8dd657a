"""Conversion speed: a 7-line and a 40-line function, converted from scratch (and by AutoGraph).

    python benchmarks/bench_convert.py            # 200 conversions each
    python benchmarks/bench_convert.py --quick    # 10 each

Targets: at most 3 ms and 20 ms per conversion. Each conversion is
`autoloop.to_code` of a new copy of the function (`harness.fresh_function`:
a new code object, so no cache helps): the whole compiler runs (find
source, parse, analyse, every pass, unparse, compile). When TensorFlow is
installed, `tf.autograph.to_code` converts the same copies, interleaved.
"""

from __future__ import annotations

import functools
import sys

import autoloop as al
from harness import (command_line, environment, format_spread, fresh_function, markdown_table, optional,
                     skipped_frameworks, time_each)

TARGETS = {"short": 3e-3, "long": 20e-3}  # seconds


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


def conversions(function) -> dict:
    """{converter: setup}; a setup makes a fresh copy of `function` (untimed) and returns its conversion."""
    converters = {"autoloop": al.to_code}
    tf = optional("tensorflow")
    if tf is not None:
        converters["AutoGraph"] = tf.autograph.to_code
    for convert in converters.values():
        convert(fresh_function(function))  # imports, template parses
    return {name: (lambda convert=convert: functools.partial(convert, fresh_function(function)))
            for name, convert in converters.items()}


def measure(rounds: int = 200) -> dict:
    """{function name: {converter: Spread of seconds}}."""
    return {function.__name__: time_each(conversions(function), rounds) for function in (short, long)}


def table(results) -> str:
    rows = []
    for name, spreads in results.items():
        lines = {"short": 7, "long": 40}[name]
        for converter, spread in spreads.items():
            target = TARGETS[name] if converter == "autoloop" else None
            status = "" if target is None else ("ok" if spread.median <= target else "SLOW")
            rows.append([f"{lines}-line", converter, format_spread(spread),
                         "" if target is None else f"{target * 1e3:.0f} ms {status}"])
    return markdown_table(["function", "converter", "time per conversion, median (min–max)", "target"], rows)


def main(argv=None) -> int:
    args = command_line(__doc__, argv, "10 conversions each: a smoke run")
    print("\n".join(environment() + skipped_frameworks()))
    results = measure(10 if args.quick else 200)
    print(table(results))
    slow = [name for name, spreads in results.items() if spreads["autoloop"].median > TARGETS[name]]
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
