"""``set_loop_options`` directives (issue 7, item 5).

Recognised by value however they are reached; ``maximum_iterations`` and
``shape_invariants`` apply to the loop they start; a call that is not a
directive raises when it runs instead of being ignored.
"""

import pytest

import autoloop as al
from autoloop.compiler import conversion
from tests.compiler_adversarial.helpers import make_function


SPELLINGS = {
    "al.set_loop_options": {"al": al},
    "autoloop.set_loop_options": {"autoloop": al},
    "slo": {"slo": al.set_loop_options},
    "tf.autograph.experimental.set_loop_options": {"tf": al},  # import autoloop as tf
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_maximum_iterations_however_it_is_reached(spelling):
    function = make_function(f"""
        def f(x):
            s = 0
            while s < x:
                {spelling}(maximum_iterations=4)
                s += 1
            return s
        """, "f", SPELLINGS[spelling])
    assert int(al.function(function)(al.constant(10)).numpy()) == 4
    assert int(al.function(function)(al.constant(2)).numpy()) == 2


@pytest.mark.parametrize("jump", ["break", "continue"])
def test_maximum_iterations_with_jumps(jump):
    function = make_function(f"""
        def f(x):
            s = 0
            t = 0
            while s < x:
                al.set_loop_options(maximum_iterations=5)
                s += 1
                if s == 3:
                    {jump}
                t += s
            return s * 100 + t
        """, "f")
    for x in (2, 10):
        loop_capped = make_function(f"""
            def g(x):
                s = 0
                t = 0
                n = 0
                while s < x and n < 5:
                    n += 1
                    s += 1
                    if s == 3:
                        {jump}
                    t += s
                return s * 100 + t
            """, "g")
        assert int(al.function(function)(al.constant(x)).numpy()) == loop_capped(x)


def test_positional_options_and_for_loops():
    function = make_function("""
        def f(n):
            s = 0
            for i in range(n):
                al.set_loop_options(None, 3)
                s += 10 + i
            return s
        """, "f")
    assert int(al.function(function)(al.constant(10)).numpy()) == 33


GRID_PROGRAMS = {
    "loop_in_a_branch": """
        def f(n):
            grid = al.zeros([1, 2])
            if n > 0:
                i = 0
                while i < n:
                    al.set_loop_options(shape_invariants=[(grid, al.TensorShape([None, 2]))])
                    grid = al.concat([grid, al.zeros([1, 2])], 0)
                    i += 1
            return grid
        """,
    "inner_of_nested_loops": """
        def f(n):
            grid = al.zeros([1, 2])
            j = 0
            while j < 2:
                i = 0
                while i < n:
                    al.set_loop_options(shape_invariants=[(grid, al.TensorShape([None, 2]))])
                    grid = al.concat([grid, al.zeros([1, 2])], 0)
                    i += 1
                j += 1
            return grid
        """,
    "nonlocal_of_the_enclosing_function": """
        def f(n):
            grid = al.zeros([1, 2])

            def grow():
                nonlocal grid
                i = 0
                while i < n:
                    al.set_loop_options(shape_invariants=[(grid, al.TensorShape([None, 2]))])
                    grid = al.concat([grid, al.zeros([1, 2])], 0)
                    i += 1
            grow()
            return grid
        """,
    "for_over_a_tensor": """
        def f(n):
            grid = al.zeros([1, 2])
            for i in al.range(n):
                al.set_loop_options(shape_invariants=[(grid, al.TensorShape([None, 2]))])
                grid = al.concat([grid, al.zeros([1, 2])], 0)
            return grid
        """,
}


@pytest.mark.parametrize("name", sorted(GRID_PROGRAMS))
def test_shape_invariants_name_locals_of_the_enclosing_function(name):
    function = make_function(GRID_PROGRAMS[name], "f")
    rows = {"inner_of_nested_loops": 7}.get(name, 4)
    assert al.function(function)(al.constant(3)).shape.as_list() == [rows, 2]
    assert conversion.convert(function)(3).shape.as_list() == [rows, 2]  # Python loops: no effect


def test_a_call_that_is_not_a_directive_raises_when_it_runs():
    function = make_function("""
        def f(x):
            s = 0
            while s < x:
                s += 1
                al.set_loop_options(maximum_iterations=4)
            return s
        """, "f")
    with pytest.raises(ValueError, match=r"line 6 is not the first statement of a loop body"):
        al.function(function)(al.constant(10))
    with pytest.raises(ValueError, match="not the first statement"):
        conversion.convert(function)(3)  # a Python loop: the call runs, and is not ignored
    assert function(3) == 3  # unconverted Python: there is no graph loop, nothing to apply
