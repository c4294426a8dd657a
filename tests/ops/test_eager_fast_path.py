"""Eager element-wise ops on inputs of one dtype and shape skip the op's rule; nothing else may change.

For every op that opts in (`OpDef.same_dtype_numpy`), every dtype it takes,
one and two inputs, scalars, arrays and a scalar beside an array: the fast path and the general path
give the same dtype, shape and values, or the same error.
"""

import numpy as np
import pytest

from autoloop import dtypes
from autoloop.ops import dispatch, registry
from autoloop.tensor import Tensor

FAST_OPS = sorted(name for name, opdef in registry._REGISTRY.items() if opdef.same_dtype_numpy is not None)


def _inputs(dtype, shape, count):
    rng = np.random.default_rng(7)
    if dtype == np.bool_:
        arrays = [rng.integers(0, 2, shape).astype(bool) for _ in range(count)]
    elif np.issubdtype(dtype, np.integer):
        arrays = [rng.integers(0, 5, shape).astype(dtype) for _ in range(count)]  # zeros included
    else:
        arrays = [rng.uniform(-2, 2, shape).astype(dtype) for _ in range(count)]
    return [Tensor(a[()] if a.ndim == 0 else a) for a in arrays]


def _scalar_and_array(dtype):
    scalar, = _inputs(dtype, (), 1)
    array, = _inputs(dtype, (3,), 1)
    return [[scalar, array], [array, scalar]]


def _outcome(opdef, inputs, fast):
    saved = opdef.same_dtype_numpy
    opdef.same_dtype_numpy = saved if fast else None
    try:
        result = dispatch._apply_eagerly(opdef, inputs, {})
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error), str(error)
    finally:
        opdef.same_dtype_numpy = saved
    value = result.numpy()
    return result.dtype, result.shape.as_list(), np.asarray(value).dtype, np.asarray(value).tolist()


def test_the_element_wise_ops_take_the_fast_path():
    assert {"Add", "Sub", "Mul", "Maximum", "Less", "Equal", "LogicalAnd", "Neg"} <= set(FAST_OPS)


@pytest.mark.parametrize("name", FAST_OPS)
def test_fast_and_general_paths_agree(name):
    opdef = registry.get(name)
    for numpy_dtype in sorted(opdef.same_dtype_numpy, key=str):
        for shape in [(), (3,)]:
            for count in (1, 2):
                inputs = _inputs(numpy_dtype, shape, count)
                fast, general = _outcome(opdef, inputs, True), _outcome(opdef, inputs, False)
                # nan == nan for this comparison: both paths ran the same kernel on the same values
                assert repr(fast) == repr(general), (name, numpy_dtype, shape, count)
        for inputs in _scalar_and_array(numpy_dtype):
            assert repr(_outcome(opdef, inputs, True)) == repr(_outcome(opdef, inputs, False)), (name, numpy_dtype)


def test_mixed_dtypes_or_shapes_still_meet_the_rule():
    add = registry.get("Add")
    with pytest.raises(TypeError, match="int32 tensor but is a float32 tensor"):
        dispatch._apply_eagerly(add, [Tensor(np.int32(1)), Tensor(np.float32(1))], {})
    result = dispatch._apply_eagerly(add, [Tensor(np.ones(3, np.float32)), Tensor(np.float32(2))], {})
    assert result.dtype is dtypes.float32 and result.numpy().tolist() == [3.0, 3.0, 3.0]


def test_arrays_that_broadcast_take_the_general_path():
    add = registry.get("Add")
    result = dispatch._apply_eagerly(add, [Tensor(np.ones((2, 1), np.int32)), Tensor(np.ones(3, np.int32))], {})
    assert result.shape.as_list() == [2, 3]
    with pytest.raises(Exception, match="incompatible shapes"):
        dispatch._apply_eagerly(add, [Tensor(np.ones(2, np.int32)), Tensor(np.ones(3, np.int32))], {})
