"""Python lists under graph control flow: appends are graph state, never trace-time effects.

A list that a staged loop or branch appends to becomes a list of tensors
there and stays one afterwards: later appends, ``len``, ``l[i]`` and
``stack`` see exactly what Python would. Other changes to a Python container
inside graph control flow (``pop``, ``insert``, a new key, ``del``) raise an
error naming the container and the statement, never a silent wrong answer.
"""

import numpy as np
import pytest

import autoloop as al

from ..compiler.programs import make_function


def check(source, *cases, name="f"):
    """Each case (a tuple of Python args, and which of them become tensors) matches plain Python."""
    function = make_function(source, name, {"al": al})
    staged = al.function(function)
    for args in cases:
        expected = function(*args)
        got = staged(*[al.constant(a) if not isinstance(a, str) else a for a in args])
        _assert_same(got, expected, f"{name}{args}")
    return function


def _assert_same(got, expected, context):
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), f"{context}: {got!r}"
        for g, e in zip(got, expected):
            _assert_same(g, e, context)
        return
    got = np.asarray(got.numpy() if isinstance(got, al.Tensor) else got)
    expected = np.asarray(expected.numpy() if isinstance(expected, al.Tensor) else expected)
    np.testing.assert_array_equal(got, expected, err_msg=context)


# -- family 1: appends under graph control flow -------------------------------------------------

def test_append_after_a_graph_if_that_returns():
    check("""
        def f(a):
            acc = [0]
            if a > 100:
                return len(acc)
            acc.append(a)
            return len(acc)
        """, (0,), (200,))


def test_append_in_one_branch_of_a_graph_if():
    check("""
        def f(c):
            acc = [0]
            if c > 0:
                acc.append(1)
            return len(acc), al.stack(acc)
        """, (-1,), (1,))


def test_append_after_a_graph_loop_and_in_its_else_clause():
    check("""
        def f(n):
            acc = []
            for i in range(n):
                acc.append(i)
            else:
                acc.append(10)
            acc.append(7)
            return al.stack(acc), len(acc), acc[0], acc[-1]
        """, (3,), (1,))


def test_list_is_graph_state_through_later_branches_and_loops():
    check("""
        def f(n, c):
            acc = []
            i = 0
            while i < n:
                acc.append(i * 2)
                i += 1
            if c > 0:
                acc.append(c)
            else:
                acc.append(-c)
                acc.append(-c)
            total = 0
            for item in acc:
                total += item
            return len(acc), total, acc[1]
        """, (3, 1), (3, -2), (2, 5))


def test_returned_list_is_a_python_list_of_tensors():
    function = check("""
        def f(n):
            acc = [al.constant(5)]
            for i in range(n):
                if i % 2 == 0:
                    acc.append(i)
            return acc
        """, (5,), (0,))
    result = al.function(function)(al.constant(5))
    assert isinstance(result, list) and [int(v.numpy()) for v in result] == [5, 0, 2, 4]


def test_append_in_python_if_mutates_in_place_like_python():
    check("""
        def f(x, flag):
            acc = [x]
            alias = acc
            if flag == "yes":
                acc.append(x + 1)
            return len(alias), alias[-1]
        """, (1, "yes"), (1, "no"))


# -- family 8: appends under a graph if inside a loop over a tensor ----------------------------

def test_append_under_graph_if_in_loop_over_tensor():
    check("""
        def f(xs, a):
            acc = []
            for v in xs:
                if v > a:
                    acc.append(v * 2)
            return len(acc), al.reduce_sum(al.stack(acc)) if len(acc) > 0 else 0
        """, ([1, 5, 3], 2), ([1, 1], 4))


def test_branch_that_appends_in_a_loop_while_the_other_does_not():
    check("""
        def f(c, n):
            acc = []
            if c > 0:
                for i in range(n):
                    acc.append(i)
            return len(acc)
        """, (1, 3), (-1, 3), (1, 0))


def test_both_branches_append_different_counts_in_nested_ifs():
    check("""
        def f(a, b):
            acc = []
            if a > 0:
                if b > 0:
                    acc.append(a)
                    acc.append(b)
                else:
                    acc.append(b)
            elif b > a:
                acc.append(a + b)
            return len(acc)
        """, (1, 1), (1, -1), (-1, 3), (-3, -5))


# -- family 4: other changes to Python containers in graph bodies -------------------------------

@pytest.mark.parametrize("change, kind", [("history.pop()", "list"), ("history.insert(0, i)", "list"),
                                          ("del history[0]", "list"), ("lookup.pop('a', 0)", "dict"),
                                          ("lookup.clear()", "dict"), ("seen.add(3)", "set")])
def test_changing_a_container_in_a_graph_loop_is_an_error_naming_it(change, kind):
    function = make_function(f"""
        def f(n):
            history = [1, 2, 3]
            lookup = {{'a': 1}}
            seen = set()
            s = 0
            for i in range(n):
                s += i
                {change}
            return s, len(history), len(lookup), len(seen)
        """, "f")
    name = change.split(".")[0].split("[")[0].replace("del ", "")
    with pytest.raises(ValueError, match=f"changes the Python {kind} '{name}'") as info:
        al.function(function)(al.constant(2))
    assert "for loop at" in str(info.value) and "line 7" in str(info.value)
    assert function(2)[0] == 1  # Python runs it; the converted function's tracing left it intact


def test_container_changed_by_a_helper_in_a_graph_branch_is_restored_and_reported():
    log = []

    def record(value):
        log.append(value)
        return value

    function = make_function("""
        def f(x):
            if x > 0:
                x = record(x)
            return x
        """, "f", {"record": record})
    with pytest.raises(ValueError, match="changes the Python list 'log'"):
        al.function(function)(al.constant(1))
    assert log == []


def test_popping_from_a_list_carried_by_a_graph_loop_is_an_error():
    function = make_function("""
        def f(n):
            items = [1, 2, 3]
            for i in range(n):
                items.append(i)
                items.pop(0)
            return len(items)
        """, "f")
    with pytest.raises(ValueError, match="'items'"):
        al.function(function)(al.constant(2))


def test_ragged_list_is_an_error_naming_it():
    function = make_function("""
        def f(x, c):
            acc = [0]
            if c > 0:
                acc.append(x)
            return len(acc)
        """, "f")
    with pytest.raises(ValueError, match="'acc' .* shapes"):
        al.function(function)(al.constant([1, 2]), al.constant(1))


def test_appending_another_dtype_to_a_graph_list_names_the_line():
    function = make_function("""
        def f(n, y):
            acc = []
            for i in range(n):
                acc.append(i)
            acc.append(y)
            return len(acc)
        """, "f")
    with pytest.raises(TypeError, match="cannot append at .*line 6"):
        al.function(function)(al.constant(2), al.constant(1.5))


# -- family 17: appends in a graph loop are linear -----------------------------------------------

def test_list_built_in_a_graph_loop_has_one_write_per_append():
    @al.function
    def squares(n):
        acc = []
        for i in range(n):
            acc.append(i * i)
        return al.stack(acc)

    graph = squares.get_concrete_function(al.constant(3)).graph
    ops = [node.op for node in graph.walk()]
    assert ops.count("TensorListWrite") == 1  # in the loop body: each iteration appends once
    assert squares(al.constant(5)).numpy().tolist() == [0, 1, 4, 9, 16]
