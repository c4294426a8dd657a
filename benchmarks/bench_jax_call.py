"""W2's cached ``backend="jax"`` call, layer by layer, against the same call of ``jax.jit`` by hand.

    python benchmarks/bench_jax_call.py             # 300 rounds of 200 calls per layer
    python benchmarks/bench_jax_call.py --quick     # a smoke run

W2 (bench_jax) calls ``collatz(27)`` 200 times: a 111-step scalar loop of
about 6 µs, nearly all of it JAX's dispatch, so what autoloop adds around
that dispatch is what W2's ratio measures. Each row adds one layer to the
row above it:

- results copied to the host: *by hand* ``np.asarray(jitted(x))``; *the
  program* the trace's compiled XLA program called by hand the same way (for
  a loop with no bound known when compiling, its quick form:
  `autoloop.backends.jax.interrupts`); *its run* what the trace runs per call
  (the program, the give-up check, the result Tensor); *the Function call*
  ``f(x).numpy()``, as bench_jax times it (argument check, the run);
- results left on the device (``jax_arrays=True``): *by hand*
  ``jitted(x).block_until_ready()``; *the watched program by hand* (the program:
  such a function returns before its result is read, so it has no quick
  form); *the Function call* ``f(x).block_until_ready()``.

A sample is 200 calls; the samples of a group's rows alternate, many rounds
(the groups are timed one after the other, as in bench_jax); on a
shared machine the least sample of a row is its cost with the least
interference, so the table gives the least and the 10th percentile per call,
and each row's ratio to its *by hand* as the ratio of the least samples and
as the median over rounds of the same-round ratio.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

import numpy as np

import bench_loops
from harness import check_result, command_line, environment, markdown_table, optional


def layers() -> list[tuple[str, dict]]:
    """[(group, {row: zero-argument callable})], each group's first row its by-hand baseline."""
    import jax
    import jax.numpy as jnp

    import autoloop as al
    from bench_jax import workload
    _, _, by_hand, _, _ = workload("W2", 1)
    jitted, x = jax.jit(by_hand), jnp.int32(27)
    to_host = al.function(bench_loops.collatz_python, backend="jax")
    on_device = al.function(bench_loops.collatz_python, backend="jax", jax_arrays=True)
    for function in (to_host, on_device):
        for _ in range(3):  # traced, then the short path, then the shortest
            function(x)
    trace, device_trace = to_host.get_concrete_function(x), on_device.get_concrete_function(x)
    program, device_program = trace.compiled, device_trace.compiled
    quick = program._quick or program._jitted
    run, inputs = trace.run_flat, (x,)
    groups = [("results on the host", {
        "by hand: np.asarray(jitted(x))": lambda: np.asarray(jitted(x)),
        "the program by hand": lambda: np.asarray(quick(x))[()],
        "its run (program, checks, result Tensor)": lambda: run(inputs),
        "the Function call: f(x).numpy()": lambda: to_host(x).numpy()}),
        ("results on the device (jax_arrays=True)", {
            "by hand: jitted(x).block_until_ready()": lambda: jitted(x).block_until_ready(),
            "the watched program by hand": lambda: device_program._jitted(x).block_until_ready(),
            "the Function call: f(x).block_until_ready()": lambda: on_device(x).block_until_ready()})]
    for _, rows in groups:
        for name, call in rows.items():
            check_result("W2", name, np.asarray(call()), np.int32(111))
    return groups


def measure(groups, rounds: int, calls: int = 200) -> dict:
    """{row: per-call seconds of each round}, the rows of a group interleaved round by round; the groups one
    after the other, as bench_jax times them (a program run between the samples of another slows it: caches)."""
    samples: dict = {}
    gc.collect()
    gc.freeze()
    try:
        for _, rows in groups:
            samples.update({name: [] for name in rows})
            for _ in range(rounds):
                for name, call in rows.items():
                    start = time.perf_counter()
                    for _ in range(calls):
                        call()
                    samples[name].append((time.perf_counter() - start) / calls)
    finally:
        gc.unfreeze()
    return samples


def table(groups, samples) -> str:
    lines = []
    for title, group in groups:
        baseline = samples[next(iter(group))]
        rows = []
        for name in group:
            times = sorted(samples[name])
            same_round = statistics.median(t / b for t, b in zip(samples[name], baseline))
            rows.append([name, f"{times[0] * 1e6:.2f} µs", f"{times[len(times) // 10] * 1e6:.2f} µs",
                         f"{times[0] / min(baseline):.3f}x", f"{same_round:.3f}x"])
        lines.append(markdown_table([title, "least", "10th percentile", "ratio of least", "median same-round ratio"],
                                    rows))
    return "\n\n".join(lines)


def main(argv=None) -> int:
    args = command_line(__doc__, argv, "20 rounds: a smoke run", rounds=300)
    if optional("jax") is None:
        print("jax is not installed (pip install 'autoloop[jax]'): nothing to compare", file=sys.stderr)
        return 0
    groups = layers()
    print("\n".join(environment()))
    print(table(groups, measure(groups, 20 if args.quick else args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
