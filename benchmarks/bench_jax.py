"""autoloop's JAX backend against the same loops written by hand with ``jax.jit`` + ``jax.lax``.

    python benchmarks/bench_jax.py              # full sizes (W1–W4 of bench_loops)
    python benchmarks/bench_jax.py --quick      # small sizes, few rounds: a smoke run, not a measurement
    python benchmarks/bench_jax.py --part steady --workloads W2 --rounds 30   # one workload's steady state

Workloads (bench_loops' W1–W4): W1 ``sum_square`` n = 100,000; W2 ``collatz(27)``
called 200 times; W3 RNN d = 64, T = 1,000; W4 ``m = m @ w``, 512², 20 steps.

Steady state, two groups, each against its own hand-written baseline:

- results copied to the host: *by hand* is the loop written with
  ``jax.lax.while_loop``/``fori_loop``/``cond`` under ``jax.jit``, called on
  JAX arrays, its result copied to a numpy array (``np.asarray``: autoloop's
  Tensors hold numpy values). *autoloop on JAX arrays* is bench_loops' plain
  Python loop under ``autoloop.function(backend="jax")`` called on the same
  JAX arrays, returning a Tensor; *autoloop on Tensors* is called on autoloop
  Tensors instead, whose numpy values are copied to the device on each call;
- results left on the device: *by hand* returns its ``jax.Array``
  (``block_until_ready``); *autoloop, jax_arrays=True* returns JAX arrays.

Steady state: interleaved rounds in this process after warm-up calls
(`harness.interleaved`), ratio to the baseline within each round; a sample
repeats a short workload for about 20 ms (the first JAX call after the
harness's garbage collection is about 0.1 ms slower: cold caches).

Cold first call: conversion, tracing, lowering, XLA compilation and the run,
each sample in a fresh Python process (nothing cached: JAX's persistent
compilation cache is off, autoloop's caches are per process; Python's
bytecode files are used, as for an installed package, and written by a
discarded first process). The process
imports numpy, JAX and autoloop and starts JAX's CPU client (``jax.devices()``,
the same for both) before the clock starts, and freezes the heap (as
`harness.interleaved` does: a full garbage collection with JAX loaded takes
about 50 ms and would land on whichever call allocates last); the clock then
covers making the function (``autoloop.function(...)`` or ``jax.jit(...)``)
and its first call.
Samples alternate between the implementations; the ratio is the median over
rounds of (autoloop / by hand) within a round.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import bench_loops
from harness import (Spread, check_result, command_line, environment, format_ratio, format_seconds,
                     format_spread, interleaved, markdown_table, optional)

BASELINE = "by hand"
SIZES = {"full": {"W1": 100_000, "W2": 200, "W3": (64, 1_000), "W4": (512, 20)},
         "quick": {"W1": 2_000, "W2": 5, "W3": (16, 50), "W4": (32, 3)}}
TITLES = {"W1": "sum_square, n = {:,}", "W2": "collatz(27) called {} times", "W3": "RNN d = {}, T = {:,}",
          "W4": "m = m @ w, {0} × {0}, {1} steps"}


# -- the workloads: (autoloop's Python function, its arguments, the hand-written jitted function, its
#    arguments, calls per run); the hand-written functions are bench_loops' ---------------------------
def _al():
    import autoloop
    return autoloop


def workload(key: str, size):
    """(python function, autoloop arguments, jax function (unjitted), jax arguments, calls per run)."""
    import jax
    import jax.numpy as jnp
    al = _al()
    rng = np.random.default_rng(0)
    if key == "W1":
        def by_hand(limit):
            return jax.lax.while_loop(lambda s: s[0] < limit, lambda s: (s[0] + 1, s[1] + s[0] * s[0]),
                                      (jnp.int32(0), jnp.int32(0)))[1]
        return bench_loops.sum_square_python, (al.constant(size),), by_hand, (jnp.int32(size),), 1
    if key == "W2":
        def by_hand(n):
            def body(state):
                n, steps = state
                return jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n), steps + 1
            return jax.lax.while_loop(lambda s: s[0] != 1, body, (n, jnp.int32(0)))[1]
        return bench_loops.collatz_python, (al.constant(27),), by_hand, (jnp.int32(27),), size
    if key == "W3":
        d, steps = size
        w = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
        x = rng.standard_normal((steps, d)).astype(np.float32)
        h = np.zeros(d, np.float32)

        def by_hand(w, x, h):
            return jax.lax.fori_loop(0, x.shape[0], lambda t, h: jnp.tanh(w @ h + x[t]), h)
        return (bench_loops._rnn_python.python_function, tuple(map(al.constant, (w, x, h))), by_hand,
                tuple(map(jnp.asarray, (w, x, h))), 1)
    if key == "W4":
        n, steps = size
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        w, m = q.astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)

        def by_hand(m, w):
            return jax.lax.fori_loop(0, steps, lambda t, m: m @ w, m)
        return (bench_loops.matmul_python, (al.constant(m), al.constant(w), al.constant(steps)), by_hand,
                (jnp.asarray(m), jnp.asarray(w)), 1)
    raise ValueError(key)


def _repeated(fn, calls):
    def run():
        for _ in range(calls):
            result = fn()
        return result
    return run


def steady_groups(key: str, size) -> list[dict]:
    """Two groups of implementations, each timed against its own "by hand" (see the module docstring):
    results copied to the host, and results left on the device."""
    import jax
    python, al_args, by_hand, jax_args, calls = workload(key, size)
    al = _al()
    tensors = al.function(python, backend="jax")
    arrays = al.function(python, backend="jax", jax_arrays=True)
    jitted = jax.jit(by_hand)
    on_jax = tuple(jax.numpy.asarray(a.numpy()) for a in al_args)  # autoloop's arguments as JAX arrays
    to_host = {
        "by hand": _repeated(lambda: np.asarray(jitted(*jax_args)), calls),
        "autoloop on JAX arrays": _repeated(lambda: tensors(*on_jax).numpy(), calls),
        "autoloop on Tensors": _repeated(lambda: tensors(*al_args).numpy(), calls),
    }
    on_device = {
        "by hand": _repeated(lambda: jitted(*jax_args).block_until_ready(), calls),
        "autoloop, jax_arrays=True": _repeated(lambda: arrays(*on_jax).block_until_ready(), calls),
    }
    return [to_host, on_device]


def _repeat_for(fn, sample_seconds: float = 0.02) -> int:
    """Runs per sample so that one sample takes about `sample_seconds`: the first JAX call after the
    harness's garbage collection is slower by about 0.1 ms (cold caches), which one short run would show."""
    start = time.perf_counter()
    fn()
    return max(1, int(sample_seconds / max(time.perf_counter() - start, 1e-7)))


# -- steady state --------------------------------------------------------------------------------------
def measure_steady(sizes: dict, rounds: int, progress=None) -> dict:
    """{workload: [timings of the to-host group, timings of the on-device group]}."""
    results = {}
    for key, size in sizes.items():
        groups = steady_groups(key, size)
        expected = np.asarray(groups[0][BASELINE]())
        for group in groups:
            for name, fn in group.items():
                fn()  # the first call traces; the second takes the short path (`autoloop.function`)
                check_result(key, name, np.asarray(fn()), expected, rtol=1e-4, atol=1e-4)
        results[key] = [interleaved(group, rounds, repeat=_repeat_for(group[BASELINE]), baseline=BASELINE)
                        for group in groups]
        if progress:
            progress(f"{key} steady state done")
    return results


# -- cold first calls, each in a fresh process -----------------------------------------------------------
def _cold_child(key: str, size, implementation: str) -> float:
    """Seconds of the first call of `implementation` of `key` (run in a fresh process)."""
    import jax
    jax.devices()  # start the CPU client: the same for both, before the clock
    python, al_args, by_hand, jax_args, _ = workload(key, size)
    al = _al()
    gc.collect()
    gc.freeze()  # the harness's rule: what exists now stays out of collections while the clock runs
    start = time.perf_counter()
    if implementation == "autoloop":
        al.function(python, backend="jax")(*al_args).numpy()
    else:
        np.asarray(jax.jit(by_hand)(*jax_args))
    return time.perf_counter() - start


def _cold_sample(key: str, mode: str, implementation: str) -> float:
    # No compilation cache; bytecode written and read (PYTHONDONTWRITEBYTECODE unset), as an installed
    # package has it (`measure_cold` runs a discarded process first, which writes it).
    environment_ = {k: v for k, v in os.environ.items()
                    if not k.startswith("JAX_COMPILATION_CACHE") and k != "PYTHONDONTWRITEBYTECODE"}
    environment_["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--cold-child", key, mode, implementation],
                          capture_output=True, text=True, timeout=600, env=environment_)
    if done.returncode != 0:
        raise RuntimeError(f"cold {key} {implementation} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_cold(mode: str, rounds: int, progress=None, keys=None) -> dict:
    """{workload: {"by hand": Spread, "autoloop, backend=jax": Spread, "ratio": Spread}} of `keys` (all by default)."""
    results = {}
    for implementation in ("hand", "autoloop"):
        _cold_sample("W1", mode, implementation)  # discarded: writes the bytecode of what the first call imports
    for key in keys or SIZES[mode]:
        hand, ours = [], []
        for round_ in range(rounds):
            order = ("hand", "autoloop") if round_ % 2 == 0 else ("autoloop", "hand")
            samples = {name: _cold_sample(key, mode, name) for name in order}
            hand.append(samples["hand"])
            ours.append(samples["autoloop"])
        results[key] = {"by hand": Spread.of(hand), "autoloop, backend=jax": Spread.of(ours),
                        "ratio": Spread.of(a / h for a, h in zip(ours, hand))}
        if progress:
            progress(f"{key} cold first calls done")
    return results


# -- tables ----------------------------------------------------------------------------------------------
def _title(key: str, size) -> str:
    return f"{key} " + TITLES[key].format(*(size if isinstance(size, tuple) else (size,)))


def steady_table(results: dict, sizes: dict) -> str:
    rows = []
    for key, (to_host, on_device) in results.items():
        def cell(timings, name):
            return f"{format_seconds(timings[name].seconds.median)}, {format_ratio(timings[name].ratio)}"
        rows.append([_title(key, sizes[key]), format_seconds(to_host[BASELINE].seconds.median),
                     cell(to_host, "autoloop on JAX arrays"), cell(to_host, "autoloop on Tensors"),
                     format_seconds(on_device[BASELINE].seconds.median), cell(on_device, "autoloop, jax_arrays=True")])
    return markdown_table(["workload", "by hand", "autoloop on JAX arrays", "autoloop on Tensors",
                           "by hand, result on device", "autoloop, jax_arrays=True"], rows)


def cold_table(results: dict, sizes: dict) -> str:
    rows = [[_title(key, sizes[key]), format_spread(r["by hand"]), format_spread(r["autoloop, backend=jax"]),
             format_ratio(r["ratio"])] for key, r in results.items()]
    return markdown_table(["workload", "by hand: jax.jit + first call", "autoloop, backend=jax: first call",
                           "autoloop / by hand"], rows)


def tables(quick: bool, rounds: int, cold_rounds: int, parts=("steady", "cold"), progress=None,
           workloads=None) -> list[str]:
    """The markdown lines of the steady-state and cold-call tables (what README shows), of `workloads` (all
    by default)."""
    mode = "quick" if quick else "full"
    sizes = {key: size for key, size in SIZES[mode].items() if workloads is None or key in workloads}
    lines = []
    if "steady" in parts:
        lines += ["Steady state (one run of the workload; ratio to by hand within a round, median (min–max)):",
                  "", steady_table(measure_steady(sizes, rounds, progress), sizes), ""]
    if "cold" in parts:
        lines += [f"Cold first call, each in a fresh process ({cold_rounds} rounds; median (min–max)):", "",
                  cold_table(measure_cold(mode, cold_rounds, progress, list(sizes)), sizes), ""]
    return lines


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--cold-child":
        key, mode, implementation = sys.argv[2:5]
        print(json.dumps(_cold_child(key, SIZES[mode][key], implementation)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("steady", "cold", "both"), default="both", help="what to measure")
    parser.add_argument("--cold-rounds", type=int, default=9, help="fresh processes per implementation and workload")
    parser.add_argument("--workloads", nargs="+", choices=tuple(TITLES), help="measure these only (default: all)")
    args = command_line(__doc__, argv, "small sizes and few rounds: a smoke run", rounds=15, parser=parser)
    if optional("jax") is None:
        print("jax is not installed (pip install 'autoloop[jax]'): nothing to compare", file=sys.stderr)
        return 0
    parts = ("steady", "cold") if args.part == "both" else (args.part,)
    lines = tables(args.quick, 2 if args.quick else args.rounds, 1 if args.quick else args.cold_rounds, parts,
                   progress=lambda line: print(line, file=sys.stderr), workloads=args.workloads)
    print("\n".join(["```", *environment(), "```", ""] + lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
