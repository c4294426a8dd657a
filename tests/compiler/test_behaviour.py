"""Each construct: the converted function on tensors gives what the plain function gives on Python values."""

import numpy as np
import pytest

import autoloop as al
from autoloop.compiler import conversion

from .programs import make_function

CASES = {
    "while": ("""
        def f(n):
            i, result = 0, 0
            while i < n:
                result += i * i
                i += 1
            return result
        """, [(10,), (0,), (3,)]),
    "for_range": ("""
        def f(n):
            total = 0
            for i in range(n):
                total += i * 2
            return total
        """, [(5,), (0,)]),
    "for_range_start_step": ("""
        def f(n):
            total = 0
            for i in range(10, n, -3):
                total += i
            return total
        """, [(0,), (9,)]),
    "if_else": ("""
        def f(x):
            if x > 0:
                y = x * 2
            else:
                y = -x
            return y
        """, [(3,), (-4,)]),
    "elif": ("""
        def f(x):
            if x > 10:
                size = 3
            elif x > 5:
                size = 2
            else:
                size = 1
            return size
        """, [(11,), (6,), (0,)]),
    "if_without_else": ("""
        def f(x, y):
            if x > y:
                y = y + 10
            return y
        """, [(3, 1), (1, 3)]),
    "conditional_expression": ("""
        def f(x):
            return x * 2 if x > 0 else -x
        """, [(3,), (-3,)]),
    "logical": ("""
        def f(x, y):
            return (x > 0 and y > 0) or not (x < y)
        """, [(1, 2), (-1, 2), (3, 1), (-2, -1)]),
    "chained_comparison": ("""
        def f(x, y):
            if 0 <= x < y:
                return 1
            return 0
        """, [(1, 2), (3, 2), (-1, 2)]),
    "break": ("""
        def f(n):
            total = 0
            i = 0
            while i < n:
                if total > 10:
                    break
                total += i
                i += 1
            return total
        """, [(10,), (3,)]),
    "continue": ("""
        def f(n):
            i, odd_sum = 0, 0
            while i < n:
                i += 1
                if i % 2 == 0:
                    continue
                odd_sum += i
            return odd_sum
        """, [(7,), (0,)]),
    "return_in_loop": ("""
        def f(n):
            i = 0
            while i < n:
                if i * i > 50:
                    return i
                i += 1
            return -1
        """, [(20,), (3,)]),
    "return_in_branches": ("""
        def f(x):
            if x > 0:
                return x + 1
            else:
                return x - 1
        """, [(2,), (-2,)]),
    "nested_loops": ("""
        def f(n):
            total = 0
            for i in range(n):
                j = 0
                while j < i:
                    if j == 3:
                        break
                    total += j
                    j += 1
            return total
        """, [(6,), (1,)]),
    "first_assigned_in_loop": ("""
        def f(n):
            i = 0
            while i < n:
                last = i * 3
                i += 1
            return last
        """, [(4,)]),
    "for_else": ("""
        def f(n, target):
            found = 0
            for i in range(n):
                if i == target:
                    found = 1
                    break
            else:
                found = 2
            return found
        """, [(5, 3), (5, 7)]),
}


def _run_staged(function, args):
    tensors = [al.constant(a) for a in args]
    return al.function(function)(*tensors).numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_python_values(name):
    source, inputs = CASES[name]
    function = make_function(source, "f")
    converted = conversion.convert(function)
    for args in inputs:
        assert converted(*args) == function(*args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensors_match_python(name):
    source, inputs = CASES[name]
    function = make_function(source, "f")
    for args in inputs:
        assert _run_staged(function, args) == function(*args), (name, args)


def test_for_over_tensor_rows():
    def f(t):
        total = al.constant(0.0)
        for row in t:
            total += row
        return total
    assert al.function(f)(al.constant([1.0, 2.0, 3.5])).numpy() == 6.5


def test_list_append_in_graph_loop():
    def f(n):
        squares = []
        for i in range(n):
            squares.append(i * i)
        return al.stack(squares), squares[2], len(squares)
    stacked, third, length = al.function(f)(al.constant(4))
    np.testing.assert_array_equal(stacked.numpy(), [0, 1, 4, 9])
    assert third.numpy() == 4 and length.numpy() == 4


def test_list_append_python_loop_unrolls():
    def f(x):
        values = []
        for i in [1, 2, 3]:
            values.append(x * i)
        return al.stack(values)
    np.testing.assert_array_equal(al.function(f)(al.constant(2)).numpy(), [2, 4, 6])


def test_walrus_in_condition():
    def f(values):
        total = 0
        while (item := values.pop()) > 0:
            total += item
        return total
    assert conversion.convert(f)([0, 1, 2, 3]) == f([0, 1, 2, 3])


def test_attribute_loop_variable():
    class Counter:
        def __init__(self):
            self.count = al.constant(0)

        def add_up(self, n):
            i = al.constant(0)
            while i < n:
                self.count += i
                i += 1
            return self.count

    counter = Counter()
    assert al.function(counter.add_up)(al.constant(5)).numpy() == 10


def test_subscript_loop_variable():
    def f(n):
        acc = [al.constant(0), al.constant(1)]
        i = al.constant(0)
        while i < n:
            acc[0] = acc[0] + i
            i += 1
        return acc[0]
    assert al.function(f)(al.constant(4)).numpy() == 6


def test_user_function_calls_are_converted():
    def helper(x):
        if x > 0:
            return x
        return -x

    def f(x):
        return helper(x) + 1
    assert al.function(f)(al.constant(-3)).numpy() == 4


def test_do_not_convert_is_called_as_is():
    calls = []

    @al.do_not_convert
    def helper(x):
        calls.append(x)
        return x
    assert conversion.convert(helper) is helper

    def f(x):
        return helper(x)
    assert conversion.convert(f)(3) == 3 and calls == [3]


def test_lambdas_on_one_line():
    first, second = (lambda x: x + 1 if x > 0 else x), (lambda x: x * 2 if x > 0 else x)
    assert al.function(first)(al.constant(2)).numpy() == 3
    assert al.function(second)(al.constant(2)).numpy() == 4


def test_closure_reads_live_cells():
    scale = 2

    def f(x):
        if x > 0:
            return x * scale
        return x
    converted = conversion.convert(f)
    assert converted(3) == 6
    scale = 5
    assert converted(3) == 15


def test_method_bound_self():
    class Model:
        factor = 3

        def apply(self, x):
            if x > 0:
                x = x * self.factor
            return x
    model = Model()
    assert conversion.convert(model.apply)(2) == 6


def test_assert_in_graph_raises_when_run():
    def f(x):
        assert x > 0, "x must be positive"
        return x
    staged = al.function(f)
    assert staged(al.constant(2)).numpy() == 2
    with pytest.raises(AssertionError, match="x must be positive"):
        staged(al.constant(-1))


def test_print_in_graph_loop_in_program_order(capsys):
    def f(n):
        i = al.constant(0)
        while i < n:
            print("i =", i)
            i += 1
        return i
    al.function(f)(al.constant(3))
    assert capsys.readouterr().out == "i = 0\ni = 1\ni = 2\n"


def test_python_condition_keeps_python_semantics():
    def f(x, flag):
        if flag:
            x = x + 1
        return x
    graph = al.function(f).get_concrete_function(al.constant(1), True).graph
    assert not any(node.op == "Cond" for node in graph.nodes)


def test_a_returned_list_appended_in_a_graph_loop_comes_back_as_a_list_of_tensors():
    @al.function
    def squares(n):
        out = []
        for i in al.range(n):
            out.append(i * i)
        return out

    result = squares(al.constant(4))
    assert isinstance(result, list)
    assert [int(v) for v in result] == [0, 1, 4, 9]
    assert al.stack(result).numpy().tolist() == [0, 1, 4, 9]
