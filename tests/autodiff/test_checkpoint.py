"""Checkpointed loop gradients: bitwise equal to the fully stored ones, in bounded memory."""

from __future__ import annotations

import contextlib
import io
import tracemalloc

import numpy as np
import pytest

import autoloop as al

RNG = np.random.default_rng(3)
H0, W, XS = RNG.standard_normal(4), RNG.standard_normal((4, 4)) * 0.6, RNG.standard_normal((20, 4))


def recurrence(h, w, xs, n, checkpoint):
    """A loop with a captured weight, a TensorArray it reads and one it writes, and a nested loop."""
    inputs = al.TensorArray(al.float64, size=20).unstack(xs)

    def body(t, h, s, out):
        h = al.tanh(al.matmul(w, h) + inputs.read(t)) + 0.1 * h
        _, g = al.while_loop(lambda k, g: k < t % 3, lambda k, g: (k + 1, al.sin(g) * h), (0, h))
        return t + 1, h, s + al.reduce_sum(g * g), out.write(t, h)

    out = al.TensorArray(al.float64, size=0, dynamic_size=True, element_shape=[4])
    _, h, s, out = al.while_loop(lambda t, h, s, out: t < n, body, (0, h, al.zeros([], al.float64), out),
                                 checkpoint=checkpoint)
    return s + al.reduce_sum(h) + al.reduce_sum(out.stack() * 0.5)


def _traced(checkpoint):
    return al.function(lambda h, w, xs, n: al.gradients(recurrence(h, w, xs, n, checkpoint), [h, w, xs]),
                       autograph=False)


def _eager(h, w, xs, n, checkpoint):
    tensors = [al.constant(a) for a in (h, w, xs)]
    with al.GradientTape() as tape:
        tape.watch(tensors)
        y = recurrence(*tensors, al.constant(n), checkpoint)
    return tape.gradient(y, tensors)


def _same(a, b):
    return all((x is None and y is None) or (x is not None and y is not None and np.array_equal(x.numpy(), y.numpy()))
               for x, y in zip(a, b))


@pytest.mark.parametrize("checkpoint", [True, "sqrt", 1, 3])
def test_traced_checkpointing_is_bitwise_the_stored_gradient(checkpoint):
    stored, checkpointed = _traced(None), _traced(checkpoint)
    for n in [0, 1, 2, 5, 9, 10, 17]:
        count = np.array(n, np.int32)
        assert _same(stored(H0, W, XS, count), checkpointed(H0, W, XS, count)), n


@pytest.mark.parametrize("checkpoint", [True, 2])
def test_eager_checkpointing_is_bitwise_the_recorded_gradient(checkpoint):
    for n in [0, 1, 4, 7, 11]:
        assert _same(_eager(H0, W, XS, n, None), _eager(H0, W, XS, n, checkpoint)), n


def test_eager_and_traced_agree():
    traced = _traced(True)(H0, W, XS, np.array(7, np.int32))
    for a, b in zip(_eager(H0, W, XS, 7, True), traced):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-15)


def converted(x, w):
    i = al.constant(0)
    while x < 100.0:
        al.set_loop_options(checkpoint=True)
        x = x * w + al.sin(x)
        i += 1
    return x


def test_set_loop_options_checkpoint_in_converted_code():
    gradient = al.function(lambda x, w: al.gradients(converted(x, w), [x, w]))
    graph = gradient.get_concrete_function(np.array(1.0), np.array(1.5)).graph
    loops = [node for node in graph.walk() if node.op == "While" and "_gradient" in node.attrs]
    assert loops and all(node.attrs["checkpoint"] == "sqrt" for node in loops)
    stored = al.function(lambda x, w: al.gradients(doubling(x, w), [x, w]))
    for x0 in [1.0, 7.0, 120.0]:
        assert _same(gradient(np.array(x0), np.array(1.5)), stored(np.array(x0), np.array(1.5)))


def doubling(x, w):
    while x < 100.0:
        x = x * w + al.sin(x)
    return x


def _peak_bytes(run) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_memory_grows_like_the_square_root_of_the_trip_count():
    def loss(x, n, checkpoint):
        _, y = al.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, al.sin(y) * 1.01), (0, x),
                             checkpoint=checkpoint)
        return al.reduce_sum(y)

    state = np.random.default_rng(0).standard_normal(1000)
    n = np.array(2500, np.int32)
    peaks = {}
    for checkpoint in (None, True):
        fn = al.function(lambda x, n: al.gradients(loss(x, n, checkpoint), [x]), autograph=False)
        fn(state, np.array(3, np.int32))  # trace and compile outside the measurement
        peaks[checkpoint] = _peak_bytes(lambda: fn(state, n))
    full = 2500 * state.nbytes  # one saved state per iteration
    assert peaks[None] > 0.9 * full
    assert peaks[True] < full / 15, peaks  # about (50 + 100) states


def test_replays_do_not_print_again():
    def loss(x):
        def body(i, y):
            al.print("step")
            return i + 1, y * 2.0
        _, y = al.while_loop(lambda i, y: i < 5, body, (0, x), checkpoint=True)
        return al.gradients(y, [x])

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        (grad,) = al.function(loss, autograph=False)(np.array(1.0))
    assert out.getvalue().count("step") == 5
    assert float(grad.numpy()) == 32.0


def test_random_numbers_in_a_checkpointed_body_are_an_error():
    def loss(x):
        def body(i, y):
            return i + 1, y * al.random.normal([], dtype=al.float64)
        _, y = al.while_loop(lambda i, y: i < 5, body, (0, x), checkpoint=True)
        return al.gradients(y, [x])

    with pytest.raises(ValueError, match="checkpointing recomputes loop iterations.*RandomNormal"):
        al.function(loss, autograph=False)(np.array(1.0))


@pytest.mark.parametrize("bad", [0, -2, "log", 1.5])
def test_a_bad_checkpoint_value_is_an_error(bad):
    with pytest.raises(ValueError, match="checkpoint must be True or 'sqrt'"):
        al.while_loop(lambda i: i < 3, lambda i: i + 1, [al.constant(0)], checkpoint=bad)
