"""The compiled executor: run-time errors point at the user's line, generated code, checked mode."""

from __future__ import annotations

import ast
import traceback

import numpy as np
import pytest

import autoloop as tf
from autoloop.errors import InvalidArgumentError
from autoloop.execute import CompiledGraph

from .helpers import run_checked

HERE = __file__


def _line_of(fn, offset: int) -> int:
    """The line `offset` lines below the `def` of `fn`."""
    return fn.__code__.co_firstlineno + offset


def _assert_points_at(error: BaseException, op: str, line: int) -> None:
    message = str(error)
    assert op in message, message
    assert f"{HERE}:{line}" in message, message
    frames = [(frame.filename, frame.lineno) for frame in traceback.extract_tb(error.__traceback__)]
    assert (HERE, line) in frames, frames


# -- run-time errors name the op and the user's line ---------------------------------------
def pick(x, i):
    return x[i]


def test_out_of_range_index_names_the_op_and_the_line():
    f = tf.function(pick, autograph=False)
    assert f(tf.constant([1, 2, 3]), tf.constant(2)).numpy() == 3
    with pytest.raises(InvalidArgumentError) as info:
        f(tf.constant([1, 2, 3]), tf.constant(5))
    _assert_points_at(info.value, "StridedSlice", _line_of(pick, 1))
    assert "out of bounds" in str(info.value)


def test_out_of_range_index_eagerly_is_a_value_error_at_the_line():
    with pytest.raises(ValueError) as info:
        pick(tf.constant([1, 2, 3]), tf.constant(5))
    frames = [(frame.filename, frame.lineno) for frame in traceback.extract_tb(info.value.__traceback__)]
    assert (HERE, _line_of(pick, 1)) in frames


def sum_first(x, n):
    def body(i, total):
        return i + 1, total + x[i]
    return tf.while_loop(lambda i, total: i < n, body, [tf.constant(0), tf.constant(0)])[1]


def test_error_inside_a_loop_body_points_at_the_body_line():
    f = tf.function(sum_first, autograph=False)
    assert f(tf.constant([1, 2, 3]), tf.constant(3)).numpy() == 6
    with pytest.raises(InvalidArgumentError) as info:
        f(tf.constant([1, 2, 3]), tf.constant(4))
    _assert_points_at(info.value, "StridedSlice", _line_of(sum_first, 2))


def guarded(x, i, flag):
    def body(k, total):
        total = tf.cond(flag, lambda: total + x[k + i], lambda: total)
        return k + 1, total
    return tf.while_loop(lambda k, total: k < 2, body, [tf.constant(0), tf.constant(0)])[1]


def test_error_inside_a_cond_inside_a_loop_points_at_the_branch_line():
    f = tf.function(guarded, autograph=False)
    x = tf.constant([1, 2, 3])
    assert f(x, tf.constant(5), tf.constant(False)).numpy() == 0  # the failing branch never runs
    with pytest.raises(InvalidArgumentError) as info:
        f(x, tf.constant(5), tf.constant(True))
    _assert_points_at(info.value, "StridedSlice", _line_of(guarded, 2))


def overflow(n):
    ta = tf.TensorArray(tf.float32, size=2)
    body = lambda i, ta: (i + 1, ta.write(i, tf.cast(i, tf.float32)))  # noqa: E731
    return tf.while_loop(lambda i, ta: i < n, body, [tf.constant(0), ta])[1].stack()


def test_kernel_errors_name_the_op_and_the_line():
    f = tf.function(overflow, autograph=False)
    with pytest.raises(InvalidArgumentError) as info:
        f(tf.constant(3))
    _assert_points_at(info.value, "TensorListWrite", _line_of(overflow, 2))
    assert "index 2 is out of range" in str(info.value)


def test_unused_failing_ops_are_not_run():
    def ignore(x, i):
        unused = x[i]  # noqa: F841 - pruned from the graph: nothing needs it
        return x * 2

    f = tf.function(ignore, autograph=False)
    np.testing.assert_array_equal(f(tf.constant([1, 2]), tf.constant(9)).numpy(), [2, 4])


# -- generated code ---------------------------------------------------------------------
def sum_square2(n):
    i, result = tf.constant(0), tf.constant(0)
    c = lambda i, _: tf.less(i, n)  # noqa: E731
    b = lambda i, result: (i + 1, result + i * i)  # noqa: E731
    return tf.while_loop(c, b, [i, result])[1]


def _statements(source: str, kind) -> list:
    return [node for node in ast.walk(ast.parse(source)) if isinstance(node, kind)]


def test_generated_source_of_sum_square_is_a_python_while_loop():
    concrete = tf.function(sum_square2, autograph=False).get_concrete_function(tf.constant(10))
    compiled = CompiledGraph(concrete.graph)
    assert len(_statements(compiled.source, ast.While)) == 1
    assert compiled.source.startswith("def run(p0):")
    result = compiled(np.int32(10))
    assert len(result) == 1 and result[0] == 285 and np.asarray(result[0]).dtype == np.int32


def test_generated_source_of_a_cond_is_an_if():
    f = tf.function(lambda p, x: tf.cond(p, lambda: x + 1, lambda: x - 1), autograph=False)
    concrete = f.get_concrete_function(tf.constant(True), tf.constant(1))
    source = CompiledGraph(concrete.graph).source
    assert len(_statements(source, ast.If)) >= 1 and not _statements(source, ast.While)


def test_single_loop_variable_stays_a_scalar_in_generated_code():
    f = tf.function(lambda i: tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i])[0], autograph=False)
    result = f(tf.constant(0))
    assert result.shape == tf.TensorShape([]) and result.numpy() == 10
    assert np.ndim(f.get_concrete_function(tf.constant(0)).compiled(np.int32(0))[0]) == 0


def test_a_compiled_graph_can_run_many_times():
    def squares(n):
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        return tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * i)),
                             [tf.constant(0), ta])[1].stack()

    f = tf.function(squares, autograph=False)
    assert f(tf.constant(4)).numpy().tolist() == [0, 1, 4, 9]
    assert f(tf.constant(2)).numpy().tolist() == [0, 1]
    assert f(tf.constant(4)).numpy().tolist() == [0, 1, 4, 9]


# -- checked mode -------------------------------------------------------------------------
@pytest.mark.parametrize("fn, args", [
    (sum_square2, (tf.constant(10),)),
    (sum_first, (tf.constant([1, 2, 3]), tf.constant(3))),
    (guarded, (tf.constant([1, 2, 3]), tf.constant(0), tf.constant(True))),
    (lambda m: tf.while_loop(lambda i, m: i < 3, lambda i, m: (i + 1, tf.concat([m, m], 0)), [0, m],
                             shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 2])])[1],
     (tf.constant(np.ones((1, 2), np.float32)),)),
], ids=["sum_square2", "sum_first", "guarded", "concat"])
def test_checked_mode_agrees_with_the_plain_executor(fn, args):
    run_checked(tf.function(fn, autograph=False).get_concrete_function(*args), args)


def test_checked_mode_catches_a_wrong_inferred_shape():
    concrete = tf.function(lambda x: x * 2, autograph=False).get_concrete_function(tf.constant([1, 2]))
    (mul,) = [node for node in concrete.graph.nodes if node.op == "Mul"]
    mul.outputs[0].shape = tf.TensorShape([3])  # a lie a buggy shape rule could tell
    assert CompiledGraph(concrete.graph)(np.array([1, 2], np.int32))[0].tolist() == [2, 4]
    with pytest.raises(AssertionError, match="shape"):
        CompiledGraph(concrete.graph, check=True)(np.array([1, 2], np.int32))


def test_checked_mode_catches_a_wrong_inferred_dtype():
    concrete = tf.function(lambda x: x * 2, autograph=False).get_concrete_function(tf.constant([1, 2]))
    (mul,) = [node for node in concrete.graph.nodes if node.op == "Mul"]
    mul.outputs[0].dtype = tf.int64
    with pytest.raises(AssertionError, match="dtype"):
        CompiledGraph(concrete.graph, check=True)(np.array([1, 2], np.int32))
