"""The runtime on symbolic tensors: graph control flow, with Python semantics kept."""

import numpy as np
import pytest

import autoloop as al


def test_staged_while_with_variable_first_assigned_in_loop():
    def f(n):
        i = al.constant(0)
        while i < n:
            last = i * 10
            i += 1
        return last
    staged = al.function(f)
    assert staged(al.constant(3)).numpy() == 20
    with pytest.raises(UnboundLocalError, match="'last'"):
        staged(al.constant(0))


def test_staged_if_keeps_identical_python_values():
    def f(x):
        name = "same"
        if x > 0:
            y = x
        else:
            y = -x
        return y, name
    y, name = al.function(f)(al.constant(-2))
    assert y.numpy() == 2


def test_function_ending_without_return_on_graph_path():
    def f(x):
        if x > 0:
            return x
    staged = al.function(f)
    assert staged(al.constant(2)).numpy() == 2
    with pytest.raises(ValueError, match="without a return"):
        staged(al.constant(-2))


def test_break_under_tensor_condition_in_python_for_loop():
    def f(x):
        total = al.constant(0)
        for step in [1, 2, 3, 4]:
            if total > x:
                break
            total += step
        return total
    for limit in (0, 2, 100):
        expected = 0
        for step in [1, 2, 3, 4]:
            if expected > limit:
                break
            expected += step
        assert al.function(f)(al.constant(limit)).numpy() == expected


def test_lazy_and_on_tensors_is_a_cond():
    def f(x):
        return x > 0 and x < 10
    graph = al.function(f).get_concrete_function(al.constant(1)).graph
    assert any(node.op == "Cond" for node in graph.nodes)
    assert al.function(f)(al.constant(5)).numpy()
    assert not al.function(f)(al.constant(50)).numpy()


def test_for_over_tensor_array():
    def f(n):
        array = al.TensorArray(al.int32, size=0, dynamic_size=True)
        for i in range(n):
            array = array.write(i, i * i)
        total = al.constant(0)
        for value in array:
            total += value
        return total
    assert al.function(f)(al.constant(4)).numpy() == 14


def test_range_with_negative_tensor_step():
    def f(start, step):
        total = al.constant(0)
        for i in range(start, 0, step):
            total += i
        return total
    assert al.function(f)(al.constant(10), al.constant(-3)).numpy() == 10 + 7 + 4 + 1


def test_eager_tensors_outside_a_trace_run_as_python():
    from autoloop.compiler.conversion import convert

    def f(n):
        i, total = al.constant(0), al.constant(0)
        while i < n:
            total += i
            i += 1
        return total
    assert convert(f)(al.constant(4)).numpy() == 6
    np.testing.assert_equal(convert(f)(al.constant(0)).numpy(), 0)
