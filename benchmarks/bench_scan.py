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
entries run alone first; timings follow `harness` (interleaved rounds,
same-round ratios, JAX in rounds of its own).
"""

from __future__ import annotations

import numpy as np

import autoloop as al
from harness import (check_result, command_line, format_ratio, format_spread, interleaved, markdown_table,
                     optional)

WIDTH = 256


def long_tailed_lengths(batch: int, longest: int, seed: int = 0) -> np.ndarray:
    """Most entries a few steps, a few up to `longest`: a Pareto tail, the longest exactly `longest`."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(np.ceil(rng.pareto(0.7, batch) * 5) + 1, longest).astype(np.int32)
    lengths[np.argmax(lengths)] = longest
    return lengths


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
    """``vmap(while_loop)`` over the entries, jitted; None when JAX is not installed (or left out)."""
    jax = optional("jax")
    if jax is None:
        return None

    def one(h, length, weights):
        def body(state):
            h, step = state
            return jax.numpy.tanh(h @ weights), step + 1
        return jax.lax.while_loop(lambda state: state[1] < length, body, (h, 0))[0]

    batched = jax.jit(jax.vmap(one, in_axes=(0, 0, None)))
    return lambda h, lengths, weights: np.asarray(batched(h, lengths, weights).block_until_ready())


BASELINE = "each entry alone (summed)"


def measure(quick: bool, rounds: int):
    """Timings of every workload (`harness.Timing`, ratios against the entries alone) and the lengths."""
    batch, longest = (16, 100) if quick else (64, 1000)
    lengths = long_tailed_lengths(batch, longest)
    rng = np.random.default_rng(1)
    h = rng.standard_normal((batch, WIDTH)).astype(np.float32)
    weights = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    h_t, lengths_t, weights_t = al.constant(h), al.constant(lengths), al.constant(weights)
    compacted, masked = batched_scan("auto"), batched_scan(False)
    workloads = {
        BASELINE: lambda: each_entry_alone(h_t, lengths, weights_t),
        "scan, compaction (default)": lambda: compacted(h_t, lengths_t, weights_t).numpy(),
        "scan, compaction=False (masked)": lambda: masked(h_t, lengths_t, weights_t).numpy(),
    }
    expected = workloads[BASELINE]()
    for title, fn in workloads.items():
        check_result("bench_scan", title, fn(), expected, rtol=2e-4, atol=2e-5)
    timings = interleaved(workloads, rounds, baseline=BASELINE)
    jax_run = jax_workload()  # in rounds of its own: its thread pools would slow down what runs next
    if jax_run is not None:
        title = "JAX vmap(lax.while_loop), jit"
        check_result("bench_scan", title, jax_run(h, lengths, weights), expected, rtol=2e-4, atol=2e-5)
        apart = interleaved({BASELINE: workloads[BASELINE], title: lambda: jax_run(h, lengths, weights)}, rounds,
                            baseline=BASELINE)
        timings[title] = apart[title]
    return timings, lengths


def table(timings, lengths) -> str:
    batch = len(lengths)
    lines = [f"{batch} entries, lengths: sum {lengths.sum():,}, max {lengths.max():,}, median "
             f"{int(np.median(lengths))}; masking runs {batch * lengths.max():,} rows, compaction {lengths.sum():,}",
             "",
             markdown_table(["workload", "time", "vs each entry alone (same round)"],
                            [[title, format_spread(t.seconds), format_ratio(t.ratio)] for title, t in timings.items()])]
    compacted = timings["scan, compaction (default)"].ratio.median
    masked = timings["scan, compaction=False (masked)"].ratio.median
    lines += ["", f"compaction: {compacted:.2f}x the entries alone (target <= 1.5x); masking takes "
                  f"{masked / compacted:.1f}x as long as compaction (target >= 3x)"]
    return "\n".join(lines)


def main(argv=None):
    args = command_line(__doc__, argv, "16 entries, lengths up to 100: a smoke run", rounds=10)
    print(table(*measure(args.quick, args.rounds)))


if __name__ == "__main__":
    main()
