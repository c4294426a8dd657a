"""Batched loops whose entries stop at very different steps: vectorized_map and scan(xs, cond_dims).

    python benchmarks/bench_batching.py            # 64 entries, trip counts / lengths up to 1,000
    python benchmarks/bench_batching.py --quick    # 16 entries, up to 100: a smoke run

Table 1, `vectorized_map` of a data-dependent while loop. Each entry is a
vector ``h`` (256 float32 values) and a trip count ``n`` drawn from a
long-tailed distribution (most a few steps, a few up to 1,000); one entry
runs ``while step < n: h = tanh(h @ W); step += 1``. Workloads (traced
`autoloop.function`s unless said):

- each entry alone: the per-entry function traced once and called per entry,
  times summed (the baseline: sum(n) rows of work, no batching);
- ``vectorized_map``: the function run once on the batch; its per-entry
  while loop becomes a compacted scan (finished entries dropped);
- masking: the same loop batched by hand with ``where``, every entry
  running until the longest is done (what vmap of a while loop does);
- ``map_fn``: one while loop over the entries;
- ``vectorized_map`` on ``backend="jax"`` (XLA has static shapes:
  compacted in stages of 64, 32, ..., 1 rows), the same loop as a
  ``scan(compaction=False)`` there (masked), and JAX
  ``vmap(lax.while_loop)``, jitted, when JAX is installed: these three
  interleaved in rounds of their own with the baseline.

Table 2, an RNN over a padded batch: ``xs`` [frames, 64, 256] and
per-entry ``lengths``; ``scan(xs=xs, cond=lambda x, s: s.t < lengths,
cond_dims=[B])`` with ``lengths`` captured (proven per entry, so compacted)
against the same RNN masked in numpy by hand.

Table 3, the gradient of table 1's loop (written as a batched scan)
with respect to ``h`` and ``W``: compacted forward and backward (the
default) against ``compaction=False`` (masked forward and backward); and
on ``backend="jax"`` (the scan bounded by ``max_seq_len``, the longest
trip count: XLA preallocates the frames the backward reads), compacted
in stages forward and backward against ``compaction=False``, in rounds
of their own with the JAX masked gradient as the baseline.

Targets (same-round ratios): vectorized_map at least 3x faster than
masking and at most 1.5x the entries alone; the RNN scan at least 3x faster
than masked numpy. Every workload's result is checked against the baseline
first.
"""

from __future__ import annotations

import numpy as np

import autoloop as al
from bench_scan import jax_workload, long_tailed_lengths
from harness import check_result, command_line, format_ratio, format_spread, interleaved, markdown_table

WIDTH = 256


# -- table 1: vectorized_map of a per-entry while loop ---------------------------------------------
def make_entry(weights):
    def entry(elem):
        h, count = elem
        step = al.constant(0)
        while step < count:
            h = al.tanh(al.matmul(al.expand_dims(h, 0), weights))[0]
            step += 1
        return h
    return entry


def masked_by_hand(weights):
    @al.function(autograph=False)
    def run(h, counts):
        def body(h, step):
            active = al.expand_dims(step < counts, 1)
            return al.where(active, al.tanh(al.matmul(h, weights)), h), step + 1
        return al.while_loop(lambda h, step: al.reduce_any(step < counts), body, (h, al.constant(0)))[0]
    return run


BASELINE = "each entry alone (summed)"


def loop_inputs(quick: bool):
    """``(trip counts, h, W)`` of table 1's loop: long-tailed counts, one row of h per entry."""
    batch, longest = (16, 100) if quick else (64, 1000)
    counts = long_tailed_lengths(batch, longest)
    rng = np.random.default_rng(1)
    h = rng.standard_normal((batch, WIDTH)).astype(np.float32)
    weights = al.constant((rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32))
    return counts, h, weights


def loop_as_scan(h, counts, weights, compaction, max_seq_len=None):
    """Table 1's per-entry loop written as a batched scan; the final h (in a traced function)."""
    def body(_, state):
        h, step, count = state
        return None, (al.tanh(al.matmul(h, weights)), step + 1, count)
    return al.scan(body=body, initial=(h, al.zeros_like(counts), counts), cond=lambda _, s: s[1] < s[2],
                   cond_dims=[h.shape[0]], compaction=compaction, max_seq_len=max_seq_len)[1][0]


def measure_loops(quick: bool, rounds: int):
    counts, h, weights = loop_inputs(quick)
    batch = len(counts)
    entry = make_entry(weights)
    alone = al.function(entry)
    vectorized = al.function(lambda h, n: al.vectorized_map(entry, (h, n)), autograph=False)
    vectorized_jax = al.function(lambda h, n: al.vectorized_map(entry, (h, n)), autograph=False, backend="jax")
    looped = al.function(lambda h, n: al.map_fn(entry, (h, n), fn_output_signature=al.float32), autograph=False)
    masked = masked_by_hand(weights)
    h_t, counts_t = al.constant(h), al.constant(counts)
    rows = [al.constant(row) for row in h]
    workloads = {
        BASELINE: lambda: np.stack([alone((rows[b], al.constant(counts[b]))).numpy() for b in range(batch)]),
        "vectorized_map (compacted)": lambda: vectorized(h_t, counts_t).numpy(),
        "masking (where, by hand)": lambda: masked(h_t, counts_t).numpy(),
        "map_fn (a loop over entries)": lambda: looped(h_t, counts_t).numpy(),
    }
    expected = workloads[BASELINE]()
    for title, fn in workloads.items():
        check_result("bench_batching", title, fn(), expected, rtol=2e-4, atol=2e-5)
    timings = interleaved(workloads, rounds, baseline=BASELINE)
    masked_jax = jax_scan(weights, compaction=False)
    apart = {JAX_STAGES: lambda: vectorized_jax(h_t, counts_t).numpy(),
             JAX_MASKED: lambda: masked_jax(h_t, counts_t).numpy()}
    jax_run = jax_workload()  # the same per-entry loop as bench_scan's: vmap of a lax.while_loop
    if jax_run is not None:
        apart[JAX_VMAP] = lambda: jax_run(h, counts, weights.numpy())
    for title, fn in apart.items():
        check_result("bench_batching", title, fn(), expected, rtol=2e-4, atol=2e-5)
    # In rounds of their own (JAX's thread pools would slow down what runs next), together: same-round ratios.
    measured = interleaved({BASELINE: workloads[BASELINE], **apart}, rounds, baseline=BASELINE)
    timings.update({title: measured[title] for title in apart})
    return timings, counts


JAX_STAGES = "vectorized_map, backend=\"jax\" (compacted in stages)"
JAX_MASKED = "the same loop as scan(compaction=False), backend=\"jax\" (masked)"
JAX_VMAP = "JAX vmap(lax.while_loop), jit"


def jax_scan(weights, compaction):
    """The per-entry loop of `make_entry` written as a batched scan on backend="jax"."""
    return al.function(lambda h, counts: loop_as_scan(h, counts, weights, compaction), autograph=False,
                       backend="jax")


# -- table 3: the gradient of the per-entry loop ------------------------------------------------------
def loop_gradient(compaction, backend="numpy", max_seq_len=None):
    """d sum(h_final^2) / d(h, W) through the per-entry loop as a batched scan: compacted or masked backward."""
    @al.function(autograph=False, backend=backend)
    def run(h, counts, weights):
        final = loop_as_scan(h, counts, weights, compaction, max_seq_len)
        return al.gradients(al.reduce_sum(final * final), [h, weights])
    return run


GRADIENT_MASKED = "gradient, compaction=False (masked forward and backward)"
GRADIENT_COMPACTED = "gradient, compacted forward and backward (default)"
GRADIENT_JAX_MASKED = "gradient, backend=\"jax\", compaction=False (masked)"
GRADIENT_JAX_STAGES = "gradient, backend=\"jax\", compacted in stages forward and backward (default)"


def measure_gradients(quick: bool, rounds: int):
    counts, h, weights = loop_inputs(quick)
    h, counts_t = al.constant(h), al.constant(counts)
    bound = int(counts.max())
    functions = {GRADIENT_MASKED: loop_gradient(False), GRADIENT_COMPACTED: loop_gradient("auto")}
    apart = {GRADIENT_JAX_MASKED: loop_gradient(False, "jax", bound),
             GRADIENT_JAX_STAGES: loop_gradient("auto", "jax", bound)}

    def flat(function):
        return lambda: np.concatenate([g.numpy().ravel() for g in function(h, counts_t, weights)])
    workloads = {title: flat(fn) for title, fn in functions.items()}
    expected = workloads[GRADIENT_MASKED]()
    for title, fn in {**workloads, **{title: flat(fn) for title, fn in apart.items()}}.items():
        check_result("bench_batching", title, fn(), expected, rtol=2e-3, atol=2e-4)
    timings = interleaved(workloads, rounds, baseline=GRADIENT_MASKED)
    # On XLA in rounds of their own (JAX's thread pools would slow down what runs next), against its masked form.
    timings.update(interleaved({title: flat(fn) for title, fn in apart.items()}, rounds, baseline=GRADIENT_JAX_MASKED))
    return timings, counts


# -- table 2: an RNN over a padded batch ---------------------------------------------------------------
def rnn_scan(w_x, w_h):
    @al.function(autograph=False)
    def run(xs, lengths):
        batch = xs.shape[1]

        def body(x, state):
            h, t = state
            h = al.tanh(x @ w_x + h @ w_h)
            return h, (h, t + 1)
        ys, (h, _), _ = al.scan(body=body, initial=(al.zeros([batch, WIDTH]), al.zeros([batch], al.int32)), xs=xs,
                                ys=al.TensorSpec([batch, WIDTH]), cond=lambda x, s: s[1] < lengths, cond_dims=[batch])
        return h
    return run


def rnn_masked_numpy(xs, lengths, w_x, w_h):
    h = np.zeros((xs.shape[1], WIDTH), np.float32)
    ys = np.zeros((lengths.max(),) + h.shape, np.float32)
    for t in range(lengths.max()):
        active = (t < lengths)[:, None]
        h = np.where(active, np.tanh(xs[t] @ w_x + h @ w_h), h)
        ys[t] = np.where(active, h, 0)
    return h


NUMPY = "numpy, masked by hand"


def measure_rnn(quick: bool, rounds: int):
    batch, longest = (16, 100) if quick else (64, 1000)
    lengths = long_tailed_lengths(batch, longest, seed=2)
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((longest, batch, WIDTH)).astype(np.float32)
    w_x, w_h = ((rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(2 * WIDTH)).astype(np.float32) for _ in range(2))
    compacted = rnn_scan(al.constant(w_x), al.constant(w_h))
    xs_t, lengths_t = al.constant(xs), al.constant(lengths)
    workloads = {
        NUMPY: lambda: rnn_masked_numpy(xs, lengths, w_x, w_h),
        "scan(xs, cond_dims), captured lengths": lambda: compacted(xs_t, lengths_t).numpy(),
    }
    expected = workloads[NUMPY]()
    for title, fn in workloads.items():
        check_result("bench_batching", title, fn(), expected, rtol=2e-4, atol=2e-5)
    return interleaved(workloads, rounds, baseline=NUMPY), lengths


def tables(loops, rnn, gradients=None) -> str:
    timings, counts = loops
    lines = [f"vectorized_map of a per-entry while loop: {len(counts)} entries, trip counts: sum {counts.sum():,}, "
             f"max {counts.max():,}, median {int(np.median(counts))}", "",
             markdown_table(["workload", "time", "vs each entry alone (same round)"],
                            [[t, format_spread(v.seconds), format_ratio(v.ratio)] for t, v in timings.items()])]
    compacted = timings["vectorized_map (compacted)"].ratio.median
    masked = timings["masking (where, by hand)"].ratio.median
    lines += ["", f"vectorized_map: {compacted:.2f}x the entries alone (target <= 1.5x); masking takes "
                  f"{masked / compacted:.1f}x as long (target >= 3x)"]
    if JAX_STAGES in timings:
        stages = timings[JAX_STAGES].ratio.median
        lines.append(f"backend=\"jax\": the masked form takes {timings[JAX_MASKED].ratio.median / stages:.1f}x as "
                     f"long as the stages" + (f", JAX's vmap(while_loop) {timings[JAX_VMAP].ratio.median / stages:.1f}x"
                                             if JAX_VMAP in timings else "") + " (same rounds)")
    lines.append("")
    timings, lengths = rnn
    lines += [f"RNN over a padded batch: {len(lengths)} sequences, lengths: sum {lengths.sum():,}, "
              f"max {lengths.max():,}", "",
              markdown_table(["workload", "time", "vs numpy masked (same round)"],
                             [[t, format_spread(v.seconds), format_ratio(v.ratio)] for t, v in timings.items()])]
    scan = timings["scan(xs, cond_dims), captured lengths"].ratio.median
    lines += ["", f"scan(xs, cond_dims): {1 / scan:.1f}x faster than masked numpy (target >= 3x)"]
    if gradients is not None:
        timings, counts = gradients
        compacted = timings[GRADIENT_COMPACTED].ratio.median
        lines += ["", f"The gradient of the per-entry loop (d sum(h^2) / d(h, W)), {len(counts)} entries, trip counts "
                      f"summing to {counts.sum():,}, max {counts.max():,}", "",
                  markdown_table(["workload", "time", "vs masked on its backend (same round)"],
                                 [[t, format_spread(v.seconds), format_ratio(v.ratio)] for t, v in timings.items()]),
                  "", f"compacted gradient: {1 / compacted:.1f}x faster than the masked one"]
        if GRADIENT_JAX_STAGES in timings:
            lines.append(f"backend=\"jax\": compacted gradient {1 / timings[GRADIENT_JAX_STAGES].ratio.median:.1f}x "
                         f"faster than the masked one")
    return "\n".join(lines)


def main(argv=None):
    args = command_line(__doc__, argv, "16 entries, up to 100 steps: a smoke run", rounds=5)
    print(tables(measure_loops(args.quick, args.rounds), measure_rnn(args.quick, args.rounds),
                 measure_gradients(args.quick, args.rounds)))


if __name__ == "__main__":
    main()
