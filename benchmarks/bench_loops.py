"""Graph while_loop against the same loop hand-written in numpy (and TF/JAX if installed).

    python benchmarks/bench_loops.py            # full sizes, markdown table
    python benchmarks/bench_loops.py --quick    # small sizes, a smoke run

Each workload runs one loop; we report the best of several timed runs (after
a warm-up that traces and compiles), the cost per iteration, and the ratio
to hand-written numpy measured in the same process. TensorFlow and JAX rows
appear when those packages import; they are timed the same way.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import autoloop as al


def best_time(fn, repeats: int) -> float:
    fn()  # warm-up: trace, compile, caches
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


# -- workloads: each returns {implementation: zero-argument callable} ---------------
def sum_square(n: int):
    def numpy_loop():
        with np.errstate(over="ignore"):
            i, result, limit = np.int32(0), np.int32(0), np.int32(n)
            while i < limit:
                result += i * i
                i += 1
        return result

    @al.function(autograph=False)
    def autoloop_graph(limit):
        return al.while_loop(lambda i, r: i < limit, lambda i, r: (i + 1, r + i * i),
                             (al.constant(0), al.constant(0)))[1]

    @al.function
    def autoloop_converted(limit):
        i, result = al.constant(0), al.constant(0)
        while i < limit:
            result += i * i
            i += 1
        return result

    limit = al.constant(n)
    impls = {"numpy": numpy_loop, "autoloop": lambda: autoloop_graph(limit),
             "autoloop (converted Python)": lambda: autoloop_converted(limit)}
    impls.update(_tf_impls(lambda tf: _tf_sum_square(tf, n)))
    impls.update(_jax_impls(lambda jax: _jax_sum_square(jax, n)))
    return impls, n


def rnn(d: int, steps: int):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    x = rng.standard_normal((steps, d)).astype(np.float32)
    h0 = np.zeros(d, np.float32)

    def numpy_loop():
        h = h0
        for t in range(steps):
            h = np.tanh(w @ h + x[t])
        return h

    @al.function(autograph=False)
    def autoloop_graph(w, x, h):
        n = al.shape(x)[0]
        return al.while_loop(lambda t, h: t < n, lambda t, h: (t + 1, al.tanh(w @ h + x[t])),
                             (al.constant(0), h))[1]

    @al.function
    def autoloop_converted(w, x, h):
        for t in al.range(al.shape(x)[0]):
            h = al.tanh(w @ h + x[t])
        return h

    args = (al.constant(w), al.constant(x), al.constant(h0))
    for candidate in (autoloop_graph, autoloop_converted):
        error = np.abs(candidate(*args).numpy() - numpy_loop()).max()
        assert error < 1e-4, error
    impls = {"numpy": numpy_loop, "autoloop": lambda: autoloop_graph(*args),
             "autoloop (converted Python)": lambda: autoloop_converted(*args)}
    impls.update(_tf_impls(lambda tf: _tf_rnn(tf, w, x, h0)))
    impls.update(_jax_impls(lambda jax: _jax_rnn(jax, w, x, h0)))
    return impls, steps


def matmul_loop(size: int, steps: int):
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((size, size)))
    w = q.astype(np.float32)  # orthogonal: values neither blow up nor vanish
    m0 = rng.standard_normal((size, size)).astype(np.float32)

    def numpy_loop():
        m = m0
        for _ in range(steps):
            m = m @ w
        return m

    @al.function(autograph=False)
    def autoloop_graph(m, w):
        return al.while_loop(lambda t, m: t < steps, lambda t, m: (t + 1, m @ w), (al.constant(0), m))[1]

    args = (al.constant(m0), al.constant(w))
    impls = {"numpy": numpy_loop, "autoloop": lambda: autoloop_graph(*args)}
    impls.update(_tf_impls(lambda tf: _tf_matmul(tf, m0, w, steps)))
    impls.update(_jax_impls(lambda jax: _jax_matmul(jax, m0, w, steps)))
    return impls, steps


# -- optional frameworks ------------------------------------------------------------
def _tf_impls(build):
    try:
        import tensorflow as tf
    except ImportError:
        return {}
    return {"tensorflow": build(tf)}


def _jax_impls(build):
    try:
        import jax
    except ImportError:
        return {}
    return {"jax": build(jax)}


def _tf_sum_square(tf, n):
    @tf.function
    def f(limit):
        return tf.while_loop(lambda i, r: i < limit, lambda i, r: (i + 1, r + i * i),
                             (tf.constant(0), tf.constant(0)))[1]
    limit = tf.constant(n)
    return lambda: f(limit).numpy()


def _tf_rnn(tf, w, x, h0):
    @tf.function
    def f(w, x, h):
        n = tf.shape(x)[0]
        return tf.while_loop(lambda t, h: t < n,
                             lambda t, h: (t + 1, tf.tanh(tf.linalg.matvec(w, h) + x[t])),
                             (tf.constant(0), h))[1]
    args = (tf.constant(w), tf.constant(x), tf.constant(h0))
    return lambda: f(*args).numpy()


def _tf_matmul(tf, m0, w, steps):
    @tf.function
    def f(m, w):
        return tf.while_loop(lambda t, m: t < steps, lambda t, m: (t + 1, m @ w), (tf.constant(0), m))[1]
    args = (tf.constant(m0), tf.constant(w))
    return lambda: f(*args).numpy()


def _jax_sum_square(jax, n):
    import jax.numpy as jnp

    @jax.jit
    def f(limit):
        return jax.lax.while_loop(lambda s: s[0] < limit, lambda s: (s[0] + 1, s[1] + s[0] * s[0]),
                                  (jnp.int32(0), jnp.int32(0)))[1]
    return lambda: f(n).block_until_ready()


def _jax_rnn(jax, w, x, h0):
    @jax.jit
    def f(w, x, h):
        return jax.lax.fori_loop(0, x.shape[0], lambda t, h: jax.numpy.tanh(w @ h + x[t]), h)
    return lambda: f(w, x, h0).block_until_ready()


def _jax_matmul(jax, m0, w, steps):
    @jax.jit
    def f(m, w):
        return jax.lax.fori_loop(0, steps, lambda t, m: m @ w, m)
    return lambda: f(m0, w).block_until_ready()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run, not a measurement")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if args.quick:
        workloads = [("sum_square n=2,000", sum_square(2_000)), ("rnn d=64 T=100", rnn(64, 100)),
                     ("matmul 64x64 x5", matmul_loop(64, 5))]
    else:
        workloads = [("sum_square n=100,000", sum_square(100_000)), ("rnn d=64 T=1,000", rnn(64, 1_000)),
                     ("matmul 512x512 x20", matmul_loop(512, 20))]
    print("| workload | implementation | time per iteration | vs numpy |")
    print("| --- | --- | --- | --- |")
    for title, (impls, iterations) in workloads:
        base = None
        for name, fn in impls.items():
            seconds = best_time(fn, args.repeats)
            base = seconds if name == "numpy" else base
            per_iteration = seconds / iterations * 1e6
            print(f"| {title} | {name} | {per_iteration:.2f} µs | {seconds / base:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
