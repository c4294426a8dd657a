"""compat.v1 for TF1 loop code: every autoloop name, TF1's spellings, optimizers, and TF's node names.

Expected values were checked against TensorFlow 2.21's ``tf.compat.v1``.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
import autoloop.compat.v1 as tf


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(*fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches), feed_dict=feed_dict)


# -- the names --------------------------------------------------------------------------------
def test_every_autoloop_name_is_in_compat_v1():
    from autoloop.compat.v1 import _NOT_TF
    names = [name for name in dir(al) if not name.startswith("_") and name not in _NOT_TF]
    assert "while_loop" in names and not [name for name in names if not hasattr(tf, name)]
    assert tf.visualize is al.visualize and tf.ConcreteFunction is al.ConcreteFunction  # looked up in autoloop
    with pytest.raises(AttributeError, match="no attribute 'ops'"):
        tf.ops  # noqa: B018 - autoloop's internals are not TensorFlow names
    with pytest.raises(AttributeError, match="no strings module"):
        tf.strings  # noqa: B018 - what autoloop leaves out says so here too


@pytest.mark.parametrize("name", [
    "function", "autograph", "gradients", "nn", "math", "random", "linalg", "train", "sparse", "random_uniform",
    "random_normal", "truncated_normal", "to_float", "to_int32", "to_int64", "to_double", "log", "div", "mod",
    "arg_max", "arg_min", "Print", "assign", "assign_add", "assign_sub", "global_variables", "trainable_variables",
    "variable_scope", "name_scope", "placeholder_with_default", "initializers", "constant_initializer",
    "random_normal_initializer", "random_uniform_initializer", "truncated_normal_initializer", "set_random_seed",
    "GradientTape", "TensorSpec", "scan", "while_loop", "cond"])
def test_tf1_spellings_exist(name):
    assert hasattr(tf, name)


def test_the_tf1_namespaces():
    assert tf.function is al.function and tf.autograph is al.autograph and tf.math is al.math
    assert tf.nn.relu is al.nn.relu and tf.train.GradientDescentOptimizer and tf.train.AdamOptimizer
    assert tf.random.set_random_seed is al.random.set_seed and tf.random.uniform is al.random.uniform
    assert tf.initializers.zeros is tf.zeros_initializer and tf.initializers.random_normal is \
        tf.random_normal_initializer


def test_tf1_spellings_compute_what_tf1_does():
    x = al.constant([[1.0, 2.0], [3.0, 4.0]])
    assert tf.reduce_sum(x, reduction_indices=[1], keep_dims=True).numpy().tolist() == [[3.0], [7.0]]
    assert tf.reduce_max(x, axis=0, keep_dims=False).numpy().tolist() == [3.0, 4.0]
    assert tf.div(7, 2).numpy() == 3 and tf.div(7.0, 2.0).numpy() == 3.5 and tf.div(-7, 2).numpy() == -4
    assert tf.to_float(al.constant(3)).dtype is al.float32 and tf.to_int32(al.constant(2.7)).numpy() == 2
    assert tf.to_int64(al.constant(1)).dtype is al.int64 and tf.to_double(al.constant(1)).dtype is al.float64
    assert tf.arg_max(x, 1).numpy().tolist() == [1, 1] and tf.arg_min(x, 0).dtype is al.int64
    with pytest.raises(ValueError, match="give axis or reduction_indices"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)


def test_random_spellings_follow_the_seed_rule():
    tf.set_random_seed(3)
    first = [tf.random_uniform([3], seed=1).numpy(), tf.random_normal([3], seed=2).numpy()]
    tf.set_random_seed(3)
    assert np.array_equal(first[0], al.random.uniform([3], seed=1).numpy())
    assert np.array_equal(first[1], al.random.normal([3], seed=2).numpy())
    truncated = tf.truncated_normal([2000], mean=1.0, stddev=0.5, seed=4).numpy()
    assert truncated.dtype == np.float32 and np.all(np.abs(truncated - 1.0) <= 1.0)
    assert 0.3 < truncated.std() < 0.5  # narrower than the untruncated 0.5


def test_variables_assign_and_initializers(graph):
    w = tf.get_variable("w", shape=[2], initializer=tf.random_normal_initializer(stddev=0.0, mean=2.0, seed=1))
    b = tf.get_variable("b", shape=[2], initializer=tf.initializers.constant(3.0), trainable=False)
    t = tf.get_variable("t", shape=[3], initializer=tf.truncated_normal_initializer(stddev=1.0, seed=2))
    u = tf.get_variable("u", shape=[3], initializer=tf.random_uniform_initializer(-1.0, 1.0, seed=2))
    step = tf.assign(w, tf.assign_add(b, [1.0, 1.0]))
    assert [v.name for v in tf.trainable_variables()] == ["w:0", "t:0", "u:0"]
    assert [v.name for v in tf.global_variables()] == ["w:0", "b:0", "t:0", "u:0"]
    first_w, t_value, u_value, updated = _run(w, t, u, step)
    assert first_w.tolist() == [2.0, 2.0] and updated.tolist() == [4.0, 4.0]
    assert np.all(np.abs(t_value) <= 2) and np.all((-1 <= u_value) & (u_value < 1))


def test_placeholder_with_default_is_fed_or_not(graph):
    x = tf.placeholder_with_default(al.constant([1.0, 2.0]), shape=[None])
    doubled = x * 2
    assert x.shape.as_list() == [None] and x.name == "PlaceholderWithDefault:0"
    with tf.Session() as sess:
        assert sess.run(doubled).tolist() == [2.0, 4.0]
        assert sess.run(doubled, feed_dict={x: [5.0, 6.0, 7.0]}).tolist() == [10.0, 12.0, 14.0]
    with pytest.raises(ValueError, match="does not fit the shape"):
        tf.placeholder_with_default(al.constant([1.0, 2.0]), shape=[3])


# -- optimizers -------------------------------------------------------------------------------
# Three steps on loss = sum((w - [3, -1])^2) from w = [1, 1], as TensorFlow 2.21 computes them.
@pytest.mark.parametrize("make, expected", [
    (lambda: tf.train.GradientDescentOptimizer(0.1), [1.9760001, 0.02399999]),
    (lambda: tf.train.MomentumOptimizer(0.1, 0.9), [2.876, -0.876]),
    (lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True), [3.2167041, -1.2167039]),
    (lambda: tf.train.AdamOptimizer(0.1), [1.2993755, 0.70062447]),
])
def test_optimizers_match_tensorflow(graph, make, expected):
    w = tf.get_variable("w", shape=[2], initializer=tf.constant_initializer(1.0))
    loss = tf.reduce_sum(tf.square(w - [3.0, -1.0]))
    optimizer = make()
    grads_and_vars = optimizer.compute_gradients(loss)
    assert [var for _, var in grads_and_vars] == [w]
    step = optimizer.apply_gradients(grads_and_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(grads_and_vars[0][0]).tolist() == [-4.0, 4.0]
        for _ in range(3):
            assert sess.run(step) is None
        np.testing.assert_allclose(sess.run(w), expected, rtol=1e-6)


def test_minimize_counts_the_global_step_and_skips_variables_the_loss_does_not_read(graph):
    w = tf.get_variable("w", shape=[], initializer=tf.zeros_initializer())
    unused = tf.get_variable("unused", shape=[], initializer=tf.ones_initializer())
    step = tf.get_variable("step", shape=[], dtype=tf.int32, initializer=tf.zeros_initializer(), trainable=False)
    loss = tf.square(w - 3.0) + tf.square(w - 3.0)  # two reads of w: their gradients add up
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run([w, unused, step]) == [pytest.approx(1.2), 1.0, 1]


def test_gradients_with_respect_to_variables_and_tensors(graph):
    w = tf.get_variable("w", shape=[], initializer=tf.constant_initializer(2.0))
    x = tf.constant(3.0)
    y = w * w * x
    grad_w, grad_x, none = tf.gradients(y, [w, x, tf.constant(1.0)])
    assert none is None
    assert _run(grad_w, grad_x) == [12.0, 4.0]
    assert _run(tf.gradients(y, [tf.constant(1.0)], unconnected_gradients="zero")[0]) == [0.0]


def test_a_gradient_through_a_read_in_a_loop_body_is_refused(graph):
    w = tf.get_variable("w", shape=[], initializer=tf.constant_initializer(2.0))
    result = tf.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc + w), [0, 0.0])[1]
    with pytest.raises(NotImplementedError, match="variable 'w:0' through its reads inside While"):
        tf.train.GradientDescentOptimizer(0.1).minimize(result)


def test_optimizer_errors(graph):
    with pytest.raises(ValueError, match="no variables to optimize"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0))
    w = tf.get_variable("w", shape=[], initializer=tf.zeros_initializer())
    with pytest.raises(ValueError, match="no gradients for any of the variables"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0), var_list=[w])


# -- node names as TensorFlow makes them ---------------------------------------------------------
def test_node_names_follow_tensorflow(graph):
    c = tf.constant(1.0, name="c")
    d, e = tf.constant(2.0), tf.constant(3.0)
    made = [c, d, e, c + d, tf.add(c, d), c * d, tf.multiply(c, d), c - d, c / d, c // d, c % d, c ** d, -c,
            tf.maximum(c, d), tf.reduce_sum(c), tf.identity(c), tf.add(c, d, name="add")]
    assert [t.name for t in made] == [
        "c:0", "Const:0", "Const_1:0", "add:0", "Add_1:0", "mul:0", "Mul_1:0", "sub:0", "truediv:0",
        "floordiv:0", "mod:0", "pow:0", "Neg:0", "Maximum:0", "Sum:0", "Identity:0", "add_2:0"]
    assert c.op.name == "c" and tf.placeholder(tf.float32, name="x").name == "x:0"
    stacked = tf.stack([c, d])
    functions = [tf.divide(c, d), stacked, tf.concat([stacked, stacked], 0), tf.zeros([2]), tf.ones([2]),
                 tf.zeros_like(c), tf.ones_like(c), tf.range(3), tf.transpose([[c]]), tf.one_hot([0], 2),
                 tf.clip_by_value(c, 0.0, 1.0), tf.random_uniform([2]), tf.random_normal([2]), tf.truncated_normal([2]),
                 tf.math.segment_sum([c, d], [0, 0]), tf.math.unsorted_segment_max([c, d], [0, 0], 1)]
    assert [t.name for t in functions] == [  # TensorFlow 2.21 names most of these so too
        "truediv_1:0", "stack:0", "concat:0", "zeros:0", "ones:0", "zeros_like:0", "ones_like:0", "range:0",
        "transpose:0", "one_hot:0", "clip_by_value:0", "random_uniform:0", "random_normal:0", "truncated_normal:0",
        "SegmentSum:0", "UnsortedSegmentMax:0"]


def test_name_scopes_follow_tensorflow(graph):
    with tf.name_scope("outer"):
        with tf.name_scope("inner") as first:
            x = tf.constant(1, name="c")
        with tf.name_scope("inner") as second:
            y, y2 = tf.constant(1, name="c"), tf.constant(1, name="c")
        with tf.name_scope("inner/") as absolute:
            z = tf.constant(1)
        with tf.name_scope("") as root:
            w = tf.constant(1)
        with tf.name_scope(None):  # TF1's signature: no name and no default resets too
            w2 = tf.constant(1)
        with tf.name_scope(None, default_name="default") as default:
            pass
    assert (first, second, absolute, root, default) == ("outer/inner/", "outer/inner_1/", "inner/", "",
                                                         "outer/default/")
    assert [t.name for t in (x, y, y2, z, w, w2)] == [
        "outer/inner/c:0", "outer/inner_1/c:0", "outer/inner_1/c_1:0", "inner/Const:0", "Const:0", "Const_1:0"]
    tf.constant(1, name="foo")
    with tf.name_scope("foo") as taken, tf.name_scope("Foo") as other_case:
        assert (taken, other_case) == ("foo_1/", "foo_1/Foo/")


def test_name_scope_in_a_traced_function_and_eagerly():
    @al.function(autograph=False)
    def f(x):
        with al.name_scope("a"):
            with al.name_scope("") as root:
                y = al.identity(x, name="y")
        with al.name_scope("a") as again:
            z = x + 1.0
        return y, z, root, again

    concrete = f.get_concrete_function(np.ones([2], np.float32))
    _, _, root, again = concrete._structured_outputs
    names = [node.name for node in concrete.graph.nodes]
    assert (root, again) == ("", "a_1/") and "y" in names and "a_1/add" in names
    with al.name_scope("") as eager_root, al.name_scope("e/") as eager_absolute:
        assert (eager_root, eager_absolute) == ("", "e/")


def test_a_python_list_beside_a_python_number_takes_its_dtype():
    assert tf.maximum(0.0, [1, -1]).numpy().tolist() == [1.0, 0.0]
    assert al.maximum(0.0, [1, -1]).dtype is al.float32
    assert al.add(1.5, 2 ** 40).dtype is al.float32
    with pytest.raises(TypeError):
        al.add(1, 2.5)  # the first operand is an int32: 2.5 is none (TensorFlow refuses it too)


def test_variable_scope_names_ops_and_variables_as_tensorflow(graph):
    with tf.variable_scope("vs"):
        v = tf.get_variable("v", shape=[], initializer=tf.zeros_initializer())
        k = tf.constant(1)
        with tf.name_scope("inner"):
            w = tf.get_variable("w", shape=[], initializer=tf.ones_initializer())  # name scopes do not apply
    with tf.variable_scope("vs", reuse=True):
        again = tf.constant(1)
        assert tf.get_variable("v") is v
    assert (v.name, v.op.name, v.initializer.name, w.name) == ("vs/v:0", "vs/v", "vs/v/Assign", "vs/w:0")
    assert (k.name, again.name) == ("vs/Const:0", "vs_1/Const:0")
    assert _run(v, w) == [0.0, 1.0]


def test_collections_global_step_and_other_training_names(graph):
    w = tf.get_variable("w", shape=[], initializer=tf.zeros_initializer())
    step = tf.train.get_or_create_global_step()
    assert tf.train.get_or_create_global_step() is step and tf.train.get_global_step() is step
    assert step.dtype is al.int64 and not step.trainable
    assert tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == [w]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == [w, step] and tf.local_variables() == []
    with pytest.raises(NotImplementedError, match="keeps only the GraphKeys"):
        tf.get_collection("summaries")
    train = tf.train.GradientDescentOptimizer(0.5).minimize(tf.square(w - 1.0), global_step=step)
    with tf.Session() as sess:
        sess.run([tf.initialize_all_variables(), tf.local_variables_initializer(), tf.tables_initializer()])
        sess.run(train)
        assert sess.run([w, step]) == [1.0, 1]
        assert sess.run([tf.ceil(1.5), tf.floormod(7, 3)]) == [2.0, 1]


def test_print_writes_booleans_as_tensorflow_does(graph, capfd):
    printed = tf.Print(tf.constant(1), [tf.constant([True, False]), tf.constant([1.5, 2.0])], "m: ")
    with tf.Session() as sess:
        sess.run(printed)
    assert capfd.readouterr().err == "m: [1 0][1.5 2]\n"  # TensorFlow 2.21's text


def test_float64_variables_a_fed_learning_rate_and_gather_match_tensorflow(graph):
    w = tf.get_variable("w", shape=[3], dtype=tf.float64, initializer=tf.constant_initializer(1.0))
    loss = tf.reduce_sum(tf.gather(w, [0, 2, 2]) * [1.0, 2.0, 3.0])
    rate = tf.placeholder(tf.float32, shape=[])
    descend = tf.train.GradientDescentOptimizer(rate).minimize(loss)
    adam = tf.train.AdamOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(descend, feed_dict={rate: 0.1})
        assert sess.run(w).tolist() == [0.8999999985098839, 1.0, 0.4999999925494194]  # TensorFlow 2.21's bits
        sess.run(adam)
        assert sess.run(w).tolist() == [0.8000000286427382, 1.0, 0.39999999738389896]


def test_grad_loss_weights_the_loss(graph):
    w = tf.get_variable("w", shape=[2], initializer=tf.constant_initializer(1.0))
    loss = w * w  # not a scalar: grad_loss says how much each entry counts
    (grad, _), = tf.train.GradientDescentOptimizer(0.1).compute_gradients(loss, grad_loss=tf.constant([1.0, 3.0]))
    assert _run(grad) == [pytest.approx([2.0, 6.0])]


def test_two_momentum_optimizers_on_one_variable_keep_their_own_slots(graph):
    w = tf.get_variable("w", shape=[], initializer=tf.zeros_initializer())
    loss = tf.square(w - 1.0)
    first, second = (tf.train.MomentumOptimizer(0.1, 0.5).minimize(loss) for _ in range(2))
    assert [v.name for v in tf.global_variables()] == ["w:0", "w/Momentum:0", "w/Momentum_1:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(first)
        sess.run(second)
        assert sess.run(w) == pytest.approx(0.2 + 0.16)  # the second step from its own zero accumulator
