"""A list appended to in a loop of data-dependent length, stacked and reduced over its rows, compiles on JAX.

``stack(l)`` then has a length known only when the program runs; a reduction over axis 0 (and the gradient of a
sum) reads the rows below that length only, giving the numpy backend's result. Anything else that would need the
stack's shape while compiling is still a `BackendError` naming the list.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

import autoloop as al  # noqa: E402
from autoloop.errors import BackendError  # noqa: E402

REDUCTIONS = [al.reduce_sum, al.reduce_prod, al.reduce_max, al.reduce_min]


def kept_positive(reduce):
    def kept(xs):
        rows = []
        for x in xs:
            if al.reduce_sum(x) > 0:
                rows.append(x)
        return reduce(al.stack(rows), axis=0)
    return kept


@pytest.mark.parametrize("reduce", REDUCTIONS, ids=lambda r: r.__name__)
def test_a_reduction_over_the_rows_of_a_stack_of_run_time_length_is_numpys(reduce):
    xs = al.constant([[1, 2], [-5, 1], [3, -1], [-2, -2]])  # rows 0 and 2 are kept
    expected = al.function(kept_positive(reduce))(xs).numpy()
    found = al.function(kept_positive(reduce), backend="jax")(xs).numpy()
    assert found.dtype == expected.dtype and found.tolist() == expected.tolist()
    assert expected.tolist() == reduce(al.constant([[1, 2], [3, -1]]), axis=0).numpy().tolist()


def test_a_stack_with_no_rows_reduces_to_the_identity():
    xs = al.constant([[-1.5, 0.25]])
    for reduce in (al.reduce_sum, al.reduce_prod):
        assert al.function(kept_positive(reduce), backend="jax")(xs).numpy().tolist() == \
            al.function(kept_positive(reduce))(xs).numpy().tolist()


def test_any_and_all_over_every_element():
    def flags(xs):
        seen = []
        for x in xs:
            if x > 0:
                seen.append(x > 2)
        stacked = al.stack(seen)
        return al.reduce_any(stacked), al.reduce_all(stacked)

    for values in ([1, 3, -1], [1, 2], [-1]):
        expected = [v.numpy().tolist() for v in al.function(flags)(al.constant(values))]
        assert [v.numpy().tolist() for v in al.function(flags, backend="jax")(al.constant(values))] == expected


def test_the_gradient_of_a_sum_over_a_stack_of_run_time_length():
    def model(a, xs):
        acc = [a]
        for v in xs:
            if v > 0.0:
                acc.append(al.tanh(v * a))
        return al.reduce_sum(al.stack(acc)) * 0.3

    def gradient(a, xs):
        with al.GradientTape() as tape:
            tape.watch(a)
            tape.watch(xs)
            y = model(a, xs)
        return [y] + tape.gradient(y, [a, xs])

    a, xs = al.constant(0.5, al.float64), al.constant([0.3, -0.2, 0.9], al.float64)
    expected = [v.numpy() for v in al.function(gradient)(a, xs)]
    found = [v.numpy() for v in al.function(gradient, backend="jax")(a, xs)]
    for got, want in zip(found, expected):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert found[2][1] == 0.0  # the element the loop skipped


def test_what_needs_the_stacks_shape_when_compiling_still_names_the_list():
    def per_row(xs):
        rows = []
        for x in xs:
            if al.reduce_sum(x) > 0:
                rows.append(x)
        return al.reduce_sum(al.stack(rows), axis=1)  # one value per row: a run-time length

    line = per_row.__code__.co_firstlineno + 5
    with pytest.raises(BackendError, match=f"the list stacked at {__file__}:{line} has a length known only when "
                                           f"the graph runs, so Sum"):
        al.function(per_row, backend="jax")(al.constant([[1, 2], [-5, 1]]))
