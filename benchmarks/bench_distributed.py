"""Scaling of a sharded batched loop over processes of JAX's distributed runtime (needs the jax extra).

    python benchmarks/bench_distributed.py               # README's scaling table
    python benchmarks/bench_distributed.py --quick       # a smoke run (not a measurement)

The workload is samples/sharded_newton.py's per-entry Newton iteration
(`backend="jax"`): every entry runs until its own residual is small, and the
loop's condition is a `reduce_any` over the whole batch, so each iteration
all-reduces one boolean across processes. It runs on 1 and on 2 local
processes (one CPU device each, Gloo between them):

- strong scaling: the same total batch split over the processes;
- weak scaling: the same batch per process, so the total grows.

Each configuration is a fresh set of processes (`autoloop run --processes`'s
launcher is not used: the workers time their own calls). A worker joins the
runtime, shards its batch, compiles with one call, then times `--calls`
calls, each waited for (``block_until_ready``); process 0 reports the median
and min–max. Each process stands for one host with one core: it is pinned to
its own core (process i to core i) and XLA's CPU runtime runs single-threaded
in it (``--xla_cpu_multi_thread_eigen=false``), so 1 process is one core and
2 processes are two (``--shared-cores`` lets XLA's threads and the processes
share the cores instead).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _worker(batch: int, calls: int) -> None:
    import numpy as np

    import autoloop as al
    sys.path.insert(0, str(ROOT / "samples"))
    from sharded_newton import newton_sqrt

    cluster = al.distributed.initialize()
    if os.environ.get("BENCH_PIN") == "1":
        os.sched_setaffinity(0, {cluster.process_id % os.cpu_count()})
    values = np.random.default_rng(0).uniform(0.01, 1e6, size=batch).astype(np.float32)
    function = al.function(newton_sqrt, backend="jax", jax_arrays=True)
    sharded = al.distributed.shard(values)
    roots, steps = function(sharded)
    roots.block_until_ready()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        roots, _ = function(sharded)
        roots.block_until_ready()
        times.append(time.perf_counter() - started)
    total_steps = int(al.distributed.gather(steps).max())
    if cluster.process_id == 0:
        print(json.dumps({"median": statistics.median(times), "min": min(times), "max": max(times),
                          "iterations": total_steps}))
    al.distributed.shutdown()


def measure(processes: int, batch: int, calls: int, pinned: bool = True) -> dict:
    """Time one configuration in fresh worker processes; process 0's figures."""
    from autoloop.cli.processes import free_port
    address = f"127.0.0.1:{free_port()}"
    workers = [subprocess.Popen([sys.executable, __file__, "--worker", str(batch), str(calls)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env=dict(os.environ, JAX_COORDINATOR_ADDRESS=address,
                                         JAX_NUM_PROCESSES=str(processes), JAX_PROCESS_ID=str(index),
                                         **(_PINNED if pinned else {})))
               for index in range(processes)]
    outputs = [worker.communicate(timeout=600)[0] for worker in workers]
    if any(worker.returncode for worker in workers):
        raise RuntimeError(f"a worker failed: exit statuses {[worker.returncode for worker in workers]}")
    return json.loads([line for line in outputs[0].splitlines() if line.startswith("{")][-1])


_PINNED = {"BENCH_PIN": "1", "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def table(per_process: int, calls: int, pinned: bool = True) -> str:
    one_small = measure(1, per_process, calls, pinned)
    one_large = measure(1, 2 * per_process, calls, pinned)
    two = measure(2, 2 * per_process, calls, pinned)

    def ms(figures):
        return f"{figures['median'] * 1e3:.1f} ms ({figures['min'] * 1e3:.1f}–{figures['max'] * 1e3:.1f})"

    rows = [
        "| configuration | total batch | per call | vs 1 process |",
        "| --- | ---: | ---: | ---: |",
        f"| 1 process | {per_process:,} | {ms(one_small)} | 1.00x |",
        f"| 1 process | {2 * per_process:,} | {ms(one_large)} | 1.00x |",
        f"| 2 processes, strong scaling (the same {2 * per_process:,}) | {2 * per_process:,} | {ms(two)} | "
        f"{one_large['median'] / two['median']:.2f}x faster |",
        f"| 2 processes, weak scaling ({per_process:,} each) | {2 * per_process:,} | {ms(two)} | "
        f"{one_small['median'] / two['median']:.2f} efficiency |",
    ]
    note = (f"The loop ran {two['iterations']} iterations (the slowest entry's Newton steps); each call is the median "
            f"of {calls} after a compiling call.")
    return "\n".join(rows + ["", note])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--per-process", type=int, default=None, help="entries per process (weak scaling)")
    parser.add_argument("--shared-cores", action="store_true",
                        help="no pinning: XLA's threads and the processes share the cores")
    parser.add_argument("--worker", nargs=2, type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        _worker(*arguments.worker)
        return
    per_process = arguments.per_process or (1 << 12 if arguments.quick else 1 << 20)
    calls = arguments.calls or (3 if arguments.quick else 15)
    print(table(per_process, calls, pinned=not arguments.shared_cores))


if __name__ == "__main__":
    main()
