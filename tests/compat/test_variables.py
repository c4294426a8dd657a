"""TF1 variables: get_variable and scopes, initialisers, assignments, reads inside loops."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import autoloop as al
import autoloop.compat.v1 as tf
from autoloop.errors import FailedPreconditionError
from autoloop.ir.verify import verify
from autoloop.ops.dispatch import infer_node


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


@pytest.mark.parametrize("initializer, expected", [(tf.ones_initializer(), [14, 14]),
                                                   (tf.zeros_initializer(), [13, 14])])
def test_the_blog_example(graph, initializer, expected):
    i = tf.get_variable("i", dtype=tf.int32, shape=[], initializer=initializer)
    n = tf.constant(10)
    ii, nn = tf.while_loop(lambda a, n: a < n, lambda a, n: (a + 2, n), [i, n])
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        assert sess.run([ii + 3, nn + 4]) == expected


def test_reading_before_initialising_names_the_variable_and_the_line(graph):
    counter = tf.get_variable("counter", shape=[], dtype=tf.int32, initializer=tf.zeros_initializer())
    doubled = counter * 2; line = traceback.extract_stack()[-1].lineno  # noqa: E702 - the read's line
    with tf.Session() as sess:
        with pytest.raises(FailedPreconditionError, match=r"the variable 'counter' is read before it is "
                                                          r"initialised: run .*global_variables_initializer") as error:
            sess.run(doubled)
        assert traceback.extract_tb(error.value.__traceback__)[-1][:2] == (__file__, line)
        counter.initializer.run()
        assert sess.run(doubled) == 0
    with tf.Session() as other:  # each Session holds its own values
        with pytest.raises(FailedPreconditionError):
            other.run(counter)


def test_assignments_return_the_new_value_and_reads_see_them(graph):
    v = tf.get_variable("v", shape=[2], dtype=tf.float32, initializer=tf.constant_initializer(1.5))
    add, sub, put = v.assign_add([1.0, 2.0]), v.assign_sub([0.5, 0.5]), v.assign([7.0, 8.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(add), [2.5, 3.5])
        np.testing.assert_array_equal(sess.run(add), [3.5, 5.5])
        np.testing.assert_array_equal(sess.run(sub), [3.0, 5.0])
        np.testing.assert_array_equal(v.eval(), [3.0, 5.0])
        np.testing.assert_array_equal(sess.run(put), [7.0, 8.0])
        np.testing.assert_array_equal(sess.run(v), [7.0, 8.0])
        add.op.run()  # TF1's way to run an update for its effect
        np.testing.assert_array_equal(v.eval(), [8.0, 10.0])
    with pytest.raises(TypeError, match="cannot assign a int32 value to a float32 variable"):
        v.assign(al.constant([1, 2]))


@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
def test_variables_are_updated_and_read_in_loops_in_program_order(graph, parallel_iterations):
    v = tf.get_variable("v", shape=[], dtype=tf.int32, initializer=tf.zeros_initializer())
    w = tf.get_variable("w", shape=[], dtype=tf.int32, initializer=tf.zeros_initializer())

    def body(i, seen, also_seen):
        v.assign_add(1)  # an effect: the read below comes after it, and the next iteration after both
        with tf.control_dependencies([w.assign_add(i)]):
            current = w.read_value()
        return i + 1, seen + v, also_seen + current

    loop = tf.while_loop(lambda i, s, t: i < 5, body, [tf.constant(0)] * 3, parallel_iterations=parallel_iterations)
    verify(graph.graph, infer_node)  # the body's effects are chained; the top level needs no chain
    body_graph = next(n for n in graph.graph.nodes if n.op == "While").attrs["body"]
    reads_and_updates = [n for n in body_graph.nodes if "Variable" in n.op]
    assert all(n.control_inputs for n in reads_and_updates[1:])
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        assert sess.run(loop) == [5, 1 + 2 + 3 + 4 + 5, 0 + 1 + 3 + 6 + 10]
        assert sess.run([v, w]) == [5, 10]
        assert sess.run(loop) == [5, 6 + 7 + 8 + 9 + 10, 10 + 11 + 13 + 16 + 20]


def test_variable_scopes_name_variables_and_decide_reuse(graph):
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", shape=[2], initializer=tf.zeros_initializer())
        with tf.variable_scope("inner") as scope:
            b = tf.get_variable("b", shape=[], dtype=tf.int32)
    assert scope == "layer/inner" and (w.name, b.name) == ("layer/w:0", "layer/inner/b:0")
    with pytest.raises(ValueError, match="the variable 'layer/w' already exists"):
        with tf.variable_scope("layer"):
            tf.get_variable("w", shape=[2])
    with tf.variable_scope("layer", reuse=True):
        assert tf.get_variable("w") is w
        with pytest.raises(ValueError, match="'layer/other' does not exist"):
            tf.get_variable("other", shape=[])
    with tf.variable_scope("layer", reuse=tf.AUTO_REUSE):
        assert tf.get_variable("w") is w and tf.get_variable("new", shape=[]).name == "layer/new:0"
    assert [v.name for v in tf.global_variables()] == ["layer/w:0", "layer/inner/b:0", "layer/new:0"]


def test_default_initializers_and_variables_made_from_values(graph):
    weights = tf.get_variable("weights", shape=[30, 20])
    counts = tf.get_variable("counts", shape=[3], dtype=tf.int32)
    start = tf.Variable(np.array([1.0, 2.0]), name="start")
    with tf.Session() as sess:
        tf.variables_initializer([weights, counts, start]).run()
        values = sess.run(weights)
        limit = np.sqrt(6 / 50)
        assert values.dtype == np.float32 and np.abs(values).max() <= limit and values.std() > limit / 4
        np.testing.assert_array_equal(sess.run(counts), [0, 0, 0])
        np.testing.assert_array_equal(sess.run(start), [1.0, 2.0])
    assert start.dtype is tf.float64


def test_variables_belong_at_the_top_level_of_a_graph(graph):
    def body(i):
        tf.get_variable("inside", shape=[])
        return i + 1

    with pytest.raises(ValueError, match="make variables at the top level"):
        tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])


def test_eager_variables_hold_their_value():
    v = tf.get_variable("eager_v", shape=[], dtype=tf.int32, initializer=tf.ones_initializer())
    assert int(v.numpy()) == 1
    assert int(v.assign_add(2)) == 3 and int(v + 1) == 4
    assert tf.global_variables_initializer() is None
