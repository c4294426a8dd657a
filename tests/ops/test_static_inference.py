"""Shapes known while tracing: values the trace can see (constants, shapes of
known tensors, stacks of them) keep results' shapes static."""

import numpy as np

import autoloop as al
from autoloop.shapes import TensorShape
from ophelpers import assert_same, run_eager, run_traced, trace_specs

X = (al.float32, TensorShape([2, 3]))
PARTIAL = (al.float32, TensorShape([None, 3]))


def traced_shape(fn, *specs):
    _, results = trace_specs(fn, list(specs))
    return results[0].shape if len(results) == 1 else [r.shape for r in results]


def test_reshape_to_the_shape_of_a_known_tensor_is_static():
    assert traced_shape(lambda x: al.reshape(al.transpose(x), al.shape(x)), X) == TensorShape([2, 3])


def test_reshape_to_a_stack_of_known_scalars_is_static():
    assert traced_shape(lambda x: al.reshape(x, al.stack([al.size(x), 1])), X) == TensorShape([6, 1])
    assert traced_shape(lambda x: al.reshape(x, al.constant([3, -1])), X) == TensorShape([3, 2])


def test_reshape_to_a_computed_shape_knows_the_rank():
    assert traced_shape(lambda x: al.reshape(x, [al.shape(x)[0], -1]), PARTIAL) == TensorShape([None, None])
    assert traced_shape(lambda x: al.reshape(x, [-1]), PARTIAL) == TensorShape([None])


def test_size_and_rank_of_known_shapes_are_constants():
    assert traced_shape(lambda x: al.range(al.size(x)), X) == TensorShape([6])
    assert traced_shape(lambda x: al.range(al.rank(x), al.size(x)), X) == TensorShape([4])
    assert traced_shape(lambda x: al.range(al.size(x)), PARTIAL) == TensorShape([None])


def test_zeros_ones_fill_of_known_and_partial_shapes():
    assert traced_shape(lambda x: al.zeros(al.shape(x), al.int32), X) == TensorShape([2, 3])
    assert traced_shape(lambda x: al.ones_like(x, al.bool), PARTIAL) == TensorShape([None, None])
    assert traced_shape(lambda x: al.fill(TensorShape([4]), 1.0), X) == TensorShape([4])


def test_unstack_takes_num_from_the_static_shape():
    assert traced_shape(lambda x: al.unstack(x, axis=1), PARTIAL) == [TensorShape([None])] * 3


def test_where_coordinates_count_is_known_only_from_values():
    assert traced_shape(lambda x: al.where(x > 0), PARTIAL) == TensorShape([None, 2])
    assert al.where(al.constant([[True, False], [True, True]])).shape == TensorShape([3, 2])


def test_static_arguments_may_be_constant_tensors():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def fn(t):
        return al.reduce_sum(al.expand_dims(t, al.constant(0)), axis=al.constant([0, 2]))

    assert_same(run_traced(fn, x), x.sum(1))
    assert_same(run_eager(fn, x), x.sum(1))


def test_python_values_take_tensorflow_dtypes():
    assert al.range(3).dtype is al.int32
    assert al.range(3.0).dtype is al.float32
    assert al.range(al.constant(3, al.int64)).dtype is al.int64
    assert al.fill([2], 1.5).dtype is al.float32
    assert al.zeros([2]).dtype is al.float32
    assert al.one_hot([1], 2).dtype is al.float32
    assert al.one_hot([1], 2, on_value=3, off_value=0).dtype is al.int32
