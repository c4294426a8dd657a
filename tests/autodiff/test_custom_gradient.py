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


def test_not_returning_a_grad_fn_is_an_error():
    with pytest.raises(TypeError, match="must return \\(result, grad_fn\\)"):
        al.custom_gradient(lambda x: x)(al.constant(1.0))


# -- the variables form (TensorFlow's): grad_fn(upstream, variables=...) -> (input_grads, variable_grads) ----
def _scaled_by(v):
    """x * v whose gradients are v for x (the true one) and 10 * upstream * x for v (not the true one)."""
    @al.custom_gradient
    def scaled(x):
        def grad(upstream, variables=None):
            assert len(variables) == 1 and variables[0] is v
            return upstream * v, [upstream * x * 10.0]
        return x * v, grad
    return scaled


def _gradients_through(fn, v, x, steps):
    with al.GradientTape() as tape:
        tape.watch(x)
        s = x
        for _ in al.range(steps):  # a graph loop when traced
            s = fn(s)
    return tape.gradient(s, [x, v])


@pytest.mark.parametrize("mode", ["eager", "numpy", "jax"])
def test_variables_form_eagerly_traced_and_in_loops(mode):
    if mode == "jax":
        pytest.importorskip("jax")
    v = al.Variable(2.0)
    scaled = _scaled_by(v)
    run = _gradients_through if mode == "eager" else al.function(_gradients_through, backend=mode)
    for steps, expected in ((1, [2.0, 15.0]), (3, [8.0, 180.0])):  # s: 1.5, 3, 6, 12; 10 * (1*6 + 2*3 + 4*1.5)
        found = run(scaled, v, al.constant(1.5), steps)
        np.testing.assert_allclose([g.numpy() for g in found], expected)


def test_variables_form_in_a_training_step_that_updates_the_variable():
    v = al.Variable(2.0)
    scaled = _scaled_by(v)

    @al.function
    def step(x):
        with al.GradientTape() as tape:
            loss = scaled(x)
        (gradient,) = tape.gradient(loss, [v])
        v.assign_sub(0.01 * gradient)
        return gradient

    assert step(al.constant(1.5)).numpy() == pytest.approx(15.0)
    assert v.numpy() == pytest.approx(1.85)


def test_variables_form_in_a_tf1_session_and_a_grad_fn_reading_an_updated_variable():
    """TF1: ``gradients(y, [x, v])`` gives grad_fn's gradients (TensorFlow 2.21: [1.0, 15.0]). Traced after an
    assignment, grad_fn reads the variable when the backward pass runs, as TensorFlow's does."""
    tf1 = al.compat.v1
    with tf1.Graph().as_default():
        v = tf1.get_variable("v", shape=[], dtype=al.float32, initializer=tf1.ones_initializer())
        x = tf1.placeholder(al.float32, [])
        gradients = tf1.gradients(_scaled_by(v)(x), [x, v])
        with tf1.Session() as session:
            session.run(tf1.global_variables_initializer())
            np.testing.assert_allclose(session.run(gradients, {x: 1.5}), [1.0, 15.0])
    w = al.Variable(2.0)
    scaled = _scaled_by(w)

    @al.function
    def after_assign(x):
        w.assign(4.0)
        return _gradients_through(scaled, w, x, 1)

    np.testing.assert_allclose([g.numpy() for g in after_assign(al.constant(1.5))], [4.0, 15.0])


def test_variables_form_errors_are_tensorflows():
    v = al.Variable(2.0)

    @al.custom_gradient
    def without_parameter(x):
        def grad(upstream):
            return upstream * v
        return x * v, grad

    for run in (lambda fn: fn(al.constant(1.0)), al.function(lambda fn: fn(al.constant(1.0)))):
        with pytest.raises(TypeError, match=r"must accept a keyword argument 'variables', since "
                                            r"'\S*without_parameter' reads the variables 'Variable'"):
            run(without_parameter)

    @al.custom_gradient
    def no_variable_gradients(x):
        def grad(upstream, variables=None):
            return upstream * v, []
        return x * v, grad

    x = al.constant(1.0)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = no_variable_gradients(x)
    with pytest.raises(ValueError, match="returned 0 variable gradients, but the function read 1 variables"):
        tape.gradient(y, [x, v])


def test_variables_form_without_trainable_reads_and_none_gradients():
    """Only trainable variables count (TensorFlow's watcher): reading none, grad_fn gets no `variables`, and
    ``(input_grads, [])`` is read as the input gradients; a None variable gradient is no gradient."""
    frozen, v = al.Variable(3.0, trainable=False), al.Variable(2.0)
    seen = []

    @al.custom_gradient
    def by_frozen(x):
        def grad(upstream, variables=None):
            seen.append(variables)
            return upstream * frozen, []
        return x * frozen, grad

    @al.custom_gradient
    def no_gradient_for_v(x):
        def grad(upstream, variables=None):
            return upstream * v, [None]
        return x * v, grad

    x = al.constant(1.5)
    with al.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y, z = by_frozen(x), no_gradient_for_v(x)
    assert tape.gradient(y, x).numpy() == 3.0 and seen == [None]
    found = tape.gradient(z, [x, v])
    assert found[0].numpy() == 2.0 and found[1] is None


@pytest.mark.parametrize("traced", [False, True])
def test_recompute_grad_of_a_block_that_reads_variables(traced):
    w = al.Variable([[0.5, -0.3], [0.2, 0.8]])

    def block(h):
        return al.tanh(al.matmul(h, w))

    def gradients(fn, h):
        with al.GradientTape() as tape:
            tape.watch(h)
            loss = al.reduce_sum(fn(fn(h)))
        return tape.gradient(loss, [h, w])

    run = al.function(gradients) if traced else gradients
    h = al.constant([[1.0, -2.0]])
    expected = gradients(block, h)
    for got, want in zip(run(al.recompute_grad(block), h), expected):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


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
