"""The eager path's shortcuts give exactly what the general code gives.

An eager op reads its inputs' specs from their numpy values
(`dispatch._eager_spec`), broadcasts equal shapes and scalars without the
general rule, and converts a Python number next to a tensor with the numpy
type's constructor (`dispatch._python_scalar`). Each shortcut is checked
here against the general code it skips, over generated inputs.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autoloop as al
from autoloop import dtypes
from autoloop.ops import dispatch, infer
from autoloop.ops.registry import Spec
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, eager, to_numpy_value

EDGE_NUMBERS = [0, 1, -1, True, False, 0.5, -0.0, 2.5, 1e-40, 3e38, 3.5e38, 65504.0, 65520.0, 1e308,
                math.inf, -math.inf, math.nan, 127, 128, -129, 255, 256, 2**31 - 1, 2**31, -2**31 - 1,
                2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -2**70, 10**30]


def _conversion(value, dtype, convert=lambda value, dtype: eager(to_numpy_value(value, dtype))):
    """What a conversion (the general one by default) gives, or the error it raises, as comparable data."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow in a cast to float
            result = convert(value, dtype)._numpy
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return type(error), str(error)
    return type(result), np.asarray(result).tobytes()


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(value=st.one_of(st.sampled_from(EDGE_NUMBERS), st.integers(-2**70, 2**70), st.floats(), st.booleans()),
       dtype=st.sampled_from(dtypes.SUPPORTED))
def test_python_numbers_next_to_a_tensor_convert_as_the_general_conversion_does(value, dtype):
    fast = dispatch._python_scalar(value, dtype)
    if fast is not None:
        assert type(fast) is dtype.as_numpy_dtype
        assert (type(fast), np.asarray(fast).tobytes()) == _conversion(value, dtype), (value, dtype)
    assert _conversion(value, dtype, dispatch.convert) == _conversion(value, dtype)


@pytest.mark.parametrize("value", EDGE_NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", dtypes.SUPPORTED, ids=lambda d: d.name)
def test_edge_numbers_convert_or_fail_as_the_general_conversion_does(value, dtype):
    assert _conversion(value, dtype, dispatch.convert) == _conversion(value, dtype)


VALUES = [np.int32(3), np.float16(-0.0), np.bool_(True), np.uint8(7), np.zeros((2, 0, 3), np.int8),
          np.ones(5, np.float64), np.arange(6, dtype=np.int64).reshape(2, 3), np.asarray(np.float32(2.5))]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{np.asarray(v).dtype}{np.shape(v)}")
def test_eager_specs_are_the_tensors_dtype_and_shape(value):
    tensor = Tensor(value)
    spec = dispatch._eager_spec(tensor)
    assert spec == Spec(tensor.dtype, TensorShape(np.shape(value)), value)
    assert spec.value is value


def test_the_spec_of_a_tensor_array_list_is_variant():
    spec = dispatch._eager_spec(Tensor([np.int32(1)]))
    assert spec.dtype is dtypes.variant and spec.shape == TensorShape([])


DIMS = st.one_of(st.none(), st.integers(0, 3))
SHAPES = st.one_of(st.none(), st.lists(DIMS, max_size=3)).map(TensorShape)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(a=SHAPES, b=SHAPES, equal=st.booleans())
def test_broadcast_shortcuts_give_the_general_rule(a, b, equal):
    if equal:
        b = a

    def outcome(rule):
        try:
            return rule("Add", a, b)
        except ValueError as error:
            return str(error)

    assert outcome(infer.broadcast_shapes) == outcome(infer.broadcast_partial_shapes)


@pytest.mark.parametrize("expression", [
    lambda x, y: x + y, lambda x, y: x * 2, lambda x, y: 2.5 - x, lambda x, y: x < y, lambda x, y: x // True,
    lambda x, y: al.maximum(x, y), lambda x, y: x ** 2,
], ids=["add", "mul-int", "rsub-float", "less", "floordiv-bool", "maximum", "pow"])
@pytest.mark.parametrize("x, y", [(np.int32(7), np.int32(-2)), (np.float32(1.5), np.float32(-0.0)),
                                  (np.arange(4, dtype=np.int64), np.int64(3)),
                                  (np.linspace(-1, 1, 6, dtype=np.float16).reshape(2, 3), np.float16(0.5))],
                         ids=["int32", "float32", "int64-vector", "float16-matrix"])
def test_eager_ops_give_what_the_compiled_graph_gives(expression, x, y):
    eager_result = outcome_of(lambda: expression(al.constant(x), al.constant(y)).numpy())
    traced = al.function(expression, autograph=False)
    traced_result = outcome_of(lambda: traced(al.constant(x), al.constant(y)).numpy())
    assert eager_result == traced_result


def outcome_of(run):
    try:
        result = run()
    except Exception as error:  # noqa: BLE001 - compared
        return type(error), str(error)
    return type(result), np.asarray(result).dtype, np.shape(result), np.asarray(result).tobytes()
