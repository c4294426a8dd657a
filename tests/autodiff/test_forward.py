"""ForwardAccumulator, autodiff.jvp and hvp: eagerly, traced, through loops, on numpy and JAX."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al

from .checks import BACKENDS


def _collatz_like(x):
    """A data-dependent loop: halve while the norm is large, with a branch inside."""
    steps = al.constant(0)
    while al.reduce_sum(x * x) > 0.1:
        al.set_loop_options(maximum_iterations=50)
        if al.reduce_sum(x) > 0:
            x = al.sin(x) * 0.5
        else:
            x = x * 0.7
        steps += 1
    return x


def _eager_collatz_like(x):
    while float(al.reduce_sum(x * x)) > 0.1:
        x = al.sin(x) * 0.5 if float(al.reduce_sum(x)) > 0 else x * 0.7
    return x


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_a_data_dependent_loop_carries_its_tangent_without_stacks(backend_name):
    @al.function(backend=backend_name)
    def f(x, t):
        with al.autodiff.ForwardAccumulator(x, t) as acc:
            y = _collatz_like(x)
        return y, acc.jvp(y)

    x0, t0 = np.array([1.3, 0.4, -0.2]), np.array([1.0, -2.0, 0.5])
    y, tangent = f(x0, t0)
    with al.autodiff.ForwardAccumulator(al.constant(x0), al.constant(t0)) as acc:
        pass
    x = al.constant(x0)
    with al.autodiff.ForwardAccumulator(x, al.constant(t0)) as acc:
        expected = _eager_collatz_like(x)
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), acc.jvp(expected).numpy(), rtol=1e-10)
    graph = f.get_concrete_function(x0, t0).graph
    assert not [n for n in graph.walk() if n.op.startswith("Stack")]  # nothing saved per iteration
    (loop,) = [n for n in graph.nodes if n.op == "While"]
    assert any(name.startswith("tangent_") for name in loop.attrs.get("names", ())) or len(loop.outputs) > 2


def test_functional_jvp_and_unconnected():
    x, z = al.constant([1.0, 2.0]), al.constant(3.0)
    y, dy = al.autodiff.jvp(lambda x, z: (x ** 3.0, z * 2.0), [x, z], [al.ones_like(x), al.constant(0.0)])
    np.testing.assert_allclose(dy[0].numpy(), [3.0, 12.0])
    np.testing.assert_allclose(dy[1].numpy(), 0.0)
    with al.autodiff.ForwardAccumulator(x, al.ones_like(x)) as acc:
        w = z * 2.0
    assert acc.jvp(w) is None
    assert acc.jvp(w, unconnected_gradients=al.UnconnectedGradients.ZERO).numpy() == 0.0


def test_accumulator_argument_errors():
    x = al.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="tangent for .* is float32\\(3,\\)"):
        al.autodiff.ForwardAccumulator(x, al.constant([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="floating-point"):
        al.autodiff.ForwardAccumulator(al.constant(1), al.constant(1))
    with pytest.raises((TypeError, ValueError)):
        al.autodiff.ForwardAccumulator([x, x], [x])


def test_an_eager_call_of_a_traced_function_runs_its_tangent_program():
    @al.function
    def looped(x, scale):
        for _ in al.range(3):
            x = al.tanh(x) * scale
        return x, al.shape(x)

    x, scale = al.constant([0.5, -1.0]), al.constant(1.5)
    with al.autodiff.ForwardAccumulator(x, al.constant([1.0, 2.0])) as acc:
        y, size = looped(x, scale)
        z = y * 2.0
    with al.autodiff.ForwardAccumulator(x, al.constant([1.0, 2.0])) as expected:
        plain = x
        for _ in range(3):
            plain = al.tanh(plain) * scale
    np.testing.assert_allclose(acc.jvp(z).numpy(), 2.0 * expected.jvp(plain).numpy(), rtol=1e-6)
    assert acc.jvp(size) is None
    with al.GradientTape() as tape:
        tape.watch(x)
        with al.autodiff.ForwardAccumulator(x, al.constant([1.0, 2.0])):
            with pytest.raises(NotImplementedError, match="one mode at a time"):
                looped(x, scale)


def test_scan_and_tensor_arrays_in_forward_mode():
    def run(xs, h):
        ys, final, _ = al.scan(body=lambda x, state: (al.tanh(x * state), al.tanh(x * state)),
                               initial=h, xs=xs, ys=al.TensorSpec([2], al.float64))
        array = al.TensorArray(al.float64, size=2)
        array = array.write(0, h * 2.0).write(1, final)
        return al.reduce_sum(ys) + al.reduce_sum(array.stack())

    xs0, h0, t0 = np.array([[0.5, -1.0], [1.5, 0.3], [0.2, 0.2]]), np.array([0.4, 0.9]), np.array([1.0, -1.0])

    @al.function
    def traced(xs, h, t):
        with al.autodiff.ForwardAccumulator(h, t) as acc:
            y = run(xs, h)
        return acc.jvp(y)

    step = 1e-6
    numeric = (al.function(run)(xs0, h0 + step * t0).numpy() - al.function(run)(xs0, h0 - step * t0).numpy()) / (
        2 * step)
    np.testing.assert_allclose(traced(xs0, h0, t0).numpy(), numeric, rtol=1e-6)
    h = al.constant(h0)
    with al.autodiff.ForwardAccumulator(h, al.constant(t0)) as acc:
        y = run(al.constant(xs0), h)
    np.testing.assert_allclose(acc.jvp(y).numpy(), numeric, rtol=1e-6)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_hvp_through_a_loop_equals_the_hessian_times_the_vector(backend_name):
    def loss(x):
        s = x
        for _ in al.range(4):
            s = al.tanh(s) * x
        return al.reduce_sum(s * s)

    @al.function(backend=backend_name)
    def both(x, v):
        (product,) = al.autodiff.hvp(al.to_graph(loss), [x], [v])
        (hessian,) = al.hessians(loss(x), [x])  # the backward loop is bounded like the forward one (XLA)
        return product, hessian

    x0, v0 = np.array([0.3, -0.5, 0.8]), np.array([1.0, 0.5, -0.2])
    product, hessian = both(x0, v0)
    np.testing.assert_allclose(product.numpy(), hessian.numpy() @ v0, rtol=1e-10)
    np.testing.assert_allclose(hessian.numpy(), hessian.numpy().T, rtol=1e-10)
    (eager,) = al.autodiff.hvp(lambda x: al.reduce_sum(_eager_power(x)), [al.constant(x0)], [al.constant(v0)])
    np.testing.assert_allclose(eager.numpy(), product.numpy(), rtol=1e-10)
    with pytest.raises(RuntimeError, match="nest two GradientTapes"):
        al.hessians(al.constant(1.0), [al.constant(1.0)])


def _eager_power(x):
    s = x
    for _ in range(4):
        s = al.tanh(s) * x
    return s * s


def test_nested_tapes_give_second_derivatives_through_a_loop():
    x = al.constant([0.3, -0.5])
    with al.GradientTape() as outer:
        outer.watch(x)
        with al.GradientTape() as inner:
            inner.watch(x)
            y = al.reduce_sum(_eager_power(x))
        g = inner.gradient(y, x)
    hessian = outer.jacobian(g, x)
    (h_v,) = al.autodiff.hvp(lambda x: al.reduce_sum(_eager_power(x)), [x], [al.constant([1.0, 0.0])])
    np.testing.assert_allclose(hessian.numpy()[:, 0], h_v.numpy(), rtol=1e-6)


def test_tf1_session_runs_hessians_jvps_jacobians_and_custom_gradients():
    import autoloop.compat.v1 as tf
    graph = tf.Graph()
    with graph.as_default():
        p = tf.placeholder(tf.float64, [3])

        def loop(p):
            return tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.tanh(s) * p), [tf.constant(0), p])[1]
        (hessian,) = tf.hessians(tf.reduce_sum(loop(p) ** 2.0), [p])
        with tf.autodiff.ForwardAccumulator(p, tf.constant([1.0, 0.5, -0.2], tf.float64)) as acc:
            s = loop(p)
        with al.GradientTape() as tape:
            tape.watch(p)
            y = loop(p)
        jacobian = tape.jacobian(y, p)

        @tf.custom_gradient
        def tripled(x):
            return x * 1.0, lambda upstream: upstream * 3.0
        custom = tf.gradients(tf.reduce_sum(tripled(p)), [p])[0]
        with tf.Session() as session:
            found = session.run([hessian, acc.jvp(s), jacobian, custom], feed_dict={p: [0.3, -0.5, 0.8]})
    h, tangent, j, c = found
    np.testing.assert_allclose(h @ [1.0, 0.5, -0.2], [0.03667094, 0.30583754, -0.81297274], rtol=1e-6)
    np.testing.assert_allclose(j @ [1.0, 0.5, -0.2], tangent, rtol=1e-10)
    np.testing.assert_array_equal(c, [3.0, 3.0, 3.0])


def test_forward_over_forward_gives_second_derivatives():
    def cube(x):
        y = x
        for _ in al.range(2):
            y = y * x
        return y

    def second(x):
        with al.autodiff.ForwardAccumulator(x, al.constant(1.0)) as outer:
            with al.autodiff.ForwardAccumulator(x, al.constant(1.0)) as inner:
                y = cube(x)
            dy = inner.jvp(y)
        return dy, outer.jvp(dy)

    for run in (second, al.function(second)):
        dy, ddy = run(al.constant(1.5))
        assert dy.numpy() == 6.75 and ddy.numpy() == 9.0
