"""TensorFlow's smaller names: print(summarize=), sparse.expand_dims of unknown rank, dropout, linspace,
sequence_mask, searchsorted, unique, segments, linalg, random.Generator and the stateless random ops.

The numpy comparisons of each op are in op_cases_extended.py (run eagerly, traced and on JAX) and their
gradients in tests/autodiff/gradient_cases.py; here are the rules around them. Expected values were
checked against TensorFlow 2.21.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from tests.conftest import needs_jax
from autoloop.errors import BackendError, InvalidArgumentError

BACKENDS = ["numpy", "jax"]  # "target", not "backend": conftest samples the JAX runs of a "backend" parameter


# -- print(..., summarize=) ---------------------------------------------------------------------
@pytest.mark.parametrize("target", BACKENDS)
def test_print_summarize_abbreviates_each_axis_as_tensorflow_does(target, capsys):
    @al.function(backend=target)
    def f(x, m):
        al.print(x, summarize=2)
        al.print("m", m, summarize=1)
        al.print(al.constant([1.5, 2.25, 3.0, 4.0]), al.constant([True, False, True]), summarize=1)
        al.print(x, summarize=-1)
        al.print(x)  # no summarize: numpy's own printing, unchanged
        return x
    f(np.arange(10), np.arange(24).reshape(2, 3, 4))
    assert capsys.readouterr().out == (
        "[0 1 ... 8 9]\n"
        "m [[[0 ... 3]\n  ...\n  [8 ... 11]]\n\n [[12 ... 15]\n  ...\n  [20 ... 23]]]\n"
        "[1.5 ... 4] [1 ... 1]\n"
        "[0 1 2 3 4 5 6 7 8 9]\n"
        "[0 1 2 3 4 5 6 7 8 9]\n")


def test_print_summarize_must_be_an_int():
    with pytest.raises(ValueError, match="summarize must be an int >= -1"):
        al.print(al.constant(1), summarize=-2)


# -- sparse.expand_dims with an unknown rank ------------------------------------------------------
def _growing(n, axis):
    v = al.SparseTensor(indices=[[0, 0], [1, 1]], values=[1, 2], dense_shape=[3, 3])
    i = 0
    while i < n:
        al.autograph.experimental.set_loop_options(shape_invariants=[(v, al.TensorShape(None))])
        v = al.sparse.expand_dims(v, axis)
        i += 1
    return v


@pytest.mark.parametrize("axis, indices, dense_shape", [
    (None, [[0, 0, 0, 0], [1, 1, 0, 0]], [3, 3, 1, 1]),
    (1, [[0, 0, 0, 0], [1, 0, 0, 1]], [3, 1, 1, 3]),
    (-2, [[0, 0, 0, 0], [1, 0, 0, 1]], [3, 1, 1, 3]),
])
def test_a_sparse_loop_variable_of_unknown_rank_grows(axis, indices, dense_shape):
    result = al.function(_growing)(al.constant(2), axis)
    assert result.indices.numpy().tolist() == indices and result.dense_shape.numpy().tolist() == dense_shape


def test_an_axis_beyond_an_unknown_rank_fails_when_it_runs():
    with pytest.raises(InvalidArgumentError, match="axis 3 is out of range for a SparseTensor of rank"):
        al.function(_growing)(al.constant(2), 3)


# -- dropout --------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", BACKENDS)
def test_dropout_keeps_and_scales_with_the_seed_rule(target):
    x = np.ones([1000], np.float32)
    al.random.set_seed(1)
    first = al.function(lambda x: al.nn.dropout(x, rate=0.25, seed=3), backend=target)(x).numpy()
    al.random.set_seed(1)
    assert np.array_equal(first, al.nn.dropout(x, rate=0.25, seed=3).numpy())  # the mask of random.uniform's rule
    assert set(np.unique(first)) == {0.0, np.float32(1 / 0.75)}
    assert 0.2 < np.mean(first == 0) < 0.3
    assert al.nn.dropout(al.constant(x), rate=0.0) is not None and al.nn.dropout(x, 0.0).numpy().tolist() == \
        x.tolist()


def test_dropout_noise_shape_gradient_and_errors():
    x = al.constant(np.ones([4, 3], np.float32))
    dropped = al.nn.dropout(x, rate=0.5, noise_shape=[4, 1], seed=2).numpy()
    assert all(len(set(row)) == 1 for row in dropped)  # whole rows kept or dropped
    with al.GradientTape() as tape:
        tape.watch(x)
        y = al.reduce_sum(al.nn.dropout(x, rate=0.5, seed=5))
    grad = tape.gradient(y, x).numpy()
    assert set(np.unique(grad)) <= {0.0, 2.0}
    with pytest.raises(ValueError, match=r"rate must be in \[0, 1\)"):
        al.nn.dropout(x, rate=1.0)
    with pytest.raises(TypeError, match="x must be a float tensor"):
        al.nn.dropout(al.constant([1, 2]), rate=0.5)
    import autoloop.compat.v1 as tf1
    assert tf1.nn.dropout(x, keep_prob=1.0).numpy().tolist() == x.numpy().tolist()
    with pytest.raises(ValueError, match="exactly one of keep_prob and rate"):
        tf1.nn.dropout(x)


# -- sequences -------------------------------------------------------------------------------------
def test_linspace_sequence_mask_searchsorted_and_unique_errors():
    with pytest.raises(TypeError, match="num must be an integer scalar"):
        al.linspace(0.0, 1.0, 2.5)
    with pytest.raises(TypeError, match="lengths must be integers"):
        al.sequence_mask([1.0])
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        al.searchsorted([1, 2], [1], side="middle")
    with pytest.raises(ValueError, match="must agree on all axes but the last"):
        al.searchsorted([[1, 2]], [[1], [2]])
    with pytest.raises(ValueError, match="x must be a vector"):
        al.unique([[1, 2]])
    y, idx = al.unique(al.constant([2, 2], al.int64), out_idx=al.int64)
    assert y.dtype is al.int64 and idx.dtype is al.int64


@needs_jax
def test_unique_is_refused_on_jax_with_the_way_out():
    with pytest.raises(BackendError, match="unique.*backend='numpy'"):
        al.function(lambda x: al.unique(x).y, backend="jax")(np.array([1, 2, 2], np.int32))


# -- segments --------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", BACKENDS)
def test_segment_ids_are_checked_when_the_graph_runs(target):
    unsorted = al.function(lambda d, i: al.math.unsorted_segment_sum(d, i, 2), backend=target)
    with pytest.raises(InvalidArgumentError, match=r"segment_ids\[2\] = 5 is out of range \[0, 2\)"):
        unsorted(np.array([1, 2, 3], np.int32), np.array([1, 0, 5], np.int32))
    assert unsorted(np.array([1, 2, 3], np.int32), np.array([1, -1, 1], np.int32)).numpy().tolist() == [0, 4]
    sorted_ = al.function(lambda d: al.math.segment_sum(d, [1, 0, 1]), backend=target)
    with pytest.raises(InvalidArgumentError, match="segment ids must be sorted and non-negative"):
        sorted_(np.array([1, 2, 3], np.int32))


def test_segment_dtype_and_shape_errors():
    with pytest.raises(TypeError, match="segment mean: data must be a float tensor"):
        al.math.segment_mean([1, 2], [0, 0])
    with pytest.raises(ValueError, match="must match the leading axes of data"):
        al.math.unsorted_segment_sum(np.ones([3, 2]), [0, 1], 2)
    with pytest.raises(ValueError, match="segment_ids must be a vector"):
        al.math.segment_sum(np.ones([2, 2]), [[0, 0], [1, 1]])


# -- linalg ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", BACKENDS)
def test_singular_and_indefinite_matrices_fail_on_every_backend(target):
    inverse = al.function(al.linalg.inv, backend=target)
    with pytest.raises(InvalidArgumentError, match="inv: the input is not invertible"):
        inverse(np.zeros([2, 2], np.float32))
    decompose = al.function(al.linalg.cholesky, backend=target)
    with pytest.raises(InvalidArgumentError, match="not positive definite"):
        decompose(-np.eye(2, dtype=np.float32))
    solved = al.function(al.linalg.solve, backend=target)(np.eye(2) * 2, np.ones([2, 1]))
    assert solved.numpy().tolist() == [[0.5], [0.5]]


def test_linalg_errors_and_adjoint():
    with pytest.raises(TypeError, match="float32 or float64 matrices, got int32"):
        al.linalg.inv([[1, 0], [0, 1]])
    with pytest.raises(ValueError, match=r"must be square, \[..., M, M\]"):
        al.linalg.cholesky(np.ones([2, 3], np.float32))
    with pytest.raises(ValueError, match="does not fit the matrix"):
        al.linalg.solve(np.eye(2), np.ones([3, 1]))
    a = np.array([[1.0, 2.0], [0.0, 1.0]])
    assert al.linalg.inv(a, adjoint=True).numpy().tolist() == np.linalg.inv(a.T).tolist()


# -- Generator and the stateless ops --------------------------------------------------------------
@pytest.mark.parametrize("target", BACKENDS)
def test_a_generator_continues_its_stream_across_calls_and_ignores_set_seed(target):
    reference = al.random.Generator.from_seed(4)
    expected = [reference.normal([2]).numpy() for _ in range(3)]
    generator = al.random.Generator.from_seed(4)
    draw = al.function(lambda: generator.normal([2]), backend=target)
    found = [draw().numpy()]
    al.random.set_seed(99)
    found += [draw().numpy(), generator.normal([2]).numpy()]
    np.testing.assert_array_equal(np.stack(found), np.stack(expected))
    assert not np.array_equal(expected[0], expected[1])
    with pytest.raises(TypeError, match="from_seed takes an int"):
        al.random.Generator.from_seed(1.5)
    with pytest.raises(TypeError, match="Generator.from_seed"):
        al.random.Generator()


@pytest.mark.parametrize("target", BACKENDS)
def test_stateless_numbers_depend_on_the_seed_alone(target):
    @al.function(backend=target)
    def in_a_loop(n):
        total, i = al.constant(0.0), al.constant(0)
        while i < n:
            total += al.reduce_sum(al.random.stateless_uniform([2], seed=al.stack([i, 7])))
            i += 1
        return total
    expected = sum(al.random.stateless_uniform([2], seed=[i, 7]).numpy().sum() for i in range(3))
    assert in_a_loop(al.constant(3)).numpy() == pytest.approx(expected)
    assert in_a_loop(al.constant(3)).numpy() == pytest.approx(expected)  # again: the same numbers
    first = al.random.stateless_normal([3], seed=[1, 2]).numpy()
    al.random.set_seed(5)
    np.testing.assert_array_equal(first, al.random.stateless_normal([3], seed=[1, 2]).numpy())
    with pytest.raises(ValueError, match=r"seed must have shape \[2\]"):
        al.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(TypeError, match="seed must be two integers"):
        al.random.stateless_normal([2], seed=al.constant([1.0, 2.0]))
