"""Small gaps TensorFlow's guides found (scripts/tf_guides.py): TF's spellings and rules."""

import numpy as np
import pytest

import autoloop as al


def test_dtype_prints_as_tensorflow_does():
    # print(x.dtype) in TF shows <dtype: 'float32'>; repr stays the importable name.
    assert str(al.float32) == "<dtype: 'float32'>" and f"{al.int32}" == "<dtype: 'int32'>"
    assert repr(al.float32) == "autoloop.float32" and str([al.bool]) == "[autoloop.bool]"
    assert str(al.constant([1.0]).dtype) == "<dtype: 'float32'>"


@pytest.mark.parametrize("which", ["numpy", "jax"])
def test_function_returns_python_numbers_as_tensors(which):
    if which == "jax":
        pytest.importorskip("jax")
    foo = 1

    @al.function(backend=which)
    def buggy_add():
        return 1 + foo

    @al.function(backend=which)
    def several(x):
        return x, 3, None, [1.5, True], np.float64(2.0)

    result = buggy_add()
    assert isinstance(result, al.Tensor) and result.dtype == al.int32 and result.numpy() == 2
    x, three, none, (half, true), two = several(al.constant(1))
    assert none is None and three.dtype == al.int32 and three.numpy() == 3
    assert half.dtype == al.float32 and true.dtype == al.bool and bool(true.numpy())
    assert two.dtype == al.float64 and two.numpy() == 2.0
    assert "TensorSpec(shape=(), dtype=autoloop.int32, name=None)" in str(buggy_add.get_concrete_function())
