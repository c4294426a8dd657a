"""`py_function` / `numpy_function`: Python called inside a graph, on both backends and in a Session."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop.errors import BackendError, InvalidArgumentError
from tests.function_surface.backends import BACKENDS

VECTOR = al.TensorSpec([3], al.float32)
SCALAR = al.TensorSpec([], al.float32)


@pytest.mark.parametrize("target", BACKENDS)
def test_py_function_gets_tensors_and_numpy_function_gets_arrays(target):
    seen = []

    def doubled(t):
        seen.append(type(t))
        return t * 2

    @al.function(backend=target)
    def f(x):
        return (al.py_function(doubled, [x], VECTOR) + 1,
                al.numpy_function(doubled, [x], [VECTOR]))

    a, [b] = f(al.constant([1., 2., 3.]))
    np.testing.assert_array_equal(a.numpy(), [3., 5., 7.])
    np.testing.assert_array_equal(b.numpy(), [2., 4., 6.])
    assert seen == [al.Tensor, np.ndarray]
    f(al.constant([1., 2., 3.]))
    assert len(seen) == 4  # called on every run, not while tracing


def test_eagerly_the_function_is_called_at_once():
    assert al.py_function(lambda t: t + 1, [al.constant(2)], al.int32).numpy() == 3
    [result] = al.numpy_function(lambda a: a * 2.0, [al.constant(2.0)], [al.float32])
    assert result.numpy() == 4.0 and result.dtype is al.float32


def test_a_result_has_unknown_shape_unless_declared():
    shapes = []

    @al.function
    def f(x):
        unknown = al.numpy_function(lambda a: a[:2], [x], al.float32)
        declared = al.numpy_function(lambda a: a, [x], VECTOR, name="declared")
        shapes.append((unknown.shape, declared.shape))
        return unknown

    np.testing.assert_array_equal(f(al.constant([1., 2., 3.])).numpy(), [1., 2.])
    assert shapes == [(al.TensorShape(None), al.TensorShape([3]))]
    assert "declared" in [node.name for node in f.get_concrete_function(al.constant([1., 2., 3.])).graph.nodes]


@pytest.mark.parametrize("target", BACKENDS)
def test_calls_in_a_loop_are_ordered_with_prints(target, capsys):
    def report(i):
        print("python", int(i))
        return np.float32(i) * 10

    @al.function(backend=target)
    def f(n):
        total, i = al.constant(0.), al.constant(0)
        while i < n:
            al.print("graph", i)
            total += al.numpy_function(report, [i], SCALAR)
            i += 1
        return total

    assert f(al.constant(3)).numpy() == 30.
    assert capsys.readouterr().out == "graph 0\npython 0\ngraph 1\npython 1\ngraph 2\npython 2\n"


@pytest.mark.parametrize("target", BACKENDS)
def test_an_unused_stateful_call_runs_and_a_stateless_one_is_pruned(target):
    calls = []

    def record(name):
        def call(a):
            calls.append(name)
            return a
        return call

    @al.function(backend=target)
    def f(x):
        al.numpy_function(record("stateful"), [x], SCALAR)
        al.numpy_function(record("pure"), [x], SCALAR, stateful=False)
        return x + 1

    assert f(al.constant(1.)).numpy() == 2.
    assert calls == ["stateful"]


@pytest.mark.parametrize("target", BACKENDS)
def test_gradient_through_py_function_runs_its_ops_on_a_tape(target):
    @al.function(backend=target)
    def f(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = al.py_function(lambda t: al.sin(t) * t, [x], VECTOR)
            loss = al.reduce_sum(y * y)
        return tape.gradient(loss, x)

    x = np.array([0.5, 1., 2.], np.float32)
    expected = 2 * np.sin(x) * x * (np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(f(al.constant(x)).numpy(), expected, rtol=1e-5)


def test_gradient_eagerly_and_none_through_numpy_function():
    x = al.constant([1., 2.])
    with al.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = al.py_function(lambda t: t * t, [x], al.float32)
        z = al.numpy_function(lambda a: a * a, [x], al.float32)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2., 4.])
    assert tape.gradient(z, x) is None

    @al.function
    def traced(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            z = al.numpy_function(lambda a: a * a, [x], al.float32)
        return tape.gradient(z, x)
    assert traced(x) is None


@pytest.mark.parametrize("target", BACKENDS)
def test_an_error_in_the_function_is_raised_when_the_graph_runs(target):
    def fails(a):
        raise ValueError("no luck")

    @al.function(backend=target)
    def f(x):
        return al.py_function(fails, [x], SCALAR)

    with pytest.raises(InvalidArgumentError, match=r"ValueError: no luck\. The op was created at .*test_py_function"):
        f(al.constant(1.))


@pytest.mark.parametrize("target", BACKENDS)
def test_a_result_of_another_dtype_is_an_error_naming_the_function(target):
    def wide(a):
        return a.astype(np.float64)

    @al.function(backend=target)
    def f(x):
        return al.numpy_function(wide, [x], SCALAR)

    with pytest.raises(InvalidArgumentError, match=r"result 0 of wide must be float32 as Tout declares"):
        f(al.constant(1.))


def test_jax_needs_the_result_shape_and_set_shape_gives_it():
    pytest.importorskip("jax")

    @al.function(backend="jax")
    def unknown(x):
        return al.numpy_function(lambda a: a, [x], al.float32)

    with pytest.raises(BackendError, match=r"numpy_function with a result of shape <unknown>.*Tout=autoloop.TensorSpec"):
        unknown(al.constant([1., 2.]))

    @al.function(backend="jax")
    def narrowed(x):
        y = al.numpy_function(lambda a: a * 3, [x], al.float32)
        y.set_shape(x.shape)
        return y

    np.testing.assert_array_equal(narrowed(al.constant([1., 2.])).numpy(), [3., 6.])


def test_tout_must_be_a_dtype_or_spec():
    with pytest.raises(TypeError, match=r"py_function: Tout must be a dtype, a TensorSpec or a list of them, got 'x'"):
        al.py_function(lambda t: t, [al.constant(1.)], "x")
    with pytest.raises(InvalidArgumentError, match=r"must return 2 value\(s\), one per entry of Tout"):
        al.numpy_function(lambda a: a, [al.constant(1.)], [al.float32, al.float32])


def test_in_a_tf1_session_with_gradients():
    v1 = al.compat.v1
    graph = v1.Graph()
    with graph.as_default():
        x = v1.placeholder(al.float32, [3])
        y = al.py_function(lambda t: t * t, [x], al.float32)
        z = al.numpy_function(lambda a: a + 1, [y], [al.float32])
        [grad] = al.gradients(al.reduce_sum(y), [x])
        with v1.Session() as session:
            results = session.run([y, z, grad], {x: np.array([0., 1., 2.], np.float32)})
    np.testing.assert_array_equal(results[0], [0., 1., 4.])
    np.testing.assert_array_equal(results[1][0], [1., 2., 5.])
    np.testing.assert_array_equal(results[2], [0., 2., 4.])


@pytest.mark.parametrize("target", BACKENDS)
def test_gradient_through_py_function_in_a_graph_loop(target):
    @al.function(backend=target)
    def f(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y, i = x, al.constant(0)
            while i < 3:
                y = al.py_function(al.sin, [y], al.TensorSpec([2], al.float32))
                i += 1
            loss = al.reduce_sum(y)
        return tape.gradient(loss, x)

    x = np.array([0.3, 0.7], np.float32)
    once, twice = np.sin(x), np.sin(np.sin(x))
    np.testing.assert_allclose(f(al.constant(x)).numpy(), np.cos(twice) * np.cos(once) * np.cos(x), rtol=1e-5)


def test_in_a_tf1_while_loop_the_session_calls_it_per_iteration():
    v1 = al.compat.v1
    calls = []

    def doubled(i):
        calls.append(int(i))
        return i * 2

    graph = v1.Graph()
    with graph.as_default():
        n = v1.placeholder(al.int32, [])
        loop = al.while_loop(lambda i, s: i < n, lambda i, s: (
            i + 1, s + al.numpy_function(doubled, [i], al.TensorSpec([], al.int32))), (0, 0))
        with v1.Session() as session:
            assert session.run(loop, {n: 4}) == (4, 12)
    assert calls == [0, 1, 2, 3]


def test_the_reference_interpreter_runs_it_as_the_executor_does():
    from autoloop.execute.interpreter import interpret

    @al.function
    def f(x):
        i = al.constant(0)
        while i < 3:
            x = al.py_function(lambda t: t * 2 + 1, [x], al.TensorSpec([2], al.float32))
            i += 1
        return x

    x = np.array([1., 2.], np.float32)
    graph = f.get_concrete_function(al.constant(x)).graph
    np.testing.assert_array_equal(interpret(graph, x)[0], f(al.constant(x)).numpy())
    np.testing.assert_array_equal(interpret(graph, x)[0], [15., 23.])


@pytest.mark.parametrize("target", BACKENDS)
def test_only_the_branch_that_runs_calls_it(target):
    calls = []

    def record(a):
        calls.append(float(a))
        return a * 10

    @al.function(backend=target)
    def f(x):
        if x > 0:
            y = al.numpy_function(record, [x], SCALAR)
        else:
            y = -x
        return y

    assert f(al.constant(2.)).numpy() == 20. and f(al.constant(-3.)).numpy() == 3.
    assert calls == [2.]


@pytest.mark.parametrize("target", BACKENDS)
def test_an_error_in_a_loop_stops_the_loop_and_later_effects(target, capsys):
    def fails_at_two(i):
        if i == 2:
            raise ValueError("at two")
        return i

    @al.function(backend=target)
    def f(n):
        i = al.constant(0)
        while i < n:
            al.print("i", i)
            i = al.numpy_function(fails_at_two, [i], al.TensorSpec([], al.int32)) + 1
        return i

    with pytest.raises(InvalidArgumentError, match=r"PyFunction \(node PyFunction\) failed while running: "
                                                   r"ValueError: at two"):
        f(al.constant(5))
    assert capsys.readouterr().out == "i 0\ni 1\ni 2\n"
