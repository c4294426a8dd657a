"""Converted Python that means a scan: ``for x in xs`` appending to lists, with ``break``.

The lists must stack to exactly the iterations that ran (and appended), in
a graph as in plain Python, whether the break is decided by a Python value
or a tensor.
A ``while`` whose condition holds one boolean per entry is an error that
points at `scan` with ``cond_dims``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autoloop as al
from tests.runtime_core.helpers import run_checked

def collect(xs, stack):
    doubled = []
    for x in xs:
        doubled.append(x * 2)
    return stack(doubled)


def collect_until_large(xs, limit, stack):
    kept, sums = [], []
    total = xs[0] * 0
    for x in xs:
        if x > limit:
            break
        total += x
        kept.append(x)
        sums.append(total)
    return stack(kept), stack(sums)


def collect_first(xs, count, stack):
    firsts = []
    for x in xs:
        firsts.append(x)
        if len(firsts) >= count:
            break
    return stack(firsts)


def in_a_graph(fn, *args):
    """`fn` converted and traced (lists stacked by autoloop.stack in the graph); numpy results."""
    function = al.function(lambda *inner: fn(*inner, al.stack))
    run_checked(function.get_concrete_function(*args), args)
    result = function(*args)
    return [value.numpy() for value in (result if isinstance(result, tuple) else (result,))]


def in_python(fn, *args):
    """`fn` as plain Python on Python values."""
    plain = [a.numpy().tolist() if isinstance(a, al.Tensor) else a for a in args]
    result = fn(*plain, lambda items: np.asarray(items, np.int32))
    return list(result if isinstance(result, tuple) else (result,))


def test_appends_in_a_for_loop_over_a_tensor_stack_to_every_iteration():
    xs = al.constant([3, 1, 4])
    (found,) = in_a_graph(collect, xs)
    assert found.tolist() == [6, 2, 8] == in_python(collect, xs)[0].tolist()


def test_a_break_under_a_tensor_condition_stacks_to_the_iterations_that_ran():
    kept, sums = in_a_graph(collect_until_large, al.constant([3, 1, 4, 1, 5]), al.constant(3))
    assert kept.tolist() == [3, 1] and sums.tolist() == [3, 4]


def test_a_break_on_the_length_of_the_list():
    (found,) = in_a_graph(collect_first, al.constant([5, 6, 7, 8]), al.constant(3))
    assert found.tolist() == [5, 6, 7]


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.integers(-5, 9), min_size=1, max_size=8), limit=st.integers(-5, 9))
def test_generated_breaks_agree_with_python(values, limit):
    xs = al.constant(np.asarray(values, np.int32))
    for found, expected in zip(in_a_graph(collect_until_large, xs, al.constant(limit)),
                               in_python(collect_until_large, xs, limit)):
        assert found.tolist() == expected.tolist() and found.shape == expected.shape


def breaks_and_appends(xs, limit, stack, mode):
    """A family of loops over xs: appends (one of them under a tensor if), break/continue by `mode`."""
    kept, evens = [], []
    count = 0
    for x in xs:
        if mode == 0 and x > limit:
            break
        if mode == 1 and x == limit:
            continue
        kept.append(x)
        if mode == 2 and x > limit:
            break
        if x % 2 == 0:
            evens.append(x * 2)
        count += 1
        if mode == 3 and count >= limit:
            break
    return stack(kept), stack(evens)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.integers(-4, 9), min_size=0, max_size=7), limit=st.integers(-2, 6),
       mode=st.integers(0, 3))
def test_a_family_of_loops_with_appends_breaks_and_continues_agrees_with_python(values, limit, mode):
    xs = al.constant(np.asarray(values, np.int32))
    found = in_a_graph(lambda xs, limit, stack: breaks_and_appends(xs, limit, stack, mode), xs, al.constant(limit))
    expected = in_python(lambda xs, limit, stack: breaks_and_appends(xs, limit, stack, mode), xs, limit)
    for graph_list, python_list in zip(found, expected):
        assert graph_list.shape == python_list.shape and graph_list.tolist() == python_list.tolist()


# -- a while condition with entries ---------------------------------------------------------------
def countdown_all(values):
    while values > 0:
        values = values - 1
    return values


def test_a_while_condition_with_entries_points_at_scan():
    with pytest.raises(TypeError) as raised:
        al.function(countdown_all)(al.constant([3, 1, 2]))
    message = str(raised.value)
    assert "while loop condition at" in message and "test_converted_scan.py" in message
    assert "is a bool tensor of shape (3,), but a graph while loop needs one boolean" in message
    assert "autoloop.scan(body=..., cond=..., initial=..., cond_dims=[3])" in message


def test_while_loop_with_a_condition_with_entries_points_at_scan():
    with pytest.raises(TypeError, match=r"use autoloop.scan with cond_dims=\[3\]"):
        al.while_loop(lambda v: v > 0, lambda v: v - 1, [al.constant([3, 1, 2])])


def test_the_same_loop_as_a_scan_with_cond_dims(mode):
    def fn(values):
        _, final, lengths = al.scan(body=lambda x, v: (None, v - 1), cond=lambda x, v: v > 0, initial=values,
                                    cond_dims=[3])
        return final, lengths

    final, lengths = mode(fn, al.constant([3, 1, 2]))
    assert final.numpy().tolist() == [0, 0, 0] and lengths.numpy().tolist() == [3, 1, 2]
