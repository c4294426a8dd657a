"""Python numbers that graph control flow turns into tensors still act like Python numbers.

A Python ``int`` assigned under a graph condition, a loop index of
``range(tensor)``, ``len`` of a list built in a graph loop: each becomes a
tensor of a default dtype, but meeting a float tensor it becomes a float, as
the Python number would (JAX calls such a tensor weakly typed). Two tensors
the user made keep TensorFlow's rule: their dtypes must agree.
"""

import numpy as np
import pytest

import autoloop as al

from ..compiler.programs import make_function


def check(source, *cases, name="f"):
    function = make_function(source, name, {"al": al})
    staged = al.function(function)
    for args in cases:
        expected = function(*args)
        got = staged(*[al.constant(np.float32(a)) if isinstance(a, float) else al.constant(a) for a in args])
        np.testing.assert_allclose(np.asarray(got.numpy()), np.asarray(expected), rtol=1e-6)
        assert got.dtype is al.float32 or not isinstance(expected, float)


def test_python_int_assigned_under_graph_condition_meets_a_float():
    check("""
        def f(x):
            c = 0
            if x > 1.0:
                c = 3
            return c + x
        """, (0.5,), (2.5,))


def test_loop_index_of_a_tensor_range_meets_a_float():
    check("""
        def f(x, n):
            total = 0
            for i in range(n):
                total = total + x * i
            return total
        """, (1.5, 4), (0.5, 0))


def test_len_of_a_graph_list_meets_a_float():
    check("""
        def f(x, n):
            items = []
            for i in range(n):
                items.append(i)
            return len(items) * x
        """, (1.5, 3))


def test_python_float_and_int_in_branches_make_a_float():
    check("""
        def f(c):
            if c > 0:
                y = 1
            else:
                y = 2.5
            return y
        """, (1,), (-1,))


def test_ternary_of_a_python_int_and_a_float_tensor():
    check("""
        def f(x):
            return (3 if x > 0.0 else x) * 2
        """, (1.5,), (-1.5,))


def test_tensors_the_user_made_keep_their_dtypes():
    function = make_function("""
        def f(x, n):
            i = al.constant(0)
            while i < n:
                i += 1
            return i + x
        """, "f", {"al": al})
    with pytest.raises(TypeError, match="int32"):
        al.function(function)(al.constant(1.5), al.constant(2))
