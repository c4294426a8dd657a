"""TF1 training through a while_loop: gradients of a loop over variables read before it, in a Session.

Expected numbers are TensorFlow 2.21's for the same program. Each test below the first pins one bug
that program met: a loop gradient's initial adjoint of a less specific shape than the loop variable,
a multi-element constant in a loop body read by the backward pass, and the effect chain a gradient
rewrite put on a TF1 graph's top level (which re-ran a variable's initializer on every Session.run).
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
import autoloop.compat.v1 as tf

XS = np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 1.0]], np.float32)
YS = np.array([0.5, -0.3, 0.2], np.float32)


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_an_rnn_like_loop_trains_as_in_tensorflow(graph):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    with tf.variable_scope("model"):
        weights = tf.get_variable("W", [2, 1], initializer=tf.constant_initializer([[0.1], [-0.2]]))
        bias = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    w_read, b_read = weights.read_value(), bias.read_value()

    def body(i, h):
        return i + 1, tf.tanh(tf.matmul(h, w_read) + b_read) * tf.ones([1, 2])
    _, h = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), x])
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(h, axis=1) - y))
    optimizer = tf.train.AdamOptimizer(0.05)
    clipped = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in optimizer.compute_gradients(loss)]
    train = optimizer.apply_gradients(clipped, global_step=tf.train.get_or_create_global_step())
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(30):
            losses.append(sess.run([loss, train], {x: XS, y: YS})[0])
        assert [round(float(losses[k]), 5) for k in (0, 10, 20)] == [0.13014, 0.11152, 0.10983]
        np.testing.assert_allclose(sess.run(weights).ravel(), [0.0975, -0.1001], atol=1e-4)
        np.testing.assert_allclose(sess.run(bias), [0.0704], atol=1e-4)
        assert sess.run(tf.train.get_global_step()) == 30


def test_assignments_persist_after_a_gradient_through_a_loop(graph):
    weights = tf.get_variable("W", [2, 1], initializer=tf.constant_initializer([[0.1], [-0.2]]))
    w_read = weights.read_value()
    _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * w_read), [0, tf.constant([[1.0], [2.0]])])
    tf.gradients(tf.reduce_sum(h), [w_read])  # adds stacks to the loop: it has effects now
    step = weights.assign_sub([[0.01], [0.01]])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        sess.run(step)
        np.testing.assert_allclose(sess.run(weights).ravel(), [0.08, -0.22])  # the initializer ran once


def test_a_loop_gradient_reads_a_multi_element_constant_of_the_body():
    @al.function
    def f(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            h = x
            for _ in al.range(3):
                h = al.tanh(h) * al.ones([1, 2])
            y = al.reduce_sum(h)
        return tape.gradient(y, x)
    x = np.array([[0.5, -1.0]], np.float32)
    stages = [x]
    for _ in range(3):
        stages.append(np.tanh(stages[-1]))
    expected = np.ones_like(x)
    for stage in reversed(stages[:-1]):  # the chain rule by hand
        expected = expected * (1 - np.tanh(stage) ** 2)
    np.testing.assert_allclose(f(x).numpy(), expected, rtol=1e-5)


def test_a_loop_gradient_keeps_the_loop_variables_static_shape():
    @al.function(input_signature=[al.TensorSpec([None, 2], al.float32)])
    def f(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            i, h = al.constant(0), x
            while i < 2:
                h = h * 2.0
                i += 1
            y = al.reduce_sum(al.reduce_sum(h, axis=1))  # its gradient has shape (None, None)
        return tape.gradient(y, x)
    assert f(XS).numpy().tolist() == np.full_like(XS, 4.0).tolist()
