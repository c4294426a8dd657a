"""`function(fn, autograph=False)`: tracing, retracing, signatures, concrete functions, methods."""

from __future__ import annotations

import inspect

import collections

import numpy as np
import pytest

import autoloop as tf

from .helpers import run_checked, to_numpy

Result = collections.namedtuple("Result", "total, parts")


class Traced:
    """A function that counts how often its Python body runs (once per trace)."""

    def __init__(self, body):
        self.body = body
        self.calls = 0
        self.__signature__ = inspect.signature(body)  # binds arguments as `body` would
        self.__name__ = getattr(body, "__name__", "body")

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.body(*args, **kwargs)


def traced(body, **options):
    counter = Traced(body)
    return tf.function(counter, autograph=False, **options), counter


# -- tracing and retracing ----------------------------------------------------------------
def test_traces_once_per_dtype_and_shape():
    f, counter = traced(lambda x: x * 2)
    assert f(tf.constant(1)).numpy() == 2
    assert f(tf.constant(5)).numpy() == 10
    assert counter.calls == 1
    f(tf.constant(1.5))                 # new dtype
    f(tf.constant([1, 2]))              # new shape
    f(tf.constant([3, 4]))
    f(np.array([5, 6], np.int32))       # numpy arrays are inputs keyed the same way
    assert counter.calls == 3
    np.testing.assert_array_equal(f(np.array([5, 6], np.int32)).numpy(), [10, 12])


def test_a_new_python_value_retraces():
    f, counter = traced(lambda x, k: x * int(k))
    assert f(tf.constant(3), 2).numpy() == 6
    assert f(tf.constant(3), 2).numpy() == 6
    assert counter.calls == 1
    assert f(tf.constant(3), 4).numpy() == 12
    assert counter.calls == 2
    f(tf.constant(3), 2.0)  # 2.0 is not 2: a float multiplier is another trace
    assert counter.calls == 3


def test_python_values_are_baked_into_the_graph():
    f, _ = traced(lambda x, k: x + k)
    concrete = f.get_concrete_function(tf.constant(1), 7)
    assert len(concrete.inputs) == 1
    assert concrete(tf.constant(1)).numpy() == 8


def test_python_control_flow_on_python_values_runs_at_trace_time():
    def repeat(x, times):
        for _ in range(times):
            x = x * 2
        return x

    f, counter = traced(repeat)
    assert f(tf.constant(1), 5).numpy() == 32
    assert f(tf.constant(3), 5).numpy() == 96
    assert counter.calls == 1


# -- input_signature ----------------------------------------------------------------------
def test_input_signature_traces_once_for_compatible_shapes():
    f, counter = traced(lambda x: x * 2, input_signature=[tf.TensorSpec([None], tf.int32)])
    np.testing.assert_array_equal(f(tf.constant([1, 2])).numpy(), [2, 4])
    np.testing.assert_array_equal(f(tf.constant([1, 2, 3])).numpy(), [2, 4, 6])
    np.testing.assert_array_equal(f(np.array([4], np.int32)).numpy(), [8])
    assert counter.calls == 1
    concrete = f.get_concrete_function()
    assert counter.calls == 1
    assert concrete.inputs[0].shape == tf.TensorShape([None])
    assert concrete.outputs[0].shape == tf.TensorShape([None])


def test_input_signature_converts_python_values_to_the_spec_dtype():
    f, counter = traced(lambda x, y: tf.cast(x, tf.float32) * y,
                        input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([None], tf.float32)])
    result = f(3, [1, 2])
    assert result.dtype is tf.float32
    np.testing.assert_array_equal(result.numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(f(tf.constant(2), np.array([1.5], np.float32)).numpy(), [3.0])
    assert counter.calls == 1


@pytest.mark.parametrize("arg", [tf.constant([1.0]), tf.constant(1), tf.constant([[1]]), np.array([1], np.int64), 1.5])
def test_input_signature_mismatch_is_a_type_error(arg):
    f, counter = traced(lambda x: x, input_signature=[tf.TensorSpec([None], tf.int32)])
    with pytest.raises(TypeError, match="input_signature"):
        f(arg)
    assert counter.calls == 0


def test_input_signature_wrong_number_of_arguments():
    f, _ = traced(lambda x: x, input_signature=[tf.TensorSpec([], tf.int32)])
    with pytest.raises(TypeError, match="input_signature"):
        f(tf.constant(1), tf.constant(2))


# -- reduce_retracing -----------------------------------------------------------------------
def test_reduce_retracing_traces_once_per_rank():
    f, counter = traced(lambda x: x + 1, reduce_retracing=True)
    np.testing.assert_array_equal(f(tf.constant([1])).numpy(), [2])
    np.testing.assert_array_equal(f(tf.constant([1, 2, 3])).numpy(), [2, 3, 4])
    assert counter.calls == 1
    f(tf.constant([[1, 2]]))
    assert counter.calls == 2
    assert f.get_concrete_function(tf.constant([7, 8])).inputs[0].shape == tf.TensorShape([None])


# -- concrete functions ------------------------------------------------------------------
def test_get_concrete_function_exposes_graph_inputs_and_outputs():
    def sum_square2(n):
        c = lambda i, _: tf.less(i, n)  # noqa: E731
        b = lambda i, result: (i + 1, result + i * i)  # noqa: E731
        return tf.while_loop(c, b, [tf.constant(0), tf.constant(0)])[1]

    f, counter = traced(sum_square2)
    concrete = f.get_concrete_function(tf.constant(10))
    assert f.get_concrete_function(tf.constant(3)) is concrete
    assert counter.calls == 1
    assert [n.op for n in concrete.graph.nodes].count("While") == 1
    (arg,) = concrete.inputs
    (out,) = concrete.outputs
    assert (arg.dtype, arg.shape) == (tf.int32, tf.TensorShape([]))
    assert (out.dtype, out.shape) == (tf.int32, tf.TensorShape([]))
    assert arg.is_symbolic and out.is_symbolic
    assert concrete(tf.constant(10)).numpy() == 285
    assert f(tf.constant(10)).numpy() == 285
    assert counter.calls == 1
    run_checked(concrete, (tf.constant(10),))


def test_python_function_is_the_original():
    def double(x):
        return x * 2

    f = tf.function(double, autograph=False)
    assert f.python_function is double
    assert f.__name__ == "double"
    assert tf.function(autograph=False)(double).python_function is double


def test_calling_a_function_while_tracing_inlines_it():
    inner, inner_counter = traced(lambda x: x + 1)
    outer, _ = traced(lambda x: inner(x) * 2)
    concrete = outer.get_concrete_function(tf.constant(1))
    assert outer(tf.constant(1)).numpy() == 4
    assert inner_counter.calls == 1
    assert [node.op for node in concrete.graph.nodes if node.op in ("Add", "Mul")] == ["Add", "Mul"]


# -- methods ------------------------------------------------------------------------------
class Scaler:
    def __init__(self, factor):
        self.factor = factor
        self.traces = 0

    @tf.function(autograph=False)
    def scale(self, x):
        self.traces += 1
        return x * self.factor


def test_methods_bind_self_and_cache_per_instance():
    two, three = Scaler(2), Scaler(3)
    assert two.scale(tf.constant(5)).numpy() == 10
    assert three.scale(tf.constant(5)).numpy() == 15
    assert two.scale(tf.constant(7)).numpy() == 14
    assert (two.traces, three.traces) == (1, 1)
    assert two.scale is two.scale
    assert Scaler.scale(two, tf.constant(1)).numpy() == 2


def test_method_python_function():
    assert Scaler.scale.python_function.__name__ == "scale"
    bound = Scaler(4).scale
    assert bound.python_function(3) == 12  # the original method, bound to its instance


# -- outputs --------------------------------------------------------------------------------
def test_nested_structures_of_outputs():
    def split(x):
        return {"sum": x + x, "pair": (x, [x * 3, Result(x - 1, (x,))]), "none": None, "label": "ok"}

    f, _ = traced(split)
    result = f(tf.constant(2))
    assert result["none"] is None and result["label"] == "ok"
    assert isinstance(result["pair"][1][1], Result)
    assert to_numpy(result) == to_numpy(split(tf.constant(2)))


def test_returning_an_input_or_an_outer_constant():
    outer = tf.constant([1.0, 2.0])
    f, _ = traced(lambda x: (x, outer, tf.constant(3)))
    x, o, c = f(tf.constant(9))
    assert (x.numpy(), c.numpy()) == (9, 3)
    np.testing.assert_array_equal(o.numpy(), [1.0, 2.0])


def test_keyword_arguments_and_defaults():
    def affine(x, scale=2, *, shift=None):
        return x * scale + (0 if shift is None else shift)

    f, counter = traced(affine)
    assert f(tf.constant(1)).numpy() == 2
    assert f(x=tf.constant(1)).numpy() == 2
    assert f(tf.constant(1), scale=3, shift=tf.constant(5)).numpy() == 8
    assert counter.calls == 2
    with pytest.raises(TypeError, match="affine"):
        f(tf.constant(1), 2, 3)


def test_tensors_from_another_trace_are_rejected():
    leaked = []
    f, _ = traced(lambda x: leaked.append(x) or x)
    f(tf.constant(1))
    g, _ = traced(lambda y: y + leaked[0])
    with pytest.raises((TypeError, ValueError), match="another"):
        g(tf.constant(1))


def test_symbolic_tensor_as_bool_is_a_type_error_with_a_hint():
    f, _ = traced(lambda x: 1 if x > 0 else 2)
    with pytest.raises(TypeError, match="function"):
        f(tf.constant(1))


@pytest.mark.parametrize("args", [(tf.constant(4), 3), (tf.constant([1.0, -2.0]), 2), (tf.constant(0), 0)])
def test_eager_and_traced_results_are_identical(args):
    def program(x, k):
        def body(i, acc):
            acc = tf.cond(tf.equal(i % 2, 0), lambda: acc * 2 + 1, lambda: acc - tf.cast(i, acc.dtype))
            return i + 1, acc
        return tf.while_loop(lambda i, acc: i < k, body, [tf.constant(0), x])

    eager = to_numpy(program(*args))
    f, _ = traced(program)
    result = to_numpy(f(*args))
    for e, t in zip(eager, result):
        assert np.asarray(e).dtype == np.asarray(t).dtype
        np.testing.assert_array_equal(e, t)
    run_checked(f.get_concrete_function(*args), args)


def test_concrete_function_rejects_inputs_it_was_not_traced_for():
    concrete = tf.function(lambda x, y: x - y, autograph=False).get_concrete_function(tf.constant(1), tf.constant(2))
    assert concrete(tf.constant(5), tf.constant(1)).numpy() == 4
    with pytest.raises(TypeError, match="int32"):
        concrete(tf.constant(5.0), tf.constant(1.0))
    with pytest.raises(TypeError, match="shape"):
        concrete(tf.constant([5]), tf.constant(1))
    with pytest.raises(TypeError, match="2 tensor arguments"):
        concrete(tf.constant(5))


def test_nested_structures_of_arguments():
    f, counter = traced(lambda d: {"s": d["a"] + d["b"][0], "t": d["b"][1] * 2.0})
    args = {"a": tf.constant(1), "b": [tf.constant(2), np.array([3.0], np.float32)]}
    result = f(args)
    assert to_numpy(result)["s"] == 3
    np.testing.assert_array_equal(result["t"].numpy(), [6.0])
    assert len(f.get_concrete_function(args).inputs) == 3
    assert counter.calls == 1


def test_wrapping_a_function_keeps_the_wrappers_own_options():
    def add_one(x):
        return x + 1

    inner = tf.function(add_one, autograph=False, input_signature=[tf.TensorSpec([], tf.int32)])
    outer = tf.function(inner, autograph=False)
    assert outer.python_function is inner
    assert outer.input_signature is None
    assert outer.__name__ == "add_one"
    assert outer(tf.constant([1, 2])).numpy().tolist() == [2, 3]  # inner is inlined, its signature not used


def test_callable_objects_can_be_traced():
    f, counter = traced(lambda x: x * 3)
    assert f(tf.constant(2)).numpy() == 6
    assert counter.calls == 1 and "calls" not in vars(f)


def test_a_method_trace_cache_does_not_keep_its_instance_alive():
    import gc
    import weakref

    class Model:
        @tf.function(autograph=False)
        def double(self, x):
            return x * 2

    model = Model()
    assert model.double(tf.constant(3)).numpy() == 6
    assert model.double is model.double  # one bound Function per instance
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None


def test_traced_graphs_hold_no_dead_nodes_but_keep_side_effects():
    def f(x):
        unused = x * 3  # noqa: F841 - dead: nothing reads it
        tf.print("side effect")  # stateful: stays although nothing reads it
        return x + 1

    graph = tf.function(f, autograph=False).get_concrete_function(tf.constant(1)).graph
    ops = [node.op for node in graph.nodes]
    assert "Mul" not in ops
    assert "PrintV2" in ops and "Add" in ops
