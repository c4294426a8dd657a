"""Integers as TensorFlow treats them: Python ints that do not fit int32 become int64,
ints that fit no dtype are an error, and integer ``//``/``%`` by zero raises, eagerly and in graphs."""

import traceback

import numpy as np
import pytest

import autoloop as al
from autoloop.errors import DivisionByZeroError, InvalidArgumentError

from ..compiler.programs import make_function


@pytest.mark.parametrize("value, dtype", [(7, al.int32), (2**31 - 1, al.int32), (-2**31, al.int32),
                                          (2**31, al.int64), (2**40, al.int64), (3000000000, al.int64),
                                          (-2**63, al.int64), (2**63 - 1, al.int64)])
def test_python_int_takes_the_smallest_dtype_that_holds_it(value, dtype):
    tensor = al.constant(value)
    assert tensor.dtype is dtype
    assert int(tensor.numpy()) == value


def test_list_with_one_large_int_is_int64():
    tensor = al.constant([1, 2**40])
    assert tensor.dtype is al.int64 and tensor.numpy().tolist() == [1, 2**40]


@pytest.mark.parametrize("value", [2**63, -2**63 - 1, 2**70, [1, 2**70]])
def test_int_that_fits_no_dtype_is_an_error(value):
    with pytest.raises(TypeError, match="fits no integer dtype"):
        al.constant(value)


def test_large_python_int_in_a_traced_function_is_int64():
    @al.function
    def f(x):
        return x + 2**40
    assert f(al.constant(1, al.int64)).numpy() == 2**40 + 1
    with pytest.raises(ValueError, match="out of range for int32"):
        f(al.constant(1))  # as in TensorFlow: the int joins x's dtype, and does not fit it


@pytest.mark.parametrize("operation", [lambda a, b: a // b, lambda a, b: a % b])
def test_integer_division_by_zero_raises_eagerly(operation):
    with pytest.raises(ZeroDivisionError, match="integer division by zero") as info:
        operation(al.constant([4, 5]), al.constant([2, 0]))
    assert isinstance(info.value, InvalidArgumentError)  # TensorFlow's name for it too
    assert __file__ in str(info.value)  # the user's line


@pytest.mark.parametrize("operation, op_name", [("//", "FloorDiv"), ("%", "FloorMod")])
def test_integer_division_by_zero_raises_when_the_graph_runs(operation, op_name):
    source = f"""
        def divide(a, b):
            total = a * 0
            for i in range(3):
                total += a {operation} (b - i)
            return total
        """
    function = make_function(source, "divide")
    staged = al.function(function)
    assert staged(al.constant(7), al.constant(5)).numpy() == function(7, 5)
    with pytest.raises(DivisionByZeroError, match=op_name) as info:
        staged(al.constant(7), al.constant(1))
    with pytest.raises(ZeroDivisionError):
        function(7, 1)
    frames = [(frame.filename, frame.lineno) for frame in traceback.extract_tb(info.value.__traceback__)]
    assert (function.__code__.co_filename, 5) in frames  # the user's line of the division


def test_float_division_by_zero_still_gives_inf_and_nan():
    values = (al.constant([1.0, 0.0]) // al.constant(0.0)).numpy()
    assert np.isinf(values[0]) and np.isnan(values[1])
