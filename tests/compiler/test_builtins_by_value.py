"""Builtins resolved by value, ``in`` on tensors, C functions called as they are (issue 7, item 13)."""

import numpy as np
import pytest

import autoloop as al
from autoloop.compiler import conversion
from tests.compiler_adversarial.helpers import check, make_function

PROGRAMS = {
    "len_through_a_variable": ("""
        def f(x):
            size = len
            return size(x) * 2
        """, ([4, 5, 6],)),
    "len_of_an_appended_list_through_a_variable": ("""
        def f(xs):
            acc = []
            for x in xs:
                acc.append(x)
            size = len
            return size(acc)
        """, ([1, 2, 3],)),
    "range_passed_as_an_argument": ("""
        def total(r, n):
            s = 0
            for i in r(n):
                s += i
            return s

        def f(n):
            return total(range, n)
        """, (5,)),
    "builtin_in_a_container": ("""
        def f(x):
            ops = {'count': len}
            return ops['count'](x)
        """, ([1, 2],)),
}

MEMBERSHIP = {
    "tensor_in_tensor": ("""
        def f(c, t):
            if c in t:
                return 1
            return 0
        """, [(2, [1, 2, 3]), (7, [1, 2, 3]), (1, [])]),
    "tensor_not_in_tensor": ("""
        def f(c, t):
            return 5 if c not in t else 6
        """, [(2, [1, 2, 3]), (7, [1, 2, 3])]),
    "tensor_in_tuple": ("""
        def f(c):
            hits = 0
            for k in range(4):
                if c + k in (1, 2, 3):
                    hits += 1
            return hits
        """, [(0,), (2,), (9,)]),
    "python_value_in_tensor_in_a_chain": ("""
        def f(c, t):
            if 0 <= c in t:
                return c
            return -1
        """, [(2, [1, 2]), (-1, [-1, 2]), (3, [1])]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_builtins_through_variables(name):
    source, args = PROGRAMS[name]
    function = make_function(source, "f")
    assert conversion.convert(function)(*args) == function(*args)
    check(function, *args)


@pytest.mark.parametrize("name", sorted(MEMBERSHIP))
def test_in_on_tensors(name):
    source, cases = MEMBERSHIP[name]
    function = make_function(source, "f")
    for args in cases:
        assert conversion.convert(function)(*args) == function(*args)
        tensors = [al.constant(a, dtype=al.int32) for a in args]
        assert int(al.function(function)(*tensors).numpy()) == function(*args), args


def test_in_on_a_list_appended_in_a_graph_loop():
    function = make_function("""
        def f(n, x):
            acc = []
            for i in range(n):
                acc.append(i * 2)
            return 1 if x in acc else 0
        """, "f")
    for n, x in ((3, 4), (3, 5), (0, 0)):
        assert int(al.function(function)(al.constant(n), al.constant(x)).numpy()) == function(n, x)


def test_print_through_a_variable_prints_when_the_graph_runs(capsys):
    function = make_function("""
        def f(x):
            show = print
            show('value', x + 1)
            return x
        """, "f")
    al.function(function)(al.constant(3))
    assert capsys.readouterr().out == "value 4\n"


def test_functions_written_in_c_are_called_as_they_are():
    generator = np.random.default_rng(0)
    function = make_function("""
        def f(n):
            draw = generator.binomial
            return np.add(draw(n, 0.5), np.random.RandomState(1).binomial(n, 0.25))
        """, "f", {"np": np, "generator": generator})
    expected = make_function("""
        def g(n):
            return np.add(np.random.default_rng(0).binomial(n, 0.5), np.random.RandomState(1).binomial(n, 0.25))
        """, "g", {"np": np})(10)
    assert conversion.convert(function)(10) == expected
    assert conversion.is_library(generator.binomial) and conversion.is_library(np.add)
