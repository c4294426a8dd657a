"""A batched scan whose entries stop at very different steps: compaction vs masking vs one entry at a time.

    python benchmarks/bench_scan.py            # 64 entries, lengths up to 1,000
    python benchmarks/bench_scan.py --quick    # 16 entries, lengths up to 100: a smoke run

Each entry b carries ``h[b]`` (256 float32 values) and runs
``h = tanh(h @ W)`` (W: 256 x 256) for ``lengths[b]`` steps, the lengths
drawn from a long-tailed distribution (most a few steps, a few up to 1,000).
Workloads, each one traced `autoloop.function`:

- ``scan`` with ``cond_dims=[64]`` and compaction ``"auto"`` (the default:
  the body is proven to treat rows independently, so the rows of finished
  entries are dropped as they finish: sum(lengths) rows in all);
- the same with ``compaction=False``: every entry runs, masked, until the
  longest is done (64 x max(lengths) rows);
- each entry alone: a ``scan(spatial_dim=lengths[b])`` over its own row,
  called once per entry, times summed (sum(lengths) rows, no batching);
- JAX, when installed: ``vmap`` of a ``lax.while_loop`` over the entries,
  jitted. vmap turns the per-entry loops into one loop that runs until the
  longest entry is done and masks the others (as autoloop's masking does).

Targets: compaction within 1.5x of the entries run alone, and at least 3x
faster than masking. Every workload's final state is checked against the
entries run alone (which also warms up: traces, compiles). Best of 10
rounds, each round running every workload once.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import autoloop as al

WIDTH = 256


def long_tailed_lengths(batch: int, longest: int, seed: int = 0) -> np.ndarray:
    """Most entries a few steps, a few up to `longest`: a Pareto tail, the longest exactly `longest`."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(np.ceil(rng.pareto(0.7, batch) * 5) + 1, longest).astype(np.int32)
    lengths[np.argmax(lengths)] = longest
    return lengths


def best_times(workloads: dict, repeats: int) -> dict:
    """The best time of each workload; rounds interleave the workloads, so load on the machine hits all alike."""
    best = {title: float("inf") for title in workloads}
    for _ in range(repeats):
        for title, fn in workloads.items():
            start = time.perf_counter()
            fn()
            best[title] = min(best[title], time.perf_counter() - start)
    return best


def batched_scan(compaction):
    @al.function(autograph=False)
    def run(h, lengths, weights):
        def body(_, state):
            h, step, limit = state
            return None, (al.tanh(h @ weights), step + 1, limit)

        initial = (h, al.zeros_like(lengths), lengths)
        _, (h, _, _), _ = al.scan(body=body, cond=lambda _, s: s[1] < s[2], initial=initial,
                                  cond_dims=[h.shape[0]], compaction=compaction)
        return h
    return run


@al.function(autograph=False)
def one_entry(h, length, weights):
    return al.scan(body=lambda _, h: (None, al.tanh(h @ weights)), initial=h, spatial_dim=length)[1]


def each_entry_alone(h, lengths, weights):
    return np.concatenate([one_entry(h[b:b + 1], al.constant(lengths[b]), weights).numpy()
                           for b in range(len(lengths))])


def jax_workload():
    """``vmap(while_loop)`` over the entries, jitted; None when JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def one(h, length, weights):
        def body(state):
            h, step = state
            return jnp.tanh(h @ weights), step + 1
        return jax.lax.while_loop(lambda state: state[1] < length, body, (h, 0))[0]

    batched = jax.jit(jax.vmap(one, in_axes=(0, 0, None)))
    return lambda h, lengths, weights: np.asarray(batched(h, lengths, weights).block_until_ready())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 entries, lengths up to 100: a smoke run")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    batch, longest = (16, 100) if args.quick else (64, 1000)
    lengths = long_tailed_lengths(batch, longest)
    rng = np.random.default_rng(1)
    h = rng.standard_normal((batch, WIDTH)).astype(np.float32)
    weights = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    h_t, lengths_t, weights_t = al.constant(h), al.constant(lengths), al.constant(weights)
    print(f"{batch} entries, lengths: sum {lengths.sum():,}, max {lengths.max():,}, median {int(np.median(lengths))}; "
          f"masking runs {batch * lengths.max():,} rows, compaction about {lengths.sum():,}")

    expected = each_entry_alone(h_t, lengths, weights_t)
    compacted, masked = batched_scan("auto"), batched_scan(False)
    workloads = {
        "each entry alone (summed)": lambda: each_entry_alone(h_t, lengths, weights_t),
        "scan, compaction (default)": lambda: compacted(h_t, lengths_t, weights_t).numpy(),
        "scan, compaction=False (masked)": lambda: masked(h_t, lengths_t, weights_t).numpy(),
    }
    for title, fn in workloads.items():
        np.testing.assert_allclose(fn(), expected, rtol=2e-4, atol=2e-5, err_msg=title)
    times = best_times(workloads, args.repeats)
    jax_run = jax_workload()  # imported after the rest ran: its thread pools would compete with numpy's
    if jax_run is not None:
        title = "JAX vmap(lax.while_loop), jit"
        np.testing.assert_allclose(jax_run(h, lengths, weights), expected, rtol=2e-4, atol=2e-5, err_msg=title)
        times.update(best_times({title: lambda: jax_run(h, lengths, weights)}, args.repeats))
    alone = times["each entry alone (summed)"]
    print("| workload | time | vs entries alone |")
    print("| --- | --- | --- |")
    for title, seconds in times.items():
        print(f"| {title} | {seconds * 1e3:.1f} ms | {seconds / alone:.2f}x |")
    compacted, masked = times["scan, compaction (default)"], times["scan, compaction=False (masked)"]
    print(f"compaction: {compacted / alone:.2f}x the entries alone (target <= 1.5x), "
          f"{masked / compacted:.1f}x faster than masking (target >= 3x)")


if __name__ == "__main__":
    main()
