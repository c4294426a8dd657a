"""GradientTape.jacobian / batch_jacobian and UnconnectedGradients."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al

from .checks import BACKENDS


def _program(x):
    y = x
    for _ in range(3):
        y = al.sin(y) * x + al.reduce_sum(x)
    return y


def _numeric_jacobian(fn, x, step=1e-6):
    x = np.asarray(x, np.float64)
    columns = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = step
        plus = fn(x + e.reshape(x.shape))
        minus = fn(x - e.reshape(x.shape))
        columns.append(((plus - minus) / (2 * step)).ravel())
    return np.stack(columns, axis=1).reshape(np.shape(fn(x)) + x.shape)


def _eval(x):
    return _program(al.constant(x)).numpy()


def test_eager_jacobian_matches_finite_differences():
    x0 = np.array([0.3, -0.7, 1.1])
    x = al.constant(x0)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = _program(x)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), _numeric_jacobian(_eval, x0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_traced_jacobian_is_one_row_loop(backend_name):
    x0 = np.array([[0.3, -0.7], [1.1, 0.2]])

    @al.function(backend=backend_name)
    def f(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in al.range(3):
                y = al.sin(y) * x + al.reduce_sum(x)
        return tape.jacobian(y, x)

    np.testing.assert_allclose(f(x0).numpy(), _numeric_jacobian(_eval, x0), rtol=1e-6, atol=1e-8)
    graph = f.get_concrete_function(x0).graph
    rows = [n for n in graph.nodes if n.op == "While"]
    assert len(rows) == 2  # the forward loop and the row loop: the backward pass is not unrolled per row
    assert any(n.op == "While" for n in rows[1].attrs["body"].nodes)  # one backward loop, inside the rows


def test_unconnected_and_structures():
    x, z = al.constant([1.0, 2.0]), al.constant([3.0, 4.0, 5.0])
    with al.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    found = tape.jacobian(y, {"x": x, "z": z})
    np.testing.assert_array_equal(found["x"].numpy(), np.eye(2) * 2)
    assert found["z"] is None
    zeros = tape.jacobian(y, z, unconnected_gradients=al.UnconnectedGradients.ZERO)
    assert zeros.shape == (2, 3) and not zeros.numpy().any()
    assert tape.gradient(y, z, unconnected_gradients="zero").shape == (3,)
    with pytest.raises(ValueError, match="UnconnectedGradients.NONE or .ZERO"):
        tape.gradient(y, z, unconnected_gradients="zeros")


def test_tape_rules():
    x = al.constant([1.0, 2.0])
    with al.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.jacobian(y, x)
    with pytest.raises(RuntimeError, match="one set of gradients"):
        tape.jacobian(y, x)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.jacobian(y, x, experimental_use_pfor=False)


@pytest.mark.parametrize("traced", [False, True])
def test_batch_jacobian(traced):
    x0 = np.random.default_rng(0).standard_normal((3, 2))
    w = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])

    def per_example(x):
        return al.tanh(al.matmul(x, w))

    def run(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = per_example(x)
        return tape.batch_jacobian(y, x)

    found = (al.function(run)(x0) if traced else run(al.constant(x0))).numpy()
    assert found.shape == (3, 3, 2)
    for b in range(3):
        expected = _numeric_jacobian(lambda row: per_example(al.constant(row[None]))[0].numpy(), x0[b])
        np.testing.assert_allclose(found[b], expected, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="batch size"):
        with al.GradientTape() as tape:
            x = al.constant(x0)
            tape.watch(x)
            y = al.reduce_sum(x, axis=1)[:2]
        tape.batch_jacobian(y, x)
