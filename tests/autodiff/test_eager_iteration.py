"""Iterating a tensor eagerly under a GradientTape: each row is recorded as coming from the tensor.

A ``for v in x`` over an eager tensor once gave fresh constants that no tape
saw (the gradient came back None, where the traced loop gives cos(x)).
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al


def sum_of_sines(x):
    total = al.constant(0.0, al.float64)
    for v in x:
        total = total + al.sin(v)
    return total


def unpacked(x):
    first, second = x
    return first * second


@pytest.mark.parametrize("run", ["plain", "converted", "traced"])
def test_a_loop_over_a_tensor_records_its_rows(run):
    # Eager iteration has no backend; the traced run (a graph loop) is the reference it must match.
    fn = {"plain": sum_of_sines, "converted": al.autograph.to_graph(sum_of_sines),
          "traced": al.function(sum_of_sines)}[run]
    x = al.constant([0.7, -0.2], al.float64)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos([0.7, -0.2]), rtol=1e-12)


def test_unpacking_rows_records_them_and_rows_keep_their_values():
    x = al.constant([[1.0, 2.0], [3.0, 4.0]], al.float64)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = al.reduce_sum(unpacked(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[3.0, 4.0], [1.0, 2.0]])
    rows = list(al.constant([[1, 2], [3, 4]]))
    assert [row.dtype for row in rows] == [al.int32, al.int32]
    assert [row.numpy().tolist() for row in rows] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="scalar"):
        iter(al.constant(1))
