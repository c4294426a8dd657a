"""TensorArray, SparseTensor and IndexedSlices, alone and as loop variables, eager and traced."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as tf
from autoloop.errors import InvalidArgumentError

from .helpers import to_numpy

MATRIX = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)


# -- TensorArray operations ---------------------------------------------------------------
def test_write_read_stack_size(mode):
    def build(x, y):
        ta = tf.TensorArray(tf.float32, size=2).write(0, x).write(1, y)
        return ta.read(1), ta.stack(), ta.size()

    read, stacked, size = mode(build, tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    np.testing.assert_array_equal(read.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(stacked.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    assert stacked.dtype is tf.float32
    assert size.numpy() == 2 and size.dtype is tf.int32


def test_writes_return_a_new_array_and_leave_the_old_one(mode):
    def build(x):
        empty = tf.TensorArray(tf.float32, size=1, element_shape=[])
        full = empty.write(0, x)
        return empty.stack(), full.stack()

    empty, full = mode(build, tf.constant(7.0))
    np.testing.assert_array_equal(empty.numpy(), [0.0])  # never written, known shape: zeros
    np.testing.assert_array_equal(full.numpy(), [7.0])


def test_unstack_read_gather(mode):
    def build(matrix, indices):
        ta = tf.TensorArray(tf.float32, size=3).unstack(matrix)
        return ta.read(2), ta.gather(indices), ta.gather([1]), ta.size()

    read, gathered, one, size = mode(build, tf.constant(MATRIX), tf.constant([2, 0, 2]))
    np.testing.assert_array_equal(read.numpy(), MATRIX[2])
    np.testing.assert_array_equal(gathered.numpy(), MATRIX[[2, 0, 2]])
    np.testing.assert_array_equal(one.numpy(), MATRIX[[1]])
    assert size.numpy() == 3


def test_scatter(mode):
    def build(rows):
        return tf.TensorArray(tf.float32, size=4).scatter([3, 1], rows).stack()

    stacked = mode(build, tf.constant(MATRIX[:2]))
    np.testing.assert_array_equal(stacked.numpy(), [[0, 0], [3, 4], [0, 0], [1, 2]])


def test_dynamic_size_grows_on_write(mode):
    def build(x):
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        ta = ta.write(0, x).write(4, x * 2)
        return ta.size(), ta.read(4), ta.read(2)

    size, last, unwritten = mode(build, tf.constant(5))
    assert to_numpy((size, last, unwritten)) == (5, 10, 0)


@pytest.mark.parametrize("index", [3, 7, -1])
def test_fixed_size_write_out_of_range_is_an_error(mode, index):
    def build(x, i):
        return tf.TensorArray(tf.float32, size=3).write(i, x).stack()

    with pytest.raises(InvalidArgumentError, match="out of range"):
        mode(build, tf.constant(1.0), tf.constant(index))


def test_read_out_of_range_is_an_error(mode):
    def build(i):
        return tf.TensorArray(tf.float32, size=2, element_shape=[]).read(i)

    with pytest.raises(InvalidArgumentError, match="out of range"):
        mode(build, tf.constant(2))


def test_fixed_size_unstack_of_the_wrong_length_is_an_error(mode):
    def build(matrix):
        return tf.TensorArray(tf.float32, size=2).unstack(matrix).stack()

    with pytest.raises(InvalidArgumentError, match="fixed size"):
        mode(build, tf.constant(MATRIX))


@pytest.mark.parametrize("operation", ["write", "unstack", "scatter"])
def test_dtype_mismatch_is_a_type_error(mode, operation):
    def build(values):
        ta = tf.TensorArray(tf.float32, size=3)
        if operation == "write":
            return ta.write(0, values[0]).stack()
        if operation == "unstack":
            return ta.unstack(values).stack()
        return ta.scatter([0, 1, 2], values).stack()

    with pytest.raises(TypeError, match="float32.*int32"):
        mode(build, tf.constant([1, 2, 3]))


def test_element_shape_is_learned_from_the_first_write(mode):
    def build(x):
        ta = tf.TensorArray(tf.float32, size=2).write(0, x)
        assert ta.element_shape == tf.TensorShape([2])
        return ta.write(1, x + 1.0).stack()

    stacked = mode(build, tf.constant([1.0, 2.0]))
    np.testing.assert_array_equal(stacked.numpy(), [[1, 2], [2, 3]])
    if mode.traced:
        assert mode.concrete.outputs[0].shape == tf.TensorShape([None, 2])


def test_element_shape_mismatch_is_a_value_error(mode):
    def build(x, y):
        return tf.TensorArray(tf.float32, size=2, element_shape=[2]).write(0, x).write(1, y).stack()

    with pytest.raises(ValueError, match="not compatible"):
        mode(build, tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]))


def test_stack_of_an_empty_array_with_a_known_element_shape(mode):
    def build(x):
        return tf.TensorArray(tf.float32, size=0, element_shape=[3]).stack() + x

    assert mode(build, tf.constant(1.0)).numpy().shape == (0, 3)


def test_tensor_array_is_returned_from_a_traced_function(mode):
    def build(x):
        return tf.TensorArray(tf.float32, size=2).write(0, x).write(1, x * 2.0)

    ta = mode(build, tf.constant(1.5))
    assert isinstance(ta, tf.TensorArray)
    np.testing.assert_array_equal(ta.stack().numpy(), [1.5, 3.0])


# -- TensorArray as a loop variable -------------------------------------------------------
def _squares(n):
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    i, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * i)), [tf.constant(0), ta])
    return ta.stack(), ta.size(), ta


def test_accumulate_squares_in_a_loop(mode):
    stacked, size, ta = mode(_squares, tf.constant(10))
    np.testing.assert_array_equal(stacked.numpy(), [k * k for k in range(10)])
    assert size.numpy() == 10
    assert ta.element_shape == tf.TensorShape([])  # learned in the body, in both modes


def test_fixed_size_array_written_in_a_loop(mode):
    def fill(n, row):
        ta = tf.TensorArray(tf.float32, size=n)

        def body(i, ta):
            return i + 1, ta.write(i, row * tf.cast(i, tf.float32))
        _, ta = tf.while_loop(lambda i, ta: i < n, body, [tf.constant(0), ta])
        return ta.stack(), ta.element_shape

    stacked, element_shape = mode(fill, tf.constant(4), tf.constant([1.0, -1.0]))
    np.testing.assert_array_equal(stacked.numpy(), [[0, 0], [1, -1], [2, -2], [3, -3]])
    assert element_shape == tf.TensorShape([2])


def test_fixed_size_overflow_inside_a_loop(mode):
    def overflow(n):
        ta = tf.TensorArray(tf.float32, size=3)
        body = lambda i, ta: (i + 1, ta.write(i, tf.cast(i, tf.float32)))  # noqa: E731
        return tf.while_loop(lambda i, ta: i < n, body, [tf.constant(0), ta])[1].stack()

    assert mode(overflow, tf.constant(3)).numpy().tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(InvalidArgumentError, match="index 3 is out of range"):
        mode(overflow, tf.constant(5))


def test_read_an_unstacked_array_inside_a_loop(mode):
    def running_sum(matrix):
        rows = tf.TensorArray(tf.float32, size=3).unstack(matrix)
        out = tf.TensorArray(tf.float32, size=3)

        def body(i, total, out):
            total = total + rows.read(i)
            return i + 1, total, out.write(i, total)
        _, total, out = tf.while_loop(lambda i, t, o: i < rows.size(), body,
                                      [tf.constant(0), tf.constant([0.0, 0.0]), out])
        return total, out.stack()

    total, sums = mode(running_sum, tf.constant(MATRIX))
    np.testing.assert_array_equal(total.numpy(), MATRIX.sum(0))
    np.testing.assert_array_equal(sums.numpy(), np.cumsum(MATRIX, 0))


def test_tensor_array_dtype_change_in_a_loop_is_a_type_error(mode):
    def loop(n):
        ta = tf.TensorArray(tf.int32, size=1)
        return tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, tf.TensorArray(tf.float32, size=1)),
                             [tf.constant(0), ta])

    with pytest.raises(TypeError, match="TensorArray"):
        mode(loop, tf.constant(2))


def test_tensor_array_replaced_by_a_tensor_is_a_type_error(mode):
    def loop(n):
        ta = tf.TensorArray(tf.int32, size=1)
        return tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, tf.constant(0)), [tf.constant(0), ta])

    with pytest.raises(TypeError, match="TensorArray"):
        mode(loop, tf.constant(2))


def test_loop_that_never_runs_keeps_the_initial_tensor_array(mode):
    def loop(n, x):
        ta = tf.TensorArray(tf.float32, size=1).write(0, x)
        _, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(0, x * 5.0)),
                              [tf.constant(0), ta])
        return ta.stack()

    assert mode(loop, tf.constant(0), tf.constant(2.0)).numpy().tolist() == [2.0]
    assert mode(loop, tf.constant(1), tf.constant(2.0)).numpy().tolist() == [10.0]


# -- SparseTensor ---------------------------------------------------------------------
def _sparse_loop(n, invariant="vector"):
    sparse = tf.SparseTensor(indices=[[0, 0]], values=[1.0], dense_shape=[10, 10])

    def body(i, sparse):
        new_index = tf.cast(tf.constant([[1, 1]]) * (i + 1), tf.int64)
        return i + 1, tf.SparseTensor(tf.concat([sparse.indices, new_index], 0),
                                      tf.concat([sparse.values, sparse.values[:1] * 2.0], 0),
                                      sparse.dense_shape)
    invariants = {"vector": [tf.TensorShape([]), tf.TensorShape([2])],
                  "dense": [tf.TensorShape([]), tf.TensorShape([10, 10])],
                  "wrong_rank": [tf.TensorShape([]), tf.TensorShape([3])],
                  "none": None}[invariant]
    return tf.while_loop(lambda i, sparse: i < n, body, [tf.constant(0), sparse], shape_invariants=invariants)[1]


@pytest.mark.parametrize("invariant", ["vector", "none"])
def test_sparse_tensor_invariant_lets_the_number_of_non_zeros_grow(mode, invariant):
    sparse = mode(_sparse_loop, tf.constant(3), invariant)
    assert isinstance(sparse, tf.SparseTensor)
    np.testing.assert_array_equal(sparse.indices.numpy(), [[0, 0], [1, 1], [2, 2], [3, 3]])
    np.testing.assert_array_equal(sparse.values.numpy(), [1.0, 2.0, 2.0, 2.0])
    np.testing.assert_array_equal(sparse.dense_shape.numpy(), [10, 10])
    assert sparse.indices.dtype is tf.int64
    if mode.traced:
        shapes = [t.shape for t in mode.concrete.outputs]
        assert shapes == [tf.TensorShape([None, 2]), tf.TensorShape([None]), tf.TensorShape([2])]


def test_sparse_tensor_non_vector_invariant_is_a_value_error(mode):
    with pytest.raises(ValueError) as info:
        mode(_sparse_loop, tf.constant(3), "dense")
    message = str(info.value)
    assert "TensorShape([r])" in message and "(10, 10)" in message and "loop_vars[1]" in message


def test_sparse_tensor_invariant_of_the_wrong_rank_is_a_value_error(mode):
    with pytest.raises(ValueError, match=r"loop_vars\[1\] \(SparseTensor\.indices\).*\(1, 2\).*\(None, 3\)"):
        mode(_sparse_loop, tf.constant(3), "wrong_rank")


def test_sparse_tensor_values_dtype_change_is_a_type_error(mode):
    def loop(n):
        sparse = tf.SparseTensor(indices=[[0]], values=[1.0], dense_shape=[4])
        body = lambda i, s: (i + 1, tf.SparseTensor(s.indices, tf.cast(s.values, tf.int32), s.dense_shape))  # noqa: E731
        return tf.while_loop(lambda i, s: i < n, body, [tf.constant(0), sparse])

    with pytest.raises(TypeError, match="float32"):
        mode(loop, tf.constant(2))


# -- IndexedSlices ----------------------------------------------------------------------
def _slices_loop(n, invariant):
    slices = tf.IndexedSlices(tf.constant([[1.0, 2.0, 3.0]]), tf.constant([0]), tf.constant([10, 3]))

    def body(i, s):
        return i + 1, tf.IndexedSlices(tf.concat([s.values, s.values * 2.0], 0),
                                       tf.concat([s.indices, s.indices + 1], 0), s.dense_shape)
    invariants = None if invariant is None else [tf.TensorShape([]), tf.TensorShape(invariant)]
    return tf.while_loop(lambda i, s: i < n, body, [tf.constant(0), slices], shape_invariants=invariants)[1]


def test_indexed_slices_invariant_lets_rows_grow(mode):
    slices = mode(_slices_loop, tf.constant(3), [None, 3])
    assert isinstance(slices, tf.IndexedSlices)
    assert slices.values.numpy().shape == (8, 3)
    np.testing.assert_array_equal(slices.indices.numpy(), [0, 1, 1, 2, 1, 2, 2, 3])
    np.testing.assert_array_equal(slices.values.numpy()[:, 0], [1, 2, 2, 4, 2, 4, 4, 8])
    np.testing.assert_array_equal(slices.dense_shape.numpy(), [10, 3])
    if mode.traced:
        shapes = [t.shape for t in mode.concrete.outputs]
        assert shapes == [tf.TensorShape([None, 3]), tf.TensorShape([None]), tf.TensorShape([2])]


def test_indexed_slices_without_an_invariant_cannot_grow(mode):
    with pytest.raises(ValueError, match=r"loop_vars\[1\].*\(1, 3\).*\(2, 3\)"):
        mode(_slices_loop, tf.constant(3), None)


def test_indexed_slices_invariant_that_breaks_columns_is_a_value_error(mode):
    with pytest.raises(ValueError, match=r"loop_vars\[1\]"):
        mode(_slices_loop, tf.constant(3), [None, 4])


def test_indexed_slices_scalar_invariant_is_a_value_error(mode):
    with pytest.raises(ValueError, match="rank"):
        mode(_slices_loop, tf.constant(3), [])


@pytest.mark.parametrize("pred, indices, values", [(True, [[0]], [1.0]), (False, [[1], [2]], [2.0, 3.0])])
def test_sparse_tensors_from_cond_branches(mode, pred, indices, values):
    def choose(p):
        first = tf.SparseTensor([[0]], [1.0], [3])
        second = tf.SparseTensor([[1], [2]], [2.0, 3.0], [3])
        return tf.cond(p, lambda: first, lambda: second)

    sparse = mode(choose, tf.constant(pred))
    assert isinstance(sparse, tf.SparseTensor)
    assert sparse.indices.numpy().tolist() == indices and sparse.values.numpy().tolist() == values
    if mode.traced:
        assert [t.shape for t in mode.concrete.outputs] == [tf.TensorShape([None, 1]), tf.TensorShape([None]),
                                                            tf.TensorShape([1])]


def test_indexed_slices_without_dense_shape_as_a_loop_variable(mode):
    def rows(n):
        slices = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([0]))
        body = lambda i, s: (i + 1, tf.IndexedSlices(tf.concat([s.values, s.values], 0),  # noqa: E731
                                                     tf.concat([s.indices, s.indices + 1], 0)))
        return tf.while_loop(lambda i, s: i < n, body, [tf.constant(0), slices],
                             shape_invariants=[None, tf.TensorShape([None, 2])])[1]

    slices = mode(rows, tf.constant(2))
    assert slices.dense_shape is None
    assert slices.values.numpy().shape == (4, 2) and slices.indices.numpy().tolist() == [0, 1, 1, 2]
