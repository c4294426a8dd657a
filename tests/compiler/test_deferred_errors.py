"""Errors Python raises only on the path that runs (issue 7, items 6, 9 and 10).

- A ``raise`` or a failed Python-valued ``assert`` in a graph branch or
  loop body raises when the graph runs that path, with the user's exception
  type, message and line; an untaken path raises nothing.
- A read of a possibly unbound name is checked even when its value is
  unused.
- A local assigned later but read in a branch, loop or lazy operand gives
  UnboundLocalError (or nothing, where that path does not run), never a
  NameError about a free variable, and no internal value shows in a message.

Each program runs as plain Python and converted, on Python values and on
tensors, for arguments that take each path.
"""

import re
import traceback

import pytest

import autoloop as al
from autoloop.compiler import conversion
from tests.compiler_adversarial.helpers import make_function

INTERNAL = re.compile(r"MaybeUndefined|Undefined\(|_NeedsPlan|Traced|DeferredRaise|retval_|do_return|al__")

PROGRAMS = {
    # item 10: raise and assert in graph branches and loop bodies
    "assert_in_branch": ("""
        def f(c, k):
            if c > 0:
                assert k < 3, 'k too big'
            return c
        """, [(-1, 5), (1, 5), (1, 2)]),
    "raise_in_branch": ("""
        def f(c, k):
            if c > 0:
                if k > 3:
                    raise ValueError('k too big')
                y = 1
            else:
                y = 2
            return y + c
        """, [(-1, 5), (1, 5), (1, 2)]),
    "raise_class_in_loop_body": ("""
        def f(n, k):
            i = 0
            while i < n:
                if k > 3:
                    raise KeyError
                i += 1
            return i
        """, [(0, 5), (2, 5), (2, 1)]),
    "raise_in_both_branches": ("""
        def f(c, k):
            if c > k:
                raise ValueError('greater')
            else:
                raise ValueError('not greater')
            return c
        """, [(1, 0), (0, 1)]),
    "raise_in_called_function": ("""
        def check(x, limit):
            if limit < 0:
                raise ValueError('negative limit')
            return x

        def f(c, k):
            if c > 0:
                c = check(c, k)
            return c
        """, [(-1, -1), (1, -1), (1, 1)]),
    "assert_in_for_over_tensor": ("""
        def f(n, k):
            s = 0
            for i in range(n):
                assert k != 7, 'seven'
                s += i
            return s
        """, [(0, 7), (3, 7), (3, 1)]),
    "every_path_raises_its_own_error": ("""
        def f(c, k):
            if c == 1:
                raise ValueError('one')
            else:
                u = k if k > u else 4
            return u
        """, [(1, 0), (2, 0)]),
    "every_path_raises_in_a_loop_body": ("""
        def f(n, k):
            i = 0
            while i < n:
                if i > k:
                    raise KeyError('late')
                else:
                    assert False, 'early'
                i += 1
            return i
        """, [(0, 0), (2, 0), (2, -1)]),
    # a graph assertion comes first: an error Python code raises after it waits for it
    "graph_assert_then_raise": ("""
        def f(c, k):
            assert c > k, 'c too small'
            raise ValueError('after the assert')
        """, [(1, 0), (0, 1)]),
    "graph_assert_then_unbound_read": ("""
        def f(c, k):
            for i in range(k):
                assert c > i, 'c too small'
                z = i
            return c + z
        """, [(3, 0), (3, 2), (0, 2)]),
    # item 6: a read whose value is unused
    "dead_read": ("""
        def f(a, k):
            if a > 0:
                x = 1
            y = x
            return a
        """, [(-1, 0), (1, 0)]),
    "dead_read_in_loop": ("""
        def f(n, k):
            i = 0
            while i < n:
                z = i
                i += 1
            unused = z + k
            return i
        """, [(0, 1), (2, 1)]),
    # item 9: locals assigned later, read in branches and lazy operands
    "assigned_later_read_in_untaken_branch": ("""
        def f(a, k):
            if a > 0:
                y = v + 1
            else:
                y = 2
            v = 3
            return y
        """, [(-1, 0), (1, 0)]),
    "assigned_later_read_in_and": ("""
        def f(a, k):
            y = a > k and v > 1
            v = 3
            return y
        """, [(-1, 0), (1, 0)]),
    "assigned_later_read_in_elif_test": ("""
        def f(a, k):
            if a > k:
                y = 1
            elif v > 2:
                y = 2
            else:
                y = 3
            v = 1
            return y
        """, [(1, 0), (-1, 0)]),
    "assigned_later_read_in_ternary": ("""
        def f(a, k):
            y = 5 if a > k else v
            v = 1
            return y
        """, [(1, 0), (-1, 0)]),
    "after_if_false": ("""
        def f(a, k):
            if False:
                x = 0
            if a > k:
                x = 1
            return x
        """, [(1, 0), (-1, 0)]),
    "after_if_false_read_in_branch": ("""
        def f(a, k):
            if False:
                x = 0
            if a > k:
                y = x
            else:
                y = 1
            return y
        """, [(1, 0), (-1, 0)]),
}


def _outcome(call):
    try:
        return "returned", _plain(call())
    except Exception as error:  # the program's own errors are outcomes
        assert not INTERNAL.search(str(error)), f"internal value in {type(error).__name__}: {error}"
        return "raised", _exception_type(error)


def _exception_type(error):
    return UnboundLocalError if isinstance(error, UnboundLocalError) else type(error)


def _plain(value):
    return value.numpy().item() if isinstance(value, al.Tensor) else value


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_errors_only_on_the_path_that_runs(name):
    source, cases = PROGRAMS[name]
    function = make_function(source, "f")
    for c, k in cases:
        expected = _outcome(lambda: function(c, k))
        assert _outcome(lambda: conversion.convert(function)(c, k)) == expected, (c, k)
        assert _outcome(lambda: al.function(function)(c, k)) == expected, (c, k)
        assert _outcome(lambda: al.function(function)(al.constant(c), k)) == expected, (c, k)
        assert _outcome(lambda: al.function(function)(al.constant(c), al.constant(k))) == expected, (c, k)


def test_print_before_a_raise_prints_when_the_graph_runs(capsys):
    function = make_function("""
        def f(c):
            print('before', c)
            raise KeyError('after')
        """, "f")
    with pytest.raises(KeyError):
        al.function(function)(al.constant(3))
    assert capsys.readouterr().out == "before 3\n"


def test_graph_assert_inside_a_catching_try_is_not_implemented():
    function = make_function("""
        def f(c):
            try:
                assert c > 0, 'negative'
            finally:
                return c
        """, "f")
    assert function(-1) == -1
    with pytest.raises(NotImplementedError, match=r"assert on a Tensor .*line 4.*try statement at line 3"):
        al.function(function)(al.constant(-1))


def test_deferred_raise_keeps_message_and_line():
    function = make_function("""
        def f(c, k):
            if c > 0:
                if k > 3:
                    raise ValueError(f'k is {k}')
            return c
        """, "f")
    staged = al.function(function)
    assert int(staged(al.constant(-1), 5).numpy()) == -1
    with pytest.raises(ValueError, match="^k is 5$") as info:
        staged(al.constant(1), 5)
    filename = function.__code__.co_filename
    lines = [frame.lineno for frame in traceback.extract_tb(info.value.__traceback__) if frame.filename == filename]
    assert lines[-1] == 5  # the raise statement


def test_deferred_assert_names_its_line():
    function = make_function("""
        def f(c, k):
            s = c
            if c > 0:
                s = s + 1
                assert k < 3, 'k too big'
            return s
        """, "f")
    with pytest.raises(AssertionError, match="k too big") as info:
        al.function(function)(al.constant(1), 5)
    filename = function.__code__.co_filename
    lines = [frame.lineno for frame in traceback.extract_tb(info.value.__traceback__) if frame.filename == filename]
    assert lines[-1] == 6
