"""A traced function called inside a TF1 graph runs its effects when any of its results is fetched.

TF's automatic control dependencies for functions: the call is one op, so
fetching one of its results runs the whole function, its asserts, prints
and variable updates in program order, and a failed assert stops the run
with the user's message.
"""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import autoloop as al
import autoloop.compat.v1 as tf


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


@al.function
def _reciprocal_and_double(x):
    assert x != 0.0, "x must be nonzero"
    print("first", x)
    print("second", x * 3)
    return 1.0 / x, x * 2


def test_a_failed_assert_stops_the_run_with_the_users_message(graph):
    x = tf.placeholder(tf.float32, shape=[])
    reciprocal, _ = _reciprocal_and_double(x)
    with tf.Session() as sess:
        assert sess.run(reciprocal, {x: 4.0}) == np.float32(0.25)
        with pytest.raises(AssertionError, match="x must be nonzero"):
            sess.run(reciprocal, {x: 0.0})  # not inf: the assert runs first


def test_prints_run_once_per_fetch_in_program_order(graph, capfd):
    x = tf.placeholder(tf.float32, shape=[])
    both = _reciprocal_and_double(x)
    with tf.Session() as sess:
        sess.run(both, {x: 2.0})
        assert capfd.readouterr().out.splitlines() == ["first 2.0", "second 6.0"]
        sess.run(both, {x: 1.0})
        assert capfd.readouterr().out.splitlines() == ["first 1.0", "second 3.0"]


def test_fetching_a_result_that_reads_none_of_the_effects_runs_them_all(graph, capfd):
    x = tf.placeholder(tf.float32, shape=[])
    _, double = _reciprocal_and_double(x)  # x * 2 reads neither the assert nor the prints
    with tf.Session() as sess:
        assert sess.run(double, {x: 5.0}) == 10.0
        assert capfd.readouterr().out.splitlines() == ["first 5.0", "second 15.0"]
        with pytest.raises(AssertionError, match="x must be nonzero"):
            sess.run(double, {x: 0.0})


def test_variable_updates_inside_the_function_run_in_order_when_a_result_is_fetched(graph):
    v = tf.get_variable("v", dtype=tf.float32, shape=[], initializer=tf.zeros_initializer())

    @al.function
    def step(x):
        v.assign(x)          # written first
        v.assign_add(1.0)    # then incremented: 1 + x whatever the order of the graph's list
        return x * 0.0       # reads no variable

    out = step(tf.constant(3.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(v) == 0.0  # nothing fetched the call yet
        sess.run(out)
        assert sess.run(v) == 4.0


def test_a_function_without_effects_adds_nothing(graph):
    @al.function
    def square(x):
        return x * x

    three = tf.constant(3.0)
    nodes = len(graph.graph.nodes)
    y = square(three)
    assert [n.op for n in graph.graph.nodes[nodes:]] == ["Mul"]
    with tf.Session() as sess:
        assert sess.run(y) == 9.0


def test_two_calls_are_not_ordered_with_each_other(graph, capfd):
    """As two function call ops in TF1: fetching one call's result runs only that call's effects."""
    x = tf.placeholder(tf.float32, shape=[])
    first, _ = _reciprocal_and_double(x)
    second, _ = _reciprocal_and_double(x + 1)
    with tf.Session() as sess:
        sess.run(second, {x: 1.0})
        assert capfd.readouterr().out.splitlines() == ["first 2.0", "second 6.0"]


@al.function
def _sum_positive(x, n):
    s = x * 0.0
    for i in al.range(n):
        assert x > 0.0, "x must be positive"
        print("step", i)
        s += x
    return s, x + 1


def test_a_loop_in_the_function_prints_each_iteration_and_its_assert_points_at_the_users_line(graph, capfd):
    x = tf.placeholder(tf.float32, shape=[])
    n = tf.placeholder(tf.int32, shape=[])
    _, after = _sum_positive(x, n)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        assert sess.run(after, {x: 2.0, n: 3}, run_metadata=metadata) == 3.0  # reads no loop value
        assert capfd.readouterr().out.splitlines() == ["step 0", "step 1", "step 2"]
        assert [loop.executor for loop in metadata.loops] == ["compiled"]
        with pytest.raises(AssertionError, match="x must be positive") as failure:
            sess.run(after, {x: -1.0, n: 3})
    assert traceback.extract_tb(failure.tb)[-1].line == 'assert x > 0.0, "x must be positive"'
