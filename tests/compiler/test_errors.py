"""Errors name the construct or variable and show a frame at the user's line."""

import traceback

import pytest

import autoloop as al
from autoloop.compiler import conversion

from .programs import make_function


def _user_frames(error, filename):
    return [(frame.filename, frame.lineno) for frame in traceback.extract_tb(error.__traceback__)
            if frame.filename == filename]


def _filename(function):
    return function.__code__.co_filename


def test_yield_is_not_implemented_at_its_line():
    function = make_function("""
        def f(n):
            x = 0
            yield x
        """, "f")
    with pytest.raises(NotImplementedError, match="yield") as info:
        conversion.convert(function)
    assert (_filename(function), 4) in _user_frames(info.value, _filename(function))


def test_try_in_graph_loop_is_not_implemented():
    function = make_function("""
        def f(n):
            i = 0
            while i < n:
                try:
                    i += 1
                except ValueError:
                    pass
            return i
        """, "f")
    assert conversion.convert(function)(3) == 3  # fine in Python
    with pytest.raises(NotImplementedError, match="try statement") as info:
        al.function(function)(al.constant(3))
    assert (_filename(function), 4) in _user_frames(info.value, _filename(function))


def test_global_write_in_graph_branch_is_not_implemented():
    function = make_function("""
        counter = 0
        def f(x):
            global counter
            if x > 0:
                counter = 1
            return x
        """, "f")
    with pytest.raises(NotImplementedError, match="global"):
        al.function(function)(al.constant(1))


def test_match_on_tensor_is_not_implemented():
    function = make_function("""
        def f(x):
            match x:
                case 1:
                    return 1
            return 0
        """, "f")
    assert conversion.convert(function)(1) == 1
    with pytest.raises(NotImplementedError, match="match"):
        al.function(function)(al.constant(1))


def test_unbound_read_in_graph_raises_when_run():
    function = make_function("""
        def f(x):
            if x > 0:
                y = x + 1
            return y
        """, "f")
    staged = al.function(function)
    assert staged(al.constant(1)).numpy() == 2
    with pytest.raises(UnboundLocalError, match="'y'") as info:
        staged(al.constant(-1))
    assert (_filename(function), 5) in _user_frames(info.value, _filename(function))


def test_unbound_read_in_python_names_variable_and_line():
    function = make_function("""
        def f(n):
            for i in range(n):
                last = i
            return last
        """, "f")
    with pytest.raises(UnboundLocalError, match="'last'") as info:
        conversion.convert(function)(0)
    assert (_filename(function), 5) in _user_frames(info.value, _filename(function))


def test_none_in_one_branch_names_variable():
    function = make_function("""
        def f(x):
            if x > 0:
                y = x
            else:
                y = None
            return y
        """, "f")
    with pytest.raises(ValueError, match="'y' is .*None in the else branch") as info:
        al.function(function)(al.constant(1))
    assert (_filename(function), 3) in _user_frames(info.value, _filename(function))


def test_condition_turning_into_tensor_continues_as_graph_loop():
    function = make_function("""
        def f(x):
            i = 0
            while i < 3:
                i = i + x
            return i
        """, "f")
    for x in (1, 2, 5):
        assert al.function(function)(al.constant(x)).numpy() == function(x)


def test_loop_variable_dtype_change_names_variable():
    function = make_function("""
        def f(n):
            x = al.constant(0)
            while x < n:
                x = al.cast(x, al.float32) + 1.5
            return x
        """, "f", {"al": al})
    with pytest.raises(TypeError, match="'x'") as info:
        al.function(function)(al.constant(3))
    assert (_filename(function), 4) in _user_frames(info.value, _filename(function))


def test_loop_variable_shape_change_suggests_set_loop_options():
    function = make_function("""
        def f(n):
            x = al.constant([0])
            i = 0
            while i < n:
                x = al.concat([x, al.stack([i])], 0)
                i += 1
            return x
        """, "f", {"al": al})
    with pytest.raises(ValueError, match="set_loop_options"):
        al.function(function)(al.constant(3))


def test_set_loop_options_allows_shape_change():
    function = make_function("""
        def f(n):
            x = al.constant([0])
            i = 0
            while i < n:
                al.set_loop_options(shape_invariants=[(x, al.TensorShape([None]))])
                x = al.concat([x, al.stack([i])], 0)
                i += 1
            return x
        """, "f", {"al": al})
    assert list(al.function(function)(al.constant(3)).numpy()) == [0, 0, 1, 2]


def test_error_in_user_code_shows_user_line():
    function = make_function("""
        def f(x):
            i = 0
            while i < x:
                i += 1
                y = undefined_name + i
            return i
        """, "f")
    with pytest.raises(NameError) as info:
        conversion.convert(function)(2)
    assert (_filename(function), 6) in _user_frames(info.value, _filename(function))


def test_source_not_available_is_an_error_not_a_fallback():
    namespace = {}
    exec("def f(x):\n    return x\n", namespace)
    with pytest.raises(ValueError, match="source"):
        conversion.convert(namespace["f"])
