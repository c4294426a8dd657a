"""The JAX backend on a GPU: W1–W4 against hand-written JAX, and the sharded Newton loop over the GPUs.

    python benchmarks/bench_gpu.py            # needs jax with CUDA (pip install 'jax[cuda12]') and a GPU
    python benchmarks/bench_gpu.py --quick    # a smoke run

Where JAX sees no GPU it says so and exits with status 0, measuring nothing
(the CPU figures are bench_jax's and bench_distributed's). On a GPU it prints
the card's name, bench_jax's steady-state table (JAX's default device is then
the GPU, so both autoloop and the hand-written loops run there), and
samples/sharded_newton.py's loop on one GPU and sharded over all of them
(one process; several hosts are bench_distributed's recipe).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

import bench_jax
from harness import command_line, environment, optional

ROOT = Path(__file__).resolve().parents[1]


def gpus() -> list:
    """JAX's GPU devices, or [] where there are none (or no JAX)."""
    jax = optional("jax")
    if jax is None:
        return []
    try:
        return jax.devices("gpu")
    except RuntimeError:  # no GPU backend in this jaxlib, or no card
        return []


def sharded_newton(devices: list, batch: int, calls: int) -> list[str]:
    """Per-call time of the sharded sample on the first GPU and on all of them, as table rows."""
    import jax

    import autoloop as al
    sys.path.insert(0, str(ROOT / "samples"))
    from sharded_newton import newton_sqrt

    values = np.random.default_rng(0).uniform(0.01, 1e6, size=batch).astype(np.float32)
    function = al.function(newton_sqrt, backend="jax", jax_arrays=True)
    rows = []
    for used in ([devices[0]], devices) if len(devices) > 1 else ([devices[0]],):
        mesh = jax.sharding.Mesh(np.array(used), ("entries",))
        placed = jax.device_put(values, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("entries")))
        function(placed)[0].block_until_ready()
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            function(placed)[0].block_until_ready()
            times.append(time.perf_counter() - started)
        rows.append(f"| {len(used)} GPU(s) | {batch:,} | {statistics.median(times) * 1e3:.2f} ms |")
    return ["| devices | batch | per call (median) |", "| --- | ---: | ---: |", *rows]


def main(argv=None) -> int:
    args = command_line(__doc__, argv, "small sizes and few rounds: a smoke run", rounds=15)
    devices = gpus()
    if not devices:
        print("no GPU visible to JAX (install jax with CUDA on a machine with a card): nothing measured")
        return 0
    print("\n".join(["```", *environment(), f"GPU: {devices[0].device_kind} x {len(devices)}", "```", ""]))
    print("\n".join(bench_jax.tables(args.quick, 2 if args.quick else args.rounds, 1, parts=("steady",))))
    print("Sharded Newton loop (samples/sharded_newton.py):\n")
    print("\n".join(sharded_newton(devices, 1 << 12 if args.quick else 1 << 24, 3 if args.quick else 20)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
