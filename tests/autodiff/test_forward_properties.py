"""Generated loop/branch programs in forward mode and second order, against finite differences and
against each other: a JVP along a basis vector is a column of the Jacobian, and a Hessian-vector
product (forward over reverse) is the Hessian (reverse over reverse) times the vector.

The programs are `test_properties`' (data-dependent ``while`` loops, ``if`` and ``for``, nested).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autoloop as al
from tests.compiler.programs import make_function

from .checks import BACKENDS
from .jvp_checks import check_jvp
from .test_properties import programs

def _settings(examples):
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


EXAMPLES = 16


def _arguments(seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, 2), rng.uniform(-1.5, 1.5, 2)]


@_settings(EXAMPLES)
@given(programs(), st.integers(0, 2 ** 16))
def test_jvp_of_generated_programs_matches_finite_differences(source, seed):
    function = make_function(source, "generated", {"al": al})
    try:
        check_jvp(function, _arguments(seed), autograph=True, step=1e-7, rtol=1e-5, atol=1e-6, seed=seed)
    except AssertionError as error:
        raise AssertionError(f"{error}\n--- program ---\n{source}") from None


@_settings(EXAMPLES // 2)
@given(programs(), st.integers(0, 2 ** 16))
def test_jacobian_columns_are_basis_jvps(source, seed):
    function = al.to_graph(make_function(source, "generated", {"al": al}))  # jvp calls it as given

    def both(a, b):
        with al.GradientTape(persistent=True) as tape:
            tape.watch([a, b])
            y = function(a, b)
        jacobians = tape.jacobian(y, [a, b], unconnected_gradients=al.UnconnectedGradients.ZERO)
        columns = []
        for basis in np.eye(4):
            tangents = [al.constant(basis[:2]), al.constant(basis[2:])]
            _, column = al.autodiff.jvp(function, [a, b], tangents, unconnected_gradients="zero")
            columns.append(column)
        return al.concat(jacobians, axis=1), al.stack(columns, axis=1)

    a, b = _arguments(seed)
    jacobian, columns = al.function(both)(a, b)
    np.testing.assert_allclose(jacobian.numpy(), columns.numpy(), rtol=1e-10, atol=1e-12,
                               err_msg=f"--- program ---\n{source}")
    eager_jacobian, _ = both(al.constant(a), al.constant(b))
    np.testing.assert_allclose(eager_jacobian.numpy(), jacobian.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend_name", BACKENDS)
@_settings(EXAMPLES // 2)
@given(programs(), st.integers(0, 2 ** 16))
def test_vectorized_jacobians_equal_the_row_loop_and_finite_differences(backend_name, source, seed):
    """``experimental_use_pfor=True`` (the backward pass batched over the rows, its loops kept as loops)
    against the row loop, traced and eagerly, and against central differences; no op falls back."""
    function = al.to_graph(make_function(source, "generated", {"al": al}))

    def jacobians(a, b, use_pfor):
        with al.GradientTape(persistent=True) as tape:
            tape.watch([a, b])
            y = function(a, b)
        return al.concat(tape.jacobian(y, [a, b], unconnected_gradients="zero", experimental_use_pfor=use_pfor),
                         axis=1)

    a, b = _arguments(seed)
    where = f"--- program ---\n{source}"
    looped = al.function(lambda a, b: jacobians(a, b, False))(a, b).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback would warn
        vectorized = al.function(lambda a, b: jacobians(a, b, True), backend=backend_name)(a, b).numpy()
        eager = jacobians(al.constant(a), al.constant(b), True).numpy()
    np.testing.assert_allclose(vectorized, looped, rtol=1e-10, atol=1e-12, err_msg=where)
    np.testing.assert_allclose(eager, looped, rtol=1e-10, atol=1e-12, err_msg=where)
    step, point = 1e-6, np.concatenate([a, b])
    columns = []
    for k in range(4):
        shift = np.eye(4)[k] * step
        plus, minus = point + shift, point - shift
        columns.append((function(al.constant(plus[:2]), al.constant(plus[2:])).numpy() -
                        function(al.constant(minus[:2]), al.constant(minus[2:])).numpy()) / (2 * step))
    np.testing.assert_allclose(vectorized, np.stack(columns, axis=1), rtol=1e-4, atol=1e-5, err_msg=where)


@_settings(EXAMPLES // 3)
@given(programs(), st.integers(0, 2 ** 16))
def test_hessian_vector_products_of_generated_programs(source, seed):
    function = al.to_graph(make_function(source, "generated", {"al": al}))  # hvp calls it as given
    a, b = _arguments(seed)
    v = np.random.default_rng(seed + 1).standard_normal(2)

    def loss(a):
        return al.reduce_sum(function(a, al.constant(b)) ** 2.0)

    def products(a, v):
        (forward_over_reverse,) = al.autodiff.hvp(loss, [a], [v])
        (hessian,) = al.hessians(loss(a), [a])
        return forward_over_reverse, hessian

    traced, hessian = al.function(products)(a, v)

    def gradient(x):
        x = al.constant(x)
        with al.GradientTape() as tape:
            tape.watch(x)
            value = loss(x)
        return tape.gradient(value, x, unconnected_gradients="zero").numpy()

    step = 1e-6
    numeric = (gradient(a + step * v) - gradient(a - step * v)) / (2 * step)
    where = f"--- program ---\n{source}"
    np.testing.assert_allclose(traced.numpy(), numeric, rtol=1e-4, atol=1e-5, err_msg=where)
    np.testing.assert_allclose(hessian.numpy() @ v, traced.numpy(), rtol=1e-9, atol=1e-10, err_msg=where)
    (eager,) = al.autodiff.hvp(loss, [al.constant(a)], [al.constant(v)])
    np.testing.assert_allclose(eager.numpy(), traced.numpy(), rtol=1e-9, atol=1e-10, err_msg=where)
