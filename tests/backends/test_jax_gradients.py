"""Gradients on XLA: autoloop's reverse mode lowered too, through loops whose trip count depends on data.

``jax.grad`` refuses ``lax.while_loop``; autoloop differentiates the loop as
a graph (a backward loop reading values saved on stacks), and the JAX
backend compiles that, given a bound on the iterations.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

import autoloop as al  # noqa: E402
from autoloop.errors import BackendError  # noqa: E402


def decay(x, w, checkpoint=None, bound=60):
    """h = tanh(h * w + 0.01) until sum(h) drops below 0.5: a trip count that depends on x and w."""
    def body(i, h):
        return i + 1, al.tanh(h * w + 0.01)
    _, h = al.while_loop(lambda i, h: al.reduce_sum(h) > 0.5, body, (al.constant(0), x),
                         maximum_iterations=bound, checkpoint=checkpoint)
    return al.reduce_sum(h * h)


def jax_decay(x, w):
    import jax.numpy as jnp
    h = jax.lax.while_loop(lambda h: jnp.sum(h) > 0.5, lambda h: jnp.tanh(h * w + 0.01), x)
    return jnp.sum(h * h)


X, W = np.array([1.0, 2.0, 0.5]), np.array(0.9)


def gradient_function(checkpoint=None, backend="jax", bound=60):
    return al.function(lambda x, w: al.gradients(decay(x, w, checkpoint, bound), [x, w]), backend=backend)


def numeric_gradient(x, w, step=1e-6):
    def loss(x, w):
        return float(al.function(decay, autograph=False)(x, w).numpy())
    dx = np.array([(loss(x + step * e, w) - loss(x - step * e, w)) / (2 * step) for e in np.eye(len(x))])
    dw = (loss(x, w + step) - loss(x, w - step)) / (2 * step)
    return dx, dw


def test_jax_grad_refuses_the_loop_that_autoloop_differentiates_on_xla():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.grad(jax_decay, argnums=(0, 1))(X, W)
    assert np.isclose(float(jax_decay(X, W)), float(al.function(decay)(X, W).numpy()))
    on_jax = [g.numpy() for g in gradient_function()(X, W)]
    on_numpy = [g.numpy() for g in gradient_function(backend="numpy")(X, W)]
    for found, expected, numeric in zip(on_jax, on_numpy, numeric_gradient(X, W)):
        np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(found, numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("checkpoint", [True, 4])
def test_checkpointed_gradients_match_and_keep_few_states(checkpoint):
    bound = 400
    stored = [g.numpy() for g in gradient_function(None, bound=bound)(X, W)]
    function = gradient_function(checkpoint, bound=bound)
    found = [g.numpy() for g in function(X, W)]
    for a, b in zip(found, stored):
        np.testing.assert_array_equal(a, b)  # bit for bit, as docs/api.md promises
    concrete = function.get_concrete_function(X, W)
    layouts = concrete.compiled.facts.layouts
    stacks = [layouts.of(n.outputs[0]).capacity for n in concrete.graph.walk() if n.op == "StackNew"]
    limit = 2 * int(np.sqrt(bound)) + 1 if checkpoint is True else bound // checkpoint + 1
    assert stacks and max(stacks) <= limit  # states kept: about sqrt(bound) (or bound / stride), not bound


def test_a_gradient_through_a_loop_without_a_bound_in_a_program_with_effects_names_the_fix():
    def unbounded(x, w):
        def body(i, h):
            al.print(i)  # seen on every run: the program cannot be run again with a larger capacity
            return i + 1, al.tanh(h * w + 0.01)
        _, h = al.while_loop(lambda i, h: al.reduce_sum(h) > 0.5, body, (al.constant(0), x))
        return al.gradients(al.reduce_sum(h * h), [x, w])

    with pytest.raises(BackendError, match="the values this loop saves for its gradient.*capacity=N.*checkpoint=True") \
            as raised:
        al.function(unbounded, backend="jax")(X, W)
    assert f"{__file__}:{unbounded.__code__.co_firstlineno + 4}" in str(raised.value)


def test_a_gradient_through_a_loop_without_a_bound_grows_its_capacity():
    def unbounded(x, w):
        def body(i, h):
            return i + 1, al.sin(h * w)
        i, h = al.while_loop(lambda i, h: al.reduce_sum(h) > 0.5, body, (al.constant(0), x))
        return [i] + al.gradients(al.reduce_sum(h * h), [x, w])

    x, w = al.constant(np.full(3, 1.5)), al.constant(0.999, al.float64)  # 94 iterations: past the first capacity, 64
    expected = al.function(unbounded)(x, w)
    found = al.function(unbounded, backend="jax")(x, w)
    assert int(found[0]) == int(expected[0]) > 64
    for got, want in zip(found[1:], expected[1:]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


def test_counted_loops_need_no_bound():
    def rnn(w, xs, h):
        for x in xs:
            h = al.tanh(al.linalg.matvec(w, h) + x)
        return al.reduce_sum(h * h)

    rng = np.random.default_rng(1)
    w, xs, h = rng.standard_normal((4, 4)) / 2, rng.standard_normal((6, 4)), np.zeros(4)
    grads = [al.function(lambda w, xs, h: al.gradients(rnn(w, xs, h), [w, xs]), backend=b)(w, xs, h)
             for b in ("numpy", "jax")]
    for expected, found in zip(*grads):
        np.testing.assert_allclose(found.numpy(), expected.numpy(), rtol=1e-12, atol=1e-14)


def test_swap_memory_is_a_no_op_where_the_host_is_the_device():
    def loss(x, w, swap):
        def body(i, h):
            return i + 1, al.tanh(h * w + 0.01)
        _, h = al.while_loop(lambda i, h: al.reduce_sum(h) > 0.5, body, (al.constant(0), x), maximum_iterations=60,
                             swap_memory=swap)
        return al.gradients(al.reduce_sum(h * h), [x, w])

    plain = al.function(lambda x, w: loss(x, w, False), backend="jax")(X, W)
    swapped = al.function(lambda x, w: loss(x, w, True), backend="jax")
    for a, b in zip(plain, swapped(X, W)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    concrete = swapped.get_concrete_function(X, W)
    assert any(concrete.compiled.facts.layouts.of(n.outputs[0]).host for n in concrete.graph.walk()
               if n.op == "StackNew")  # marked for host memory; on a CPU that memory is the device's


def test_an_eager_tape_over_a_jax_function():
    f = al.function(lambda x: al.reduce_sum(al.sin(x) * x), backend="jax")
    x = al.constant([0.5, 1.0])
    with al.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0]),
                               rtol=1e-6)

    def looped(x):
        for _ in al.range(3):
            x = al.sin(x) * x
        return x

    with al.GradientTape() as tape:  # the values its loop saves would have to leave the compiled program
        tape.watch(x)
        with pytest.raises(BackendError, match="a gradient that an eager GradientTape takes of a backend='jax' "
                                               "function whose loops save values.*Take the gradient inside the "
                                               "function") as raised:
            al.function(looped, backend="jax")(x)
    assert raised.value.__cause__ is None


def nested_loss(x, depth=3):
    """A `for` over range(tensor) inside another: the outer loop saves the inner loop's stacks."""
    s = x * 0.0
    for i in range(al.constant(depth)):
        for j in range(al.constant(2)):
            s = s + al.sin(x * s + 1.0) * al.cast(i + j, x.dtype)
    return al.reduce_sum(s * s)


def test_gradients_through_nested_loops_keep_the_inner_loops_stacks():
    def gradient(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = nested_loss(x)
        return tape.gradient(y, x)

    x = np.array([0.3, -0.5])
    found = al.function(gradient, backend="jax")(x).numpy()
    np.testing.assert_allclose(found, al.function(gradient)(x).numpy(), rtol=1e-12, atol=1e-15)
    loss = al.function(nested_loss)
    step = 1e-6
    numeric = [(loss(x + step * e).numpy() - loss(x - step * e).numpy()) / (2 * step) for e in np.eye(2)]
    np.testing.assert_allclose(found, numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("checkpoint", [True, 2])
def test_checkpointed_gradients_are_the_stored_ones_bit_for_bit(checkpoint):
    """A body where XLA would fuse a multiply into an add (one rounding instead of two) in one loop and not in
    another: the recomputing loop saves other values than the forward loop, so fuses otherwise."""
    def gradient(w, x, h, checkpoint):
        def body(i, h):
            return i + 1, al.sin(h * w[0] + x) * al.exp(-h * h) + 0.3 * h
        _, last = al.while_loop(lambda i, h: al.reduce_sum(h * h) < 1e9, body, (al.constant(0), h),
                                maximum_iterations=13, checkpoint=checkpoint)
        return al.gradients(al.reduce_sum(last * last * last), [w, x, h])

    rng = np.random.default_rng(0)
    w, x, h = rng.standard_normal((4, 4)) / 2, rng.standard_normal(4), rng.standard_normal(4)
    stored = al.function(lambda w, x, h: gradient(w, x, h, None), backend="jax")(w, x, h)
    found = al.function(lambda w, x, h: gradient(w, x, h, checkpoint), backend="jax")(w, x, h)
    for a, b in zip(found, stored):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
