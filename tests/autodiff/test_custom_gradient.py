"""custom_gradient and recompute_grad: eagerly, traced, inside loops, on numpy and JAX."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al

from .checks import BACKENDS


@al.custom_gradient
def clipped_square(x):
    """x * x whose gradient is clipped to [-1, 1] (so it differs from the true one)."""
    def grad(upstream):
        return al.clip_by_value(upstream * 2.0 * x, -1.0, 1.0)
    return x * x, grad


@al.custom_gradient
def log1pexp(x):
    e = al.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return al.math.log(1 + e), grad


def test_eager_gradient_is_the_users():
    x = al.constant([0.1, 3.0, -2.0])
    with al.GradientTape() as tape:
        tape.watch(x)
        y = clipped_square(x)
    np.testing.assert_allclose(y.numpy(), [0.01, 9.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [0.2, 1.0, -1.0], rtol=1e-6)


def test_the_stable_gradient_of_the_tf_guide():
    x = al.constant(100.0)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert tape.gradient(y, x).numpy() == 1.0  # the plain formula gives nan


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_traced_inside_a_loop(backend_name):
    @al.function(backend=backend_name)
    def f(x, n):
        total = al.constant(0.0)
        for _ in al.range(n):
            total = total + al.reduce_sum(clipped_square(x * (total + 1.0)))
        return total, al.gradients(total, [x])[0]

    def expected(x, n):  # the same loop eagerly, under a tape
        x = al.constant(x)
        with al.GradientTape() as tape:
            tape.watch(x)
            total = al.constant(0.0)
            for _ in range(n):
                total = total + al.reduce_sum(clipped_square(x * (total + 1.0)))
        return total.numpy(), tape.gradient(total, x).numpy()

    x = np.array([0.3, -0.2], np.float32)
    total, grad = f(x, 3)
    want_total, want_grad = expected(x, 3)
    np.testing.assert_allclose(total.numpy(), want_total, rtol=1e-5)
    np.testing.assert_allclose(grad.numpy(), want_grad, rtol=1e-5)


def test_several_arguments_nested_results_and_none():
    @al.custom_gradient
    def f(a, b):
        def grad(d_prod, d_sum):  # one upstream gradient per result, flattened as nest does (sorted keys)
            return d_sum * 10.0 + d_prod, None
        return {"sum": a + b, "prod": a * b}, grad

    a, b = al.constant(2.0), al.constant(3.0)
    with al.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        out = f(a, b)
        total = out["sum"] * 2.0 + out["prod"]
    grads = tape.gradient(total, [a, b])
    assert grads[0].numpy() == 21.0 and grads[1] is None

    @al.function
    def traced(a, b):
        out = f(a, b)
        return al.gradients(out["sum"], [a, b])
    found = traced(a, b)
    assert found[0].numpy() == 10.0 and found[1] is None  # no upstream for "prod": zeros


def test_a_wrong_gradient_count_or_shape_is_reported():
    @al.custom_gradient
    def two_grads(x):
        return x * 1.0, lambda upstream: (upstream, upstream)

    @al.custom_gradient
    def bad_shape(x):
        return x * 1.0, lambda upstream: al.reduce_sum(upstream)

    x = al.constant([1.0, 2.0])
    for fn, error, words in ((two_grads, ValueError, "returned 2 gradients"),
                             (bad_shape, ValueError, "of shape ()")):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        with pytest.raises(error, match=words):
            tape.gradient(y, x)


def test_not_returning_a_grad_fn_and_the_variables_form_are_errors():
    with pytest.raises(TypeError, match="must return \\(result, grad_fn\\)"):
        al.custom_gradient(lambda x: x)(al.constant(1.0))

    @al.custom_gradient
    def with_variables(x):
        def grad(upstream, variables=None):
            return upstream
        return x * 1.0, grad
    with pytest.raises(NotImplementedError, match="variables="):
        with_variables(al.constant(1.0))


def test_second_order_through_a_custom_gradient():
    """The gradient function is differentiated like any code (as in TensorFlow, eagerly only through
    what it computes from the arguments: the function's own ops are not recorded)."""
    x = al.constant(0.3)
    with al.GradientTape() as outer:
        outer.watch(x)
        with al.GradientTape() as inner:
            inner.watch(x)
            y = clipped_square(x)
        dy = inner.gradient(y, x)
    assert outer.gradient(dy, x).numpy() == 2.0

    @al.function
    def traced(x):
        return al.gradients(al.gradients(clipped_square(x), [x])[0], [x])[0]
    assert traced(al.constant(0.3)).numpy() == 2.0 and traced(al.constant(3.0)).numpy() == 0.0


# -- recompute_grad --------------------------------------------------------------------------
def _block(w):
    return lambda h: al.tanh(al.matmul(h, w)) * 2.0


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_recompute_grad_gives_the_plain_gradient(backend_name):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 4)) * 0.5
    h0 = rng.standard_normal((2, 4))

    def run(block):
        @al.function(backend=backend_name)
        def f(h):
            g = h
            for _ in al.range(5):
                g = block(g)
            return al.gradients(al.reduce_sum(g * g), [h])[0]
        return f(h0).numpy()

    np.testing.assert_allclose(run(al.recompute_grad(_block(w))), run(_block(w)), rtol=1e-10)
    h = al.constant(h0)
    with al.GradientTape() as tape:
        tape.watch(h)
        g = al.recompute_grad(_block(w))(h)
    np.testing.assert_allclose(tape.gradient(g, h).numpy(),
                               al.function(lambda h: al.gradients(_block(w)(h), [h])[0])(h0).numpy(), rtol=1e-10)


def test_recompute_grad_saves_only_the_arguments_in_a_loop():
    w = np.eye(3) * 0.5

    def saved(block):
        def f(h):
            g = h
            for _ in al.range(4):
                g = block(g)
            return al.gradients(al.reduce_sum(g), [h])[0]
        graph = al.function(f).get_concrete_function(np.ones((2, 3))).graph
        loop = next(n for n in graph.nodes if n.op == "While" and "_gradient" in n.attrs)
        return loop.attrs["_gradient"].saved

    def deep(h):  # five values a plain gradient reads per iteration
        for _ in range(3):
            h = al.tanh(al.matmul(h, w))
        return h

    assert len(saved(deep)) >= 3
    assert len(saved(al.recompute_grad(deep))) == 1  # only the block's argument
