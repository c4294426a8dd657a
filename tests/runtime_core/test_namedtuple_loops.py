"""Namedtuple loop variables are unpacked into cond and body, as TensorFlow does:
``while_loop(cond, body, State(step, value))`` calls ``cond(step, value)``."""

import collections

import numpy as np
import pytest

import autoloop as tf

State = collections.namedtuple("State", "step value")
Single = collections.namedtuple("Single", "count")


def test_namedtuple_fields_are_the_arguments(mode):
    def doubled(start):
        return tf.while_loop(lambda step, value: step < 5,
                             lambda step, value: State(step + 1, value * 2),
                             State(tf.constant(0), start))

    result = mode(doubled, tf.constant(1.0))
    assert isinstance(result, State)
    assert (result.step.numpy(), result.value.numpy()) == (5, 32.0)


def test_body_may_return_a_plain_tuple_for_a_namedtuple(mode):
    def counted(start):
        return tf.while_loop(lambda step, value: step < 3, lambda step, value: (step + 1, value + step),
                             State(tf.constant(0), start))

    result = mode(counted, tf.constant(10))
    assert isinstance(result, State) and result.value.numpy() == 13


def test_single_field_namedtuple_body_may_return_the_bare_value(mode):
    def count(start):
        return tf.while_loop(lambda count: count < 7, lambda count: count + 2, Single(start))

    result = mode(count, tf.constant(0))
    assert isinstance(result, Single) and result.count.numpy() == 8


def test_namedtuple_with_shape_invariants_for_its_fields(mode):
    def grow(start):
        return tf.while_loop(lambda step, value: step < 3,
                             lambda step, value: State(step + 1, tf.concat([value, value], 0)),
                             State(tf.constant(0), start),
                             shape_invariants=State(tf.TensorShape([]), tf.TensorShape([None])))

    result = mode(grow, tf.constant([1, 2]))
    np.testing.assert_array_equal(result.value.numpy(), [1, 2] * 8)


def test_sparse_tensor_invariant_of_unknown_rank_is_accepted(mode):
    def grow(n):
        sparse = tf.SparseTensor(indices=[[0, 0]], values=[1.0], dense_shape=[4, 4])

        def body(i, sparse):
            index = tf.cast(tf.constant([[1, 1]]) * (i + 1), tf.int64)
            return i + 1, tf.SparseTensor(tf.concat([sparse.indices, index], 0),
                                          tf.concat([sparse.values, sparse.values[:1]], 0), sparse.dense_shape)
        return tf.while_loop(lambda i, sparse: i < n, body, [tf.constant(0), sparse],
                             shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])[1]

    result = mode(grow, tf.constant(2))
    np.testing.assert_array_equal(result.indices.numpy(), [[0, 0], [1, 1], [2, 2]])


def test_namedtuple_with_invariant_of_wrong_structure_is_a_value_error():
    with pytest.raises(ValueError, match="same structure"):
        tf.while_loop(lambda step, value: step < 3, lambda step, value: (step + 1, value),
                      State(tf.constant(0), tf.constant(1)), shape_invariants=[tf.TensorShape([])])
