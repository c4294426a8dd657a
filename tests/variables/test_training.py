"""A training loop inside one function: weights in variables, a ``while`` over steps, a GradientTape's gradient
and ``assign_sub``; the same as numpy written by hand, on both backends."""

import numpy as np
import pytest

import autoloop as al
from tests.variables.backends import BACKENDS


def by_hand(x, y, w, b, steps, rate):
    for _ in range(steps):
        hidden = np.tanh(x @ w)
        error = hidden @ b - y
        grad_out = 2 * error / error.size
        grad_b = hidden.T @ grad_out
        grad_w = x.T @ ((grad_out @ b.T) * (1 - hidden ** 2))
        w, b = w - rate * grad_w, b - rate * grad_b
    return w, b


@pytest.mark.parametrize("on", BACKENDS)
def test_a_two_layer_model_trained_in_one_function_matches_numpy(on):
    x = np.cos(np.arange(12, dtype=np.float32).reshape(6, 2))
    y = np.sin(x.sum(axis=1, keepdims=True))
    w0 = np.linspace(-0.5, 0.5, 8, dtype=np.float32).reshape(2, 4)
    b0 = np.linspace(0.3, -0.3, 4, dtype=np.float32).reshape(4, 1)
    w, b = al.Variable(w0, name="w"), al.Variable(b0, name="b")

    @al.function(backend=on)
    def train(x, y, steps):
        i = 0
        while i < steps:
            with al.GradientTape() as tape:
                loss = al.reduce_mean(al.square(al.matmul(al.tanh(al.matmul(x, w)), b) - y))
            grad_w, grad_b = tape.gradient(loss, [w, b])
            w.assign_sub(0.2 * grad_w)
            b.assign_sub(0.2 * grad_b)
            i += 1
        return loss

    train(x, y, al.constant(25))
    expected_w, expected_b = by_hand(x, y, w0, b0, 25, 0.2)
    np.testing.assert_allclose(w.numpy(), expected_w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.numpy(), expected_b, rtol=1e-4, atol=1e-5)
    train(x, y, al.constant(5))  # continues from the trained weights, same trace
    expected_w, expected_b = by_hand(x, y, expected_w, expected_b, 5, 0.2)
    np.testing.assert_allclose(w.numpy(), expected_w, rtol=1e-4, atol=1e-5)
    assert train.experimental_get_tracing_count() == 1
