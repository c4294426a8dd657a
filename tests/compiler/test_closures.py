"""Closures see the current value of the variables loops and branches change (issue 7, item 2).

A name that a lambda or nested function captures keeps one binding: the
loop and branch functions the compiler makes write it back through
``nonlocal``; every other name still travels as a plain parameter.
"""

import pytest

import autoloop as al
from autoloop.compiler import conversion
from tests.compiler_adversarial.helpers import check, make_function

PROGRAMS = {
    "lambda_reads_while_counter": ("""
        def f(n):
            i = 0
            get = lambda: i
            s = 0
            while i < n:
                s = s * 10 + get()
                i += 1
            return s
        """, (3,)),
    "nested_def_reads_for_target": ("""
        def f(n):
            total = 0
            k = 0
            def scaled():
                return k * 2
            for k in range(n):
                total += scaled()
            return total
        """, (4,)),
    "closure_in_both_branches": ("""
        def f(n, x):
            c, d = 0, 1
            get = lambda: c + d
            for k in range(n):
                if get() > x:
                    c += 1
                else:
                    d += get()
            return c * 100 + d
        """, (5, 2)),
    "closure_called_after_the_loop": ("""
        def f(n):
            i = 0
            get = lambda: i * 3
            while i < n:
                i += 1
            return get()
        """, (4,)),
    "closure_made_before_a_branch": ("""
        def f(x):
            y = 1
            get = lambda: y
            if x > 0:
                y = 5
            return get() + y
        """, (2,)),
    "closure_reads_parameter_changed_in_loop": ("""
        def f(n):
            peek = lambda: n
            s = 0
            while n > 0:
                s += peek()
                n -= 1
            return s
        """, (3,)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_closure_sees_current_value_python(name):
    source, args = PROGRAMS[name]
    function = make_function(source, "f")
    assert conversion.convert(function)(*args) == function(*args)
    assert al.function(function)(*args) == function(*args)  # traced, Python conditions


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_closure_sees_current_value_staged(name):
    source, args = PROGRAMS[name]
    check(make_function(source, "f"), *args)


def test_lambdas_made_in_a_loop_see_the_last_value():
    function = make_function("""
        def f():
            fs = []
            for v in [1, 2]:
                fs.append(lambda: v)
            return [g() for g in fs]
        """, "f")
    assert function() == [2, 2]
    assert conversion.convert(function)() == [2, 2]


def test_only_captured_names_are_shared():
    function = make_function("""
        def f(n):
            i, s = 0, 0
            get = lambda: i
            while i < n:
                s += get()
                i += 1
            return s
        """, "f")
    code = conversion.converted_source(function)
    assert "nonlocal i\n" in code and "i = i_\n" in code
    assert "def loop_body(i_, s):" in code  # `s` is a plain loop variable
    assert "nonlocal s" not in code
