"""`cond`: eager and traced, nested outputs, branch mismatches, shapes, captures, TensorArrays."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import autoloop as tf

from .helpers import to_numpy

Point = collections.namedtuple("Point", "x, y")


@pytest.mark.parametrize("pred, expected", [(True, 10), (False, -3)])
def test_picks_the_branch(mode, pred, expected):
    def choose(p, x):
        return tf.cond(p, lambda: x * 2, lambda: x - 8)

    assert mode(choose, tf.constant(pred), tf.constant(5)).numpy() == expected


def test_pred_computed_from_inputs(mode):
    def relu(x):
        return tf.cond(x[0] > 0.0, lambda: x, lambda: x * 0.0)

    np.testing.assert_array_equal(mode(relu, tf.constant([2.0, 1.0])).numpy(), [2.0, 1.0])
    np.testing.assert_array_equal(mode(relu, tf.constant([-2.0, 1.0])).numpy(), [0.0, 0.0])


@pytest.mark.parametrize("pred", [True, False])
def test_nested_structures(mode, pred):
    def choose(p, a, b):
        return tf.cond(p, lambda: (a, {"k": [b, Point(a, b)]}), lambda: (b, {"k": [a, Point(b, a)]}))

    result = mode(choose, tf.constant(pred), tf.constant(1), tf.constant(2))
    assert isinstance(result, tuple) and isinstance(result[1]["k"], list) and isinstance(result[1]["k"][1], Point)
    first, second = (1, 2) if pred else (2, 1)
    assert to_numpy(result) == (first, {"k": [second, Point(first, second)]})


def test_only_the_chosen_branch_runs_eagerly_and_both_are_traced_once(mode):
    calls = collections.Counter()

    def branch(name, value):
        def fn():
            calls[name] += 1
            return value
        return fn

    def choose(p, x):
        return tf.cond(p, branch("true", x + 1), branch("false", x - 1))

    assert mode(choose, tf.constant(True), tf.constant(0)).numpy() == 1
    assert calls == ({"true": 1, "false": 1} if mode.traced else {"true": 1})


# -- mismatches ---------------------------------------------------------------------------
def test_mismatched_structure_is_a_type_error(mode):
    def choose(p, x):
        return tf.cond(p, lambda: (x, x), lambda: x)

    if not mode.traced:
        # Eagerly only the chosen branch runs, so there is nothing to compare (as in TensorFlow).
        assert len(mode(choose, tf.constant(True), tf.constant(1))) == 2
        return
    with pytest.raises(TypeError, match="same nested structure"):
        mode(choose, tf.constant(True), tf.constant(1))


def test_mismatched_dict_keys_is_a_type_error(mode):
    if not mode.traced:
        pytest.skip("only the chosen branch runs eagerly")

    def choose(p, x):
        return tf.cond(p, lambda: {"a": x}, lambda: {"b": x})

    with pytest.raises(TypeError, match="same nested structure"):
        mode(choose, tf.constant(True), tf.constant(1))


def test_mismatched_dtype_is_a_type_error_naming_both(mode):
    if not mode.traced:
        pytest.skip("only the chosen branch runs eagerly")

    def choose(p, x):
        return tf.cond(p, lambda: (x, x), lambda: (x, tf.cast(x, tf.float32)))

    with pytest.raises(TypeError) as info:
        mode(choose, tf.constant(True), tf.constant(1))
    message = str(info.value)
    assert "int32" in message and "float32" in message and "[1]" in message and "cast" in message


def test_none_in_one_branch_only_is_a_type_error(mode):
    if not mode.traced:
        pytest.skip("only the chosen branch runs eagerly")

    def choose(p, x):
        return tf.cond(p, lambda: x, lambda: None)

    with pytest.raises(TypeError):
        mode(choose, tf.constant(True), tf.constant(1))


def test_tensor_array_versus_tensor_is_a_type_error(mode):
    if not mode.traced:
        pytest.skip("only the chosen branch runs eagerly")

    def choose(p, x):
        return tf.cond(p, lambda: tf.TensorArray(tf.int32, size=1).write(0, x), lambda: x)

    with pytest.raises(TypeError, match="TensorArray"):
        mode(choose, tf.constant(True), tf.constant(1))


@pytest.mark.parametrize("pred", [tf.constant(1), tf.constant([True, False])])
def test_pred_must_be_a_boolean_scalar(mode, pred):
    def choose(p, x):
        return tf.cond(p, lambda: x, lambda: x)

    with pytest.raises(TypeError, match="boolean scalar"):
        mode(choose, pred, tf.constant(1))


def test_branches_must_be_callable(mode):
    def choose(p, x):
        return tf.cond(p, x, lambda: x)

    with pytest.raises(TypeError, match="true_fn"):
        mode(choose, tf.constant(True), tf.constant(1))


# -- shapes ---------------------------------------------------------------------------
@pytest.mark.parametrize("pred, rows", [(True, 2), (False, 4)])
def test_differing_shapes_give_the_most_specific_compatible_shape(mode, pred, rows):
    def choose(p, m):
        return tf.cond(p, lambda: m, lambda: tf.concat([m, m], 0))

    result = mode(choose, tf.constant(pred), tf.constant(np.ones((2, 3), np.float32)))
    assert result.numpy().shape == (rows, 3)
    if mode.traced:
        assert mode.concrete.outputs[0].shape == tf.TensorShape([None, 3])


def test_differing_ranks_give_an_unknown_shape(mode):
    def choose(p, x):
        return tf.cond(p, lambda: x, lambda: tf.concat([tf.constant([0]), tf.constant([1, 2])], 0) + x)

    assert mode(choose, tf.constant(True), tf.constant(4)).numpy() == 4
    np.testing.assert_array_equal(mode(choose, tf.constant(False), tf.constant(4)).numpy(), [4, 5, 6])
    if mode.traced:
        assert mode.concrete.outputs[0].shape == tf.TensorShape(None)


def test_equal_shapes_stay_fully_defined(mode):
    def choose(p, m):
        return tf.cond(p, lambda: m * 2.0, lambda: m + 1.0)

    mode(choose, tf.constant(True), tf.constant(np.ones((2, 3), np.float32)))
    if mode.traced:
        assert mode.concrete.outputs[0].shape == tf.TensorShape([2, 3])


# -- captures ---------------------------------------------------------------------------
def test_branches_capture_outer_values(mode):
    def choose(p, a, b, c):
        total = a + b
        return tf.cond(p, lambda: total * c, lambda: total - c + a)

    assert mode(choose, tf.constant(True), tf.constant(1), tf.constant(2), tf.constant(10)).numpy() == 30
    assert mode(choose, tf.constant(False), tf.constant(1), tf.constant(2), tf.constant(10)).numpy() == -6


def test_branch_returns_an_outer_value_unchanged(mode):
    def choose(p, a, b):
        return tf.cond(p, lambda: a, lambda: b)

    assert mode(choose, tf.constant(False), tf.constant(1), tf.constant(2)).numpy() == 2


def test_branches_return_constants_made_outside_and_inside(mode):
    outside = tf.constant(7)

    def choose(p):
        return tf.cond(p, lambda: outside, lambda: tf.constant(9))

    assert mode(choose, tf.constant(True)).numpy() == 7
    assert mode(choose, tf.constant(False)).numpy() == 9


def test_nested_conds(mode):
    def sign(x):
        return tf.cond(x > 0, lambda: tf.constant(1), lambda: tf.cond(x < 0, lambda: tf.constant(-1),
                                                                           lambda: tf.constant(0)))

    assert [mode(sign, tf.constant(v)).numpy() for v in (5, -5, 0)] == [1, -1, 0]


def test_inner_cond_captures_through_the_outer_branch(mode):
    def f(p, q, x, y):
        return tf.cond(p, lambda: tf.cond(q, lambda: x + y, lambda: x - y), lambda: y)

    args = tf.constant(True), tf.constant(False), tf.constant(10), tf.constant(3)
    assert mode(f, *args).numpy() == 7


# -- TensorArrays in branches ---------------------------------------------------------
@pytest.mark.parametrize("pred, expected", [(True, [1.0, 0.0]), (False, [0.0, 2.0])])
def test_branches_write_a_tensor_array(mode, pred, expected):
    def choose(p, x):
        ta = tf.TensorArray(tf.float32, size=2, element_shape=[])
        ta = tf.cond(p, lambda: ta.write(0, x), lambda: ta.write(1, x * 2.0))
        return ta.stack()

    assert mode(choose, tf.constant(pred), tf.constant(1.0)).numpy().tolist() == expected


def test_branches_return_tensor_arrays_and_tensors_together(mode):
    def choose(p, x):
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        ta, n = tf.cond(p, lambda: (ta.write(0, x).write(1, x), tf.constant(2)), lambda: (ta.write(0, x), tf.constant(1)))
        return ta.stack(), n, ta.size()

    stacked, n, size = mode(choose, tf.constant(True), tf.constant(4))
    assert stacked.numpy().tolist() == [4, 4] and n.numpy() == 2 and size.numpy() == 2
    stacked, n, size = mode(choose, tf.constant(False), tf.constant(4))
    assert stacked.numpy().tolist() == [4] and n.numpy() == 1 and size.numpy() == 1


def test_tensor_array_dtype_mismatch_between_branches_is_a_type_error(mode):
    if not mode.traced:
        pytest.skip("only the chosen branch runs eagerly")

    def choose(p, x):
        return tf.cond(p, lambda: tf.TensorArray(tf.int32, size=1), lambda: tf.TensorArray(tf.float32, size=1))

    with pytest.raises(TypeError, match="int32.*float32"):
        mode(choose, tf.constant(True), tf.constant(1))


def test_cond_inside_a_loop_writes_a_tensor_array(mode):
    def evens_and_odds(n):
        ta = tf.TensorArray(tf.int32, size=n)

        def body(i, ta):
            ta = tf.cond(tf.equal(i % 2, 0), lambda: ta.write(i, i * 10), lambda: ta.write(i, -i))
            return i + 1, ta
        return tf.while_loop(lambda i, ta: i < n, body, [tf.constant(0), ta])[1].stack()

    assert mode(evens_and_odds, tf.constant(5)).numpy().tolist() == [0, -1, 20, -3, 40]


def test_outer_value_read_twice_two_levels_down(mode):
    """A value of the function, used twice in a branch of a branch, is captured once per level."""
    def f(p, a):
        return tf.cond(p, lambda: a, lambda: tf.cond(p, lambda: a, lambda: a * a + a))

    assert mode(f, tf.constant(False), tf.constant(3)).numpy() == 12
    assert mode(f, tf.constant(True), tf.constant(3)).numpy() == 3
