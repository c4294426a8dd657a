"""Gradients through loops: speed against a hand-written backward pass, and memory with checkpointing.

    python benchmarks/bench_gradients.py            # d = 64, T = 100; memory at T = 10,000
    python benchmarks/bench_gradients.py --quick    # small sizes, few rounds (a smoke run)

Speed: the gradient with respect to W of ``loss = sum(h_T)`` for
``h = tanh(W @ h + x[t])`` (d = 64, T = 100, float64):

- *numpy by hand*: the forward loop keeps every h, the backward loop is
  written out (``dz = dh * (1 - h*h); dW += outer(dz, h_prev); dh = W.T @ dz``);
- *autoloop*: the same forward loop as plain Python in ``@autoloop.function``,
  differentiated by ``GradientTape`` (the converted ``for`` is a graph loop;
  its gradient a backward loop over stacks of saved values);
- *autoloop, checkpoint=True*: the same with ``set_loop_options(checkpoint=True)``;
- *tensorflow*: ``GradientTape`` in ``tf.function``; *jax*: ``jax.grad`` of
  ``lax.scan`` under ``jax.jit`` (where installed, timed in rounds of their own).

Memory: the gradient through T = 10,000 iterations of ``h = sin(h) + h * w``
carrying a 1,000-element float64 state, with every value the backward pass
reads saved (one state per iteration) and with checkpointing. Peak memory is
what `tracemalloc` saw numpy allocate during one gradient call (the saved
values, and the little the arithmetic needs at once); times are interleaved.
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np

import autoloop as al
from harness import (check_result, command_line, environment, format_ratio, format_spread, interleaved,
                     interleaved_apart, markdown_table, optional, skipped_frameworks)


# -- speed: the RNN's gradient -----------------------------------------------------------------
def numpy_by_hand(h, w, xs):
    states = [h]
    for x in xs:
        h = np.tanh(w @ h + x)
        states.append(h)
    dh, dw = np.ones_like(h), np.zeros_like(w)
    for t in range(len(xs) - 1, -1, -1):
        dz = dh * (1.0 - states[t + 1] * states[t + 1])
        dw += np.outer(dz, states[t])
        dh = w.T @ dz
    return dw


def _rnn_loss(h, w, xs):
    for t in al.range(al.shape(xs)[0]):
        h = al.tanh(al.matmul(w, h) + xs[t])
    return al.reduce_sum(h)


@al.function
def autoloop_gradient(h, w, xs):
    with al.GradientTape() as tape:
        tape.watch(w)
        loss = _rnn_loss(h, w, xs)
    return tape.gradient(loss, w)


@al.function
def autoloop_checkpointed(h, w, xs):
    with al.GradientTape() as tape:
        tape.watch(w)
        for t in al.range(al.shape(xs)[0]):
            al.set_loop_options(checkpoint=True)
            h = al.tanh(al.matmul(w, h) + xs[t])
        loss = al.reduce_sum(h)
    return tape.gradient(loss, w)


def tensorflow_gradient(tf):
    @tf.function
    def gradient(h, w, xs):
        with tf.GradientTape() as tape:
            tape.watch(w)
            for t in tf.range(tf.shape(xs)[0]):
                h = tf.tanh(tf.linalg.matvec(w, h) + xs[t])
            loss = tf.reduce_sum(h)
        return tape.gradient(loss, w)
    return gradient


def jax_gradient(jax):
    def loss(w, h, xs):
        def step(h, x):
            h = jax.numpy.tanh(w @ h + x)
            return h, None
        h, _ = jax.lax.scan(step, h, xs)
        return jax.numpy.sum(h)
    return jax.jit(jax.grad(loss))


def measure_speed(quick: bool, rounds: int):
    d, steps = (16, 20) if quick else (64, 100)
    rng = np.random.default_rng(0)
    h, w, xs = rng.standard_normal(d), rng.standard_normal((d, d)) / np.sqrt(d), rng.standard_normal((steps, d))
    impls = {
        "numpy by hand": lambda: numpy_by_hand(h, w, xs),
        "autoloop": lambda: autoloop_gradient(h, w, xs).numpy(),
        "autoloop, checkpoint=True": lambda: autoloop_checkpointed(h, w, xs).numpy(),
    }
    tf = optional("tensorflow")
    if tf is not None:
        tf_gradient, tensors = tensorflow_gradient(tf), [tf.constant(a) for a in (h, w, xs)]
        impls["tensorflow"] = lambda: tf_gradient(*tensors).numpy()
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        jax_grad, arrays = jax_gradient(jax), [jax.numpy.asarray(a) for a in (w, h, xs)]
        impls["jax"] = lambda: np.asarray(jax_grad(*arrays).block_until_ready())
    expected = numpy_by_hand(h, w, xs)
    for name, fn in impls.items():
        check_result("RNN gradient", name, fn(), expected, rtol=1e-9, atol=1e-12)
    return (d, steps), interleaved_apart(impls, rounds)


def speed_table(sizes, timings) -> str:
    rows = [[name, format_spread(t.seconds), format_ratio(t.ratio)] for name, t in timings.items()]
    return markdown_table(["implementation", "time per gradient", "vs numpy by hand"], rows)


# -- memory: full storage against checkpointing ---------------------------------------------------------
def _long_loss(h, w, steps, checkpoint):
    _, h = al.while_loop(lambda i, h: i < steps, lambda i, h: (i + 1, al.sin(h) + h * w), (0, h),
                         checkpoint=checkpoint)
    return al.reduce_sum(h)


def _long_gradient(checkpoint):
    return al.function(lambda h, w, steps: al.gradients(_long_loss(h, w, steps, checkpoint), [w])[0],
                       autograph=False)


def peak_bytes(run) -> int:
    """The most memory numpy held at once during `run()`, beyond what was allocated before."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        run()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def measure_memory(quick: bool, rounds: int):
    steps, size = (1000, 200) if quick else (10_000, 1000)
    rng = np.random.default_rng(1)
    h, w = rng.standard_normal(size), rng.uniform(0.05, 0.15, size)
    count = np.array(steps, np.int32)
    functions = {"every value saved": _long_gradient(None), "checkpoint=True": _long_gradient(True)}
    results = {name: fn(h, w, count).numpy() for name, fn in functions.items()}
    if not np.array_equal(results["every value saved"], results["checkpoint=True"]):
        raise AssertionError("checkpointing changed the gradient")
    peaks = {name: peak_bytes(lambda fn=fn: fn(h, w, count)) for name, fn in functions.items()}
    impls = {"numpy": lambda: functions["every value saved"](h, w, count)}  # the baseline of the ratios
    impls["checkpoint=True"] = lambda: functions["checkpoint=True"](h, w, count)
    times = interleaved(impls, rounds)
    return (steps, size, h.nbytes), peaks, times


def memory_table(sizes, peaks, times) -> str:
    steps, size, state = sizes
    full = peaks["every value saved"]
    rows = [["every value saved", f"{full / 2 ** 20:.1f} MiB ({full / state:.0f} states)", "1", "1"],
            ["checkpoint=True", f"{peaks['checkpoint=True'] / 2 ** 20:.2f} MiB "
                                f"({peaks['checkpoint=True'] / state:.0f} states)",
             f"1/{full / peaks['checkpoint=True']:.0f}", format_ratio(times["checkpoint=True"].ratio)]]
    return markdown_table(["gradient", "peak memory", "memory vs all saved", "time vs all saved"], rows)


def main(argv=None) -> int:
    args = command_line(__doc__, argv, "small sizes and few rounds: a smoke run", rounds=15)
    rounds = 2 if args.quick else args.rounds
    print("\n".join(environment() + skipped_frameworks()))
    sizes, timings = measure_speed(args.quick, rounds)
    print(f"\nGradient of sum(h_T), h = tanh(W @ h + x[t]), d = {sizes[0]}, T = {sizes[1]}, with respect to W:\n")
    print(speed_table(sizes, timings))
    started = time.perf_counter()
    memory = measure_memory(args.quick, max(3, rounds // 3))
    steps, size, _ = memory[0]
    print(f"\nGradient through T = {steps:,} iterations of h = sin(h) + h * w, {size:,} float64 elements "
          f"({time.perf_counter() - started:.0f} s):\n")
    print(memory_table(*memory))
    return 0


if __name__ == "__main__":
    sys.exit(main())
