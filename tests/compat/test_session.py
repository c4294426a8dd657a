"""TF1 graphs in a Session: fetches, feeds, the default session and graph, Print, control flow.

Seed 000's non-strict example, seed 001's blog example and seed 003's
examples run as samples (tests/test_samples.py); here are the rules behind
them, each checked on its own.
"""

from __future__ import annotations

import collections
import threading

import numpy as np
import pytest

import autoloop as al
import autoloop.compat.v1 as tf
from autoloop.errors import InvalidArgumentError
from autoloop.ir import context


@pytest.fixture
def graph():
    """A fresh graph, default for the test."""
    with tf.Graph().as_default() as g:
        yield g


def _lines(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


# -- seed 000: non-strict iterations, Print ------------------------------------------------------
def _seed_loop():
    n = 10
    c = lambda i, x: i < n  # noqa: E731
    b = lambda i, x: (  # noqa: E731
        tf.Print(i + 1, [i], "Updating i based on i == "),
        tf.Print(x + i, [i], "Updating x based on i == "))
    x = tf.zeros([1000, 100], dtype=tf.int32)
    return tf.while_loop(c, b, (tf.constant(0), x))


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_fetching_the_counter_does_not_run_x_and_fetching_x_runs_both(graph, capfd, parallel_iterations):
    counter_out, x_out = _seed_loop()
    with tf.Session() as sess:
        assert sess.run(counter_out) == 10
        err = capfd.readouterr().err
        assert _lines(err, "Updating i") == [f"Updating i based on i == [{k}]" for k in range(10)]
        assert _lines(err, "Updating x") == []
        out = sess.run(x_out)
        assert out.shape == (1000, 100) and out.dtype == np.int32 and (out == 45).all()
        err = capfd.readouterr().err
        assert sorted(_lines(err, "Updating x")) == sorted(f"Updating x based on i == [{k}]" for k in range(10))
        assert len(_lines(err, "Updating i")) == 10  # once per iteration, as x reads i


def test_a_print_nothing_needs_never_runs_and_one_in_an_untaken_branch_neither(graph, capfd):
    x = tf.placeholder(tf.int32, shape=[])
    tf.Print(x, [x], "never needed: ")
    picked = tf.cond(x > 0, lambda: tf.Print(x * 2, [x], "positive: "), lambda: tf.Print(-x, [x], "not positive: "))
    with tf.Session() as sess:
        assert sess.run(picked, feed_dict={x: 3}) == 6
        assert sess.run(picked, feed_dict={x: -4}) == 4
    assert capfd.readouterr().err == "positive: [3]\nnot positive: [-4]\n"


def test_print_summarizes_tensors_like_tf1(graph, capfd):
    shown = tf.Print(tf.constant(1), [tf.range(5), tf.zeros([4, 2], tf.int32), tf.constant(7)], "values: ",
                     summarize=3)
    with tf.Session() as sess:
        assert sess.run(shown) == 1
    assert capfd.readouterr().err == "values: [0 1 2...][[0 0][0...]...][7]\n"


def test_eager_print_prints_at_once(capfd):
    assert tf.Print(al.constant(4), [al.constant(2)], "now: ").numpy() == 4
    assert capfd.readouterr().err == "now: [2]\n"


# -- fetches and feeds -------------------------------------------------------------------------------
def test_fetches_of_any_nesting_come_back_in_their_structure(graph):
    Pair = collections.namedtuple("Pair", "a b")
    x = tf.constant([1, 2])
    init = tf.no_op()
    result = tf.Session().run({"pair": Pair(x, [x * 2, (x + 1,)]), "op": init, "single": [x[0]]})
    assert set(result) == {"pair", "op", "single"} and result["op"] is None
    pair = result["pair"]
    assert isinstance(pair, Pair) and isinstance(pair.b, list) and isinstance(pair.b[1], tuple)
    np.testing.assert_array_equal(pair.b[1][0], [2, 3])
    assert result["single"] == [1] and type(result["single"][0]) is np.int32


def test_placeholders_are_fed_and_checked(graph):
    x = tf.placeholder(tf.float32, shape=[None, 2], name="x")
    y = x * 2.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, feed_dict={x: [[1, 2]]}), [[2.0, 4.0]])
        np.testing.assert_array_equal(sess.run(y, {"x:0": np.ones((3, 2))}), np.full((3, 2), 2.0, np.float32))
        with pytest.raises(InvalidArgumentError, match=r"placeholder 'x' \(float32, shape \(None, 2\)\) needs a "
                                                       r"value: pass it in feed_dict"):
            sess.run(y)
        with pytest.raises(InvalidArgumentError, match=r"cannot feed a value of shape \(3,\) to the placeholder "
                                                       r"'x', which has shape \(None, 2\)"):
            sess.run(y, feed_dict={x: [1.0, 2.0, 3.0]})
    n = tf.placeholder(tf.int32)
    with tf.Session() as sess:
        assert sess.run(n + 1, feed_dict={n: 4}) == 5
        with pytest.raises(TypeError, match=r"cannot feed a float64 value to the placeholder 'Placeholder', which "
                                            r"is int32"):
            sess.run(n + 1, feed_dict={n: 1.5})
        with pytest.raises(ValueError, match="out of range for int32"):
            sess.run(n, feed_dict={n: 2 ** 40})


def test_feeding_a_tensor_replaces_what_computes_it(graph, capfd):
    x = tf.constant(3)
    y = tf.Print(x * 2, [x], "computed: ")
    z = y + 1
    with tf.Session() as sess:
        assert sess.run(z, feed_dict={y: 100}) == 101
        assert sess.run([y, z]) == [6, 7]
    assert capfd.readouterr().err == "computed: [3]\n"


def test_bad_fetches_say_what_was_expected(graph):
    sess = tf.Session()
    with pytest.raises(TypeError, match="Fetch argument None has invalid type NoneType"):
        sess.run(None)
    with pytest.raises(TypeError, match="is an eager tensor"):
        sess.run(_eager_constant())
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1)
    with pytest.raises(ValueError, match="is not an element of this Session's graph"):
        sess.run(foreign)
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(tf.constant(1))


def _eager_constant():
    with context.eager():
        return al.constant(1)


def test_values_inside_a_loop_cannot_be_fetched(graph):
    inside = []

    def body(i):
        inside.append(i * 2)
        return i + 1

    tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    with pytest.raises(ValueError, match="inside a while_loop or cond body"):
        tf.Session().run(inside[0])


# -- the default session and graph ----------------------------------------------------------------------
def test_with_session_makes_it_the_default_for_eval_and_run(graph):
    x = tf.constant(5)
    init = tf.no_op()
    with pytest.raises(ValueError, match="no default autoloop.compat.v1.Session is registered"):
        x.eval()
    with tf.Session() as sess:
        assert tf.get_default_session() is sess
        assert x.eval() == 5 and (x * 2).eval(session=sess) == 10
        assert init.run() is None
        with tf.Session().as_default() as inner:
            assert tf.get_default_session() is inner
        assert tf.get_default_session() is sess
    assert tf.get_default_session() is None
    with pytest.raises(ValueError, match="Cannot run NoOp: no default Session"):
        init.run()


def test_ops_made_inside_a_session_block_join_its_graph():
    g = tf.Graph()
    with tf.Session(graph=g) as sess:
        assert tf.get_default_graph() is g
        y = tf.constant(2) * 21
        assert sess.run(y) == 42
    assert tf.get_default_graph() is not g
    assert not y.is_symbolic or y.op.graph is g.graph


def test_disable_eager_execution_builds_the_default_graph():
    try:
        tf.reset_default_graph()
        tf.disable_eager_execution()
        assert not al.executing_eagerly()
        x = tf.constant(1) + 1
        assert x.is_symbolic and x.op.graph is tf.get_default_graph().graph
        with tf.Session() as sess:
            assert sess.run(x) == 2
        tf.reset_default_graph()
        assert tf.get_default_graph().graph is not x.op.graph
        with pytest.raises(AssertionError, match="Do not use reset_default_graph"):
            with tf.Graph().as_default():
                tf.reset_default_graph()
    finally:
        tf.enable_eager_execution()
        tf.reset_default_graph()
    assert al.executing_eagerly() and not (al.constant(1) + 1).is_symbolic


def test_a_graph_lowers_again_after_ops_are_added_and_runs_from_several_threads(graph):
    x = tf.placeholder(tf.int32, shape=[])
    with tf.Session() as sess:
        assert sess.run(x * 2, {x: 4}) == 8
        doubled_plus_one = x * 2 + 1  # added after the first run
        assert sess.run(doubled_plus_one, {x: 4}) == 9
        loop = tf.while_loop(lambda i, t: i < x, lambda i, t: (i + 1, t + i), [tf.constant(0), tf.constant(0)])[1]
        results = {}

        def worker(k):
            results[k] = sess.run(loop, {x: k})

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == {k: sum(range(k)) for k in range(12)}


# -- control flow while building ----------------------------------------------------------------------
def test_while_loop_and_cond_call_their_functions_once_while_building(graph):
    calls = collections.Counter()

    def cond(i):
        calls["cond"] += 1
        return i < 10

    def body(i):
        calls["body"] += 1
        return tf.cond(i < 5, lambda: branch("true", i + 2), lambda: branch("false", i + 1))

    def branch(name, value):
        calls[name] += 1
        return value

    r = tf.while_loop(cond, body, [tf.constant(0)])
    assert dict(calls) == {"cond": 1, "body": 1, "true": 1, "false": 1}
    with tf.Session() as sess:
        assert sess.run(r) == 10 and sess.run(r) == 10
    assert dict(calls) == {"cond": 1, "body": 1, "true": 1, "false": 1}


def test_tf1_return_conventions(graph):
    single = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    same = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], return_same_structure=True)
    branch = tf.cond(tf.constant(True), lambda: [tf.constant(1)], lambda: [tf.constant(2)])
    strict = tf.cond(tf.constant(True), lambda: [tf.constant(1)], lambda: [tf.constant(2)], strict=True)
    with tf.Session() as sess:
        assert sess.run(single) == 3 and sess.run(same) == [3]
        assert sess.run(branch) == 1 and sess.run(strict) == [1]


def test_control_dependencies_order_ops_and_group_runs_them_all(graph, capfd):
    a = tf.Print(tf.constant(1), [], "a")
    b = tf.Print(tf.constant(2), [], "b")
    with tf.control_dependencies([a]):
        c = tf.Print(tf.constant(3), [], "c")
    both = tf.group(a, b)
    with tf.Session() as sess:
        assert sess.run(c) == 3
        assert capfd.readouterr().err == "a\nc\n"
        assert sess.run(both) is None
        assert sorted(capfd.readouterr().err.split()) == ["a", "b"]
    with pytest.raises(ValueError, match="belongs to graph"):
        def body(i):
            with tf.control_dependencies([a]):
                return i + 1
        tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])


def test_a_fed_value_fetched_beside_what_computes_it_keeps_the_fed_value(graph):
    x = tf.constant(3)
    y = x * 2
    with tf.control_dependencies([y]):
        z = tf.constant(1) + 1  # needs y's node to run
    with tf.Session() as sess:
        assert sess.run([y, z], feed_dict={y: 100}) == [100, 2]


def test_a_scan_runs_in_a_session_as_one_node(graph, capfd):
    xs = tf.placeholder(tf.float32, shape=[None, 2])

    def body(x, h):
        h = tf.Print(h * 0.5 + x, [x], "frame ")
        return tf.reduce_sum(h), h

    ys, final, lengths = al.scan(body=body, initial=tf.zeros([2]), xs=xs, ys=al.TensorSpec([], tf.float32))
    with tf.Session() as sess:
        got_ys, got_final, got_lengths = sess.run([ys, final, lengths], {xs: [[1, 0], [0, 1], [1, 1]]})
    np.testing.assert_allclose(got_ys, [1.0, 1.5, 2.75])
    np.testing.assert_allclose(got_final, [1.25, 1.5])
    assert got_lengths == 3
    assert capfd.readouterr().err == "frame [1 0]\nframe [0 1]\nframe [1 1]\n"
    assert "= Scan(" in str(graph.lowered())
