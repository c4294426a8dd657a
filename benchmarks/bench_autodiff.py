"""Forward mode and Jacobians through loops: same-run ratios against reverse passes.

    python benchmarks/bench_autodiff.py            # d = 64, T = 100
    python benchmarks/bench_autodiff.py --quick    # small sizes, few rounds (a smoke run)

The loop is bench_gradients' RNN, ``h = tanh(W @ h + x[t])`` (float64).

- *JVP against one reverse pass*: the derivative of ``sum(h_T)`` along a
  direction ``V`` of ``W`` (forward mode: a `ForwardAccumulator`, the tangent
  carried beside ``h`` in the same loop) against its gradient with respect
  to ``W`` (reverse mode: values saved per iteration, a backward loop). Each
  pair is timed in rounds of its own: autoloop on numpy, autoloop with
  ``backend="jax"``, and JAX itself (``jax.jvp`` / ``jax.grad`` of
  ``lax.scan`` under ``jax.jit``, where installed).
- *Memory through a long loop*: bench_gradients' T = 10,000 iterations of
  ``h = sin(h) + h * w`` (1,000 float64 elements, the trip count a tensor):
  peak memory of the gradient by ``w`` (every value saved) against the
  derivative along one direction of ``w`` (the tangent is one more loop
  variable: nothing grows with T).
- *recompute_grad*: the gradient through T iterations of a block of three
  ``tanh(h @ W)`` layers, plain (the loop saves each layer's values per
  iteration) and with the block wrapped in ``recompute_grad`` (it saves the
  block's argument and reruns the block backwards); peak memory as
  bench_gradients measures it (`tracemalloc` over one gradient call).
- *Jacobian of the 64 outputs* ``h_T`` with respect to ``h_0``:
  ``GradientTape.jacobian`` vectorized (``experimental_use_pfor=True``, the
  default: one backward loop whose cotangents hold all 64 rows) and as the
  row loop (``experimental_use_pfor=False``: one traced loop of 64 backward
  passes), on numpy and with ``backend="jax"``, against 64 calls of a
  compiled reverse pass (one per output) in Python; JAX's
  ``jax.jacrev``/``jax.jacfwd`` against 64 calls of its compiled ``vjp``.
"""

from __future__ import annotations

import sys

import numpy as np

import autoloop as al
from bench_gradients import _long_gradient, _long_loss, peak_bytes
from harness import (check_result, command_line, environment, format_ratio, format_spread, interleaved,
                     markdown_table, optional, skipped_frameworks)


def _rnn(h, w, xs):
    for t in al.range(al.shape(xs)[0]):
        h = al.tanh(al.matmul(w, h[:, None])[:, 0] + xs[t])
    return h


def autoloop_pair(backend: str):
    """(reverse pass, jvp) of sum(h_T) with respect to W, compiled for `backend`."""
    @al.function(backend=backend)
    def reverse(h, w, xs):
        with al.GradientTape() as tape:
            tape.watch(w)
            loss = al.reduce_sum(_rnn(h, w, xs))
        return tape.gradient(loss, w)

    @al.function(backend=backend)
    def forward(h, w, xs, direction):
        with al.autodiff.ForwardAccumulator(w, direction) as accumulator:
            loss = al.reduce_sum(_rnn(h, w, xs))
        return accumulator.jvp(loss)

    return reverse, forward


def autoloop_jacobians(backend: str = "numpy"):
    """(Jacobian of h_T by h_0 in one call, vectorized; the same by the row loop; one reverse pass for a
    given output weighting), compiled for `backend`."""
    def jacobian_by(use_pfor):
        @al.function(backend=backend)
        def jacobian(h, w, xs):
            with al.GradientTape() as tape:
                tape.watch(h)
                final = _rnn(h, w, xs)
            return tape.jacobian(final, h, experimental_use_pfor=use_pfor)
        return jacobian

    @al.function(backend=backend)
    def vjp(h, w, xs, seed):
        with al.GradientTape() as tape:
            tape.watch(h)
            final = _rnn(h, w, xs)
        return tape.gradient(final, h, output_gradients=seed)

    return jacobian_by(True), jacobian_by(False), vjp


def jax_functions(jax):
    jnp = jax.numpy

    def final(h, w, xs):
        def step(h, x):
            return jnp.tanh(w @ h + x), None
        return jax.lax.scan(step, h, xs)[0]

    def loss(w, h, xs):
        return jnp.sum(final(h, w, xs))

    grad = jax.jit(jax.grad(loss))
    jvp = jax.jit(lambda w, h, xs, v: jax.jvp(lambda w: loss(w, h, xs), (w,), (v,))[1])
    vjp = jax.jit(lambda h, w, xs, seed: jax.vjp(lambda h: final(h, w, xs), h)[1](seed)[0])
    jacrev = jax.jit(jax.jacrev(final))
    jacfwd = jax.jit(jax.jacfwd(final))
    return grad, jvp, vjp, jacrev, jacfwd


def measure(quick: bool, rounds: int):
    d, steps = (8, 10) if quick else (64, 100)
    rng = np.random.default_rng(0)
    h, w, xs = rng.standard_normal(d), rng.standard_normal((d, d)) / np.sqrt(d), rng.standard_normal((steps, d))
    direction = rng.standard_normal((d, d))
    pairs = {}
    backends = ["numpy"] + (["jax"] if optional("jax") is not None else [])
    gradient = None
    for backend in backends:
        reverse, forward = autoloop_pair(backend)
        gradient = reverse(h, w, xs).numpy() if gradient is None else gradient
        check_result("RNN gradient", f"autoloop {backend}", reverse(h, w, xs).numpy(), gradient, rtol=1e-9)
        check_result("RNN jvp", f"autoloop {backend}", forward(h, w, xs, direction).numpy(),
                     np.sum(gradient * direction), rtol=1e-9)
        pairs[f"autoloop, backend={backend!r}"] = {"reverse": lambda r=reverse: r(h, w, xs).numpy(),
                                                   "jvp": lambda f=forward: f(h, w, xs, direction).numpy()}
    seeds = np.eye(d)
    expected = None
    jacobians = {}
    for backend in backends:
        vectorized, looped, vjp = autoloop_jacobians(backend)
        rows = np.stack([vjp(h, w, xs, seed).numpy() for seed in seeds])
        expected = rows if expected is None else expected
        check_result("RNN jacobian", f"autoloop {backend} reverse passes", rows, expected, rtol=1e-9, atol=1e-12)
        check_result("RNN jacobian", f"autoloop {backend} pfor", vectorized(h, w, xs).numpy(), expected, rtol=1e-9,
                     atol=1e-12)
        check_result("RNN jacobian", f"autoloop {backend} row loop", looped(h, w, xs).numpy(), expected, rtol=1e-9,
                     atol=1e-12)
        jacobians[f"autoloop, backend={backend!r}"] = {
            "reverse": lambda v=vjp: [v(h, w, xs, seed).numpy() for seed in seeds],
            "tape.jacobian (pfor)": lambda f=vectorized: f(h, w, xs).numpy(),
            "tape.jacobian (row loop)": lambda f=looped: f(h, w, xs).numpy()}
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        grad, jvp, jax_vjp, jacrev, jacfwd = jax_functions(jax)
        arrays = [jax.numpy.asarray(a) for a in (w, h, xs, direction)]
        jw, jh, jxs, jv = arrays
        check_result("RNN jvp", "jax", float(jvp(jw, jh, jxs, jv)), np.sum(gradient * direction), rtol=1e-9)
        check_result("RNN jacobian", "jax", np.asarray(jacfwd(jh, jw, jxs)), expected, rtol=1e-9, atol=1e-12)
        pairs["jax (jax.grad, jax.jvp)"] = {"reverse": lambda: np.asarray(grad(jw, jh, jxs)),
                                            "jvp": lambda: float(jvp(jw, jh, jxs, jv))}
        jax_seeds = [jax.numpy.asarray(seed) for seed in seeds]
        jacobians["jax"] = {"reverse": lambda: [np.asarray(jax_vjp(jh, jw, jxs, s)) for s in jax_seeds],
                            "jax.jacrev": lambda: np.asarray(jacrev(jh, jw, jxs)),
                            "jax.jacfwd": lambda: np.asarray(jacfwd(jh, jw, jxs))}
    jvp_timings = {name: interleaved(impls, rounds, baseline="reverse") for name, impls in pairs.items()}
    jacobian_timings = {name: interleaved(impls, rounds, baseline="reverse") for name, impls in jacobians.items()}
    return (d, steps), jvp_timings, jacobian_timings


def _long_jvp():
    @al.function(autograph=False)
    def forward(h, w, steps, direction):
        with al.autodiff.ForwardAccumulator(w, direction) as accumulator:
            loss = _long_loss(h, w, steps, None)
        return accumulator.jvp(loss)
    return forward


def measure_long_loop(quick: bool):
    steps, size = (1000, 200) if quick else (10_000, 1000)
    rng = np.random.default_rng(1)
    h, w, direction = rng.standard_normal(size), rng.uniform(0.05, 0.15, size), rng.standard_normal(size)
    count = np.array(steps, np.int32)
    gradient, forward = _long_gradient(None), _long_jvp()
    check_result("long loop jvp", "autoloop", forward(h, w, count, direction).numpy(),
                 np.sum(gradient(h, w, count).numpy() * direction), rtol=1e-9)
    peaks = {"reverse pass (every value saved)": peak_bytes(lambda: gradient(h, w, count)),
             "jvp (tangent carried)": peak_bytes(lambda: forward(h, w, count, direction))}
    return (steps, size, h.nbytes), peaks


def long_loop_table(sizes, peaks) -> str:
    _, _, state = sizes
    return markdown_table(["through the loop", "peak memory"],
                          [[name, f"{peak / 2 ** 20:.2f} MiB ({peak / state:.0f} states)"]
                           for name, peak in peaks.items()])


def _layers(w):
    def block(h):
        for _ in range(3):
            h = al.tanh(al.matmul(h, w))
        return h
    return block


def recompute_gradient(recompute: bool):
    @al.function
    def gradient(h, w, steps):
        block = al.recompute_grad(_layers(w)) if recompute else _layers(w)
        with al.GradientTape() as tape:
            tape.watch(h)
            g = h
            for _ in al.range(steps):
                g = block(g) + g
            loss = al.reduce_sum(g)
        return tape.gradient(loss, h)
    return gradient


def measure_recompute(quick: bool, rounds: int):
    steps, size = (20, 16) if quick else (200, 256)
    rng = np.random.default_rng(2)
    h, w = rng.standard_normal((4, size)), rng.standard_normal((size, size)) / np.sqrt(size) * 0.5
    functions = {"plain": recompute_gradient(False), "recompute_grad": recompute_gradient(True)}
    results = {name: fn(h, w, steps).numpy() for name, fn in functions.items()}
    check_result("recompute_grad", "recompute_grad", results["recompute_grad"], results["plain"], rtol=1e-12)
    peaks = {name: peak_bytes(lambda fn=fn: fn(h, w, steps)) for name, fn in functions.items()}
    times = interleaved({name: (lambda fn=fn: fn(h, w, steps)) for name, fn in functions.items()}, rounds,
                        baseline="plain")
    return (steps, size, h.nbytes), peaks, times


def recompute_table(sizes, peaks, times) -> str:
    _, _, state = sizes
    rows = [[name, f"{peaks[name] / 2 ** 20:.2f} MiB ({peaks[name] / state:.0f} states)",
             f"1/{peaks['plain'] / peaks[name]:.1f}" if name != "plain" else "1", format_ratio(times[name].ratio)]
            for name in peaks]
    return markdown_table(["gradient", "peak memory", "memory vs plain", "time vs plain"], rows)


def jvp_table(timings) -> str:
    rows = [[name, format_spread(t["reverse"].seconds), format_spread(t["jvp"].seconds), format_ratio(t["jvp"].ratio)]
            for name, t in timings.items()]
    return markdown_table(["implementation", "one reverse pass", "one jvp", "jvp vs reverse pass"], rows)


def jacobian_table(timings, d) -> str:
    rows = []
    for name, group in timings.items():
        rows.append([name, f"{d} reverse passes", format_spread(group["reverse"].seconds), "1"])
        for way, timing in group.items():
            if way != "reverse":
                rows.append([name, way, format_spread(timing.seconds), format_ratio(timing.ratio)])
    return markdown_table(["library", "how", "time for the Jacobian", f"vs {d} reverse passes"], rows)


def main(argv=None) -> int:
    args = command_line(__doc__, argv, "small sizes and few rounds: a smoke run", rounds=15)
    rounds = 2 if args.quick else args.rounds
    print("\n".join(environment() + skipped_frameworks()))
    (d, steps), jvp_timings, jacobian_timings = measure(args.quick, rounds)
    print(f"\nsum(h_T), h = tanh(W @ h + x[t]), d = {d}, T = {steps}: gradient by W against the derivative "
          f"along one direction of W:\n")
    print(jvp_table(jvp_timings))
    print(f"\nJacobian of h_T ({d} outputs) by h_0, same loop:\n")
    print(jacobian_table(jacobian_timings, d))
    sizes, peaks = measure_long_loop(args.quick)
    print(f"\nThrough T = {sizes[0]:,} iterations of h = sin(h) + h * w, {sizes[1]:,} float64 elements:\n")
    print(long_loop_table(sizes, peaks))
    sizes, peaks, times = measure_recompute(args.quick, max(3, rounds // 3))
    print(f"\nGradient through T = {sizes[0]} iterations of g = block(g) + g, block = three tanh(g @ W) "
          f"layers, g of 4 x {sizes[1]} float64:\n")
    print(recompute_table(sizes, peaks, times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
