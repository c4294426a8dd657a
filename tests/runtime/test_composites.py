"""Dict keys, list items and attributes first assigned inside a branch or loop behave as in Python."""

import numpy as np
import pytest

import autoloop as al

from ..compiler.programs import make_function


class Box:
    pass


BRANCHES = """
    def f(c):
        x = {}
        box = Box()
        if c > 0:
            x['b'] = 1
            box.size = 2
        else:
            x['b'] = -1
            box.size = 3
        return x['b'], box.size, len(x)
    """


@pytest.mark.parametrize("c", [1, -1])
def test_item_and_attribute_first_assigned_in_both_branches(c):
    function = make_function(BRANCHES, "f", {"Box": Box})
    expected = function(c)
    for argument in (c, al.constant(c)):  # a Python and a tensor condition
        result = al.function(function)(argument)
        assert [int(np.asarray(r)) for r in result] == list(expected)


def test_python_condition_item_assigned_in_one_branch_is_absent_on_the_other():
    function = make_function("""
        def f(c, n):
            x = {}
            box = Box()
            if c:
                x['b'] = n
                box.size = n
            return sorted(x), hasattr(box, 'size')
        """, "f", {"Box": Box})
    for c in (True, False):
        assert al.function(function)(c, al.constant(2)) == function(c, 2)


def test_graph_condition_item_assigned_in_one_branch_raises_only_where_read_unassigned():
    function = make_function("""
        def f(c):
            x = {'a': c}
            if c > 0:
                x['b'] = c * 10
            return x['b']
        """, "f")
    staged = al.function(function)
    assert staged(al.constant(2)).numpy() == 20
    with pytest.raises(KeyError, match="item 'b'"):
        staged(al.constant(-2))


def test_item_first_assigned_in_a_graph_loop():
    function = make_function("""
        def f(n):
            stats = {}
            total = 0
            for i in range(n):
                stats['last'] = i
                total += i
            return total, stats['last']
        """, "f")
    staged = al.function(function)
    assert [int(v.numpy()) for v in staged(al.constant(4))] == [6, 3]
    with pytest.raises(KeyError, match="item 'last'"):
        staged(al.constant(0))


def test_attribute_first_assigned_in_a_graph_loop_read_by_a_later_iteration():
    class Accumulator:
        def run(self, n):
            i = 0
            while i < n:
                if i > 0:
                    self.previous = self.previous + i
                else:
                    self.previous = i
                i += 1
            return self.previous

    staged = al.function(Accumulator().run)
    assert staged(al.constant(4)).numpy() == Accumulator().run(4)
    with pytest.raises(AttributeError, match="attribute 'previous'"):
        staged(al.constant(0))
