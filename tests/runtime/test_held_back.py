"""A Python error in code graph control flow may never run is raised only if it runs.

An index, key or arithmetic error raised while tracing a graph branch, a loop
body, or the lazy operand of ``and``/``or``/``x if c else y`` is held back:
the graph raises it (with its type and the user's line) when that path runs,
as Python would, and not at all when it does not.
"""

import traceback

import pytest

import autoloop as al

from ..compiler.programs import make_function

SOURCE = """
    def f(x):
        items = [x]
        lookup = {'a': 1}
        first = {kind}
        return first
    """


@pytest.mark.parametrize("kind, error", [
    ("items[0] if x > 0 else items[5]", IndexError),
    ("x > 0 and items[3]", IndexError),
    ("x <= 0 or lookup['b']", KeyError),
])
def test_error_in_a_lazy_operand_raises_only_when_it_is_evaluated(kind, error):
    function = make_function(SOURCE.replace("{kind}", kind), "f")
    staged = al.function(function)
    for x in (1, -1):
        try:
            expected = function(x)
        except error:
            with pytest.raises(error) as info:
                staged(al.constant(x))
            frames = [f.lineno for f in traceback.extract_tb(info.value.__traceback__)
                      if f.filename == function.__code__.co_filename]
            assert 5 in frames  # the user's line of the failing expression
        else:
            assert bool(staged(al.constant(x)).numpy()) == bool(expected)


def test_error_in_a_graph_branch_and_a_graph_loop_body():
    function = make_function("""
        def f(x, n):
            items = [1, 2]
            total = 0
            if x > 0:
                total = items[1] * 10
            for i in range(n):
                total += items[5]
            return total
        """, "f")
    staged = al.function(function)
    assert staged(al.constant(1), al.constant(0)).numpy() == 20
    assert staged(al.constant(-1), al.constant(0)).numpy() == 0
    with pytest.raises(IndexError):
        staged(al.constant(-1), al.constant(2))


def test_a_statement_that_raises_on_every_path_raises_the_users_error():
    function = make_function("""
        def f(x):
            items = []
            if x > 0:
                y = items[1]
            else:
                y = items[2]
            return y
        """, "f")
    with pytest.raises(IndexError) as info:
        al.function(function)(al.constant(1))
    assert not isinstance(info.value, UnboundLocalError)
