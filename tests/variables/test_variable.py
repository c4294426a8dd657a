"""`autoloop.Variable` in TF2 code: eager, captured by reference in functions, in program order."""

import sys

import numpy as np
import pytest

import autoloop as al
from tests.variables.backends import BACKENDS


# -- eagerly ------------------------------------------------------------------------------------
def test_an_eager_variable_holds_its_value_and_updates_return_the_new_one():
    v = al.Variable(1.0)
    assert (v.name, v.dtype, v.shape, v.trainable) == ("Variable:0", al.float32, al.TensorShape([]), True)
    assert repr(v) == "<autoloop.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>"
    assert v.assign_add(2.0).numpy() == 3.0 and v.assign_sub(0.5).numpy() == 2.5
    assert v.assign(7).numpy() == 7.0  # a Python number takes the variable's dtype
    assert v.numpy() == 7.0 and v.read_value().numpy() == 7.0 and v.value().numpy() == 7.0
    assert (v + 1).numpy() == 8.0 and (2 * v).numpy() == 14.0 and (-v).numpy() == -7.0 and bool(v > 3)
    assert np.asarray(v) == 7.0 and float(v.numpy()) == 7.0
    assert (int(v), float(v), bool(v), bool(al.Variable(0))) == (7, 7.0, True, False)  # of its value, as TF


def test_an_eager_assignment_returns_the_variable_as_tensorflow_does():
    v = al.Variable([1.0, 2.0])
    first = v.assign([3.0, 4.0])
    assert isinstance(first, al.Variable) and first.name == "UnreadVariable"
    assert repr(first) == ("<autoloop.Variable 'UnreadVariable' shape=(2,) dtype=float32, "
                           "numpy=array([3., 4.], dtype=float32)>")  # TF's basics guide prints this
    assert repr(v.assign_add([1.0, 1.0])).startswith("<autoloop.Variable 'UnreadVariable'")
    assert first.numpy().tolist() == [4.0, 5.0]  # each use reads the variable now, as in TF
    first.assign_sub([4.0, 4.0])  # assigning through it assigns the variable
    assert v.numpy().tolist() == [0.0, 1.0] and (first + 1).numpy().tolist() == [1.0, 2.0]
    assert v.assign([9.0, 9.0], read_value=False) is None and v.numpy().tolist() == [9.0, 9.0]
    with al.GradientTape() as tape:  # a read through it is a read of the variable
        y = al.reduce_sum(v.assign([2.0, 3.0]) * 3.0)
    assert tape.gradient(y, v).numpy().tolist() == [3.0, 3.0]

    @al.function
    def double(x):
        return x * 2.0

    assert [double(v.assign_add([1.0, 1.0])).numpy().tolist() for _ in range(3)] == [[6.0, 8.0], [8.0, 10.0],
                                                                                     [10.0, 12.0]]
    assert double(v).numpy().tolist() == [10.0, 12.0] and double.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("on", BACKENDS)
def test_an_assignment_in_a_function_gives_the_new_value_as_a_tensor(on):
    v = al.Variable(1.0)

    @al.function(backend=on)
    def step():
        new = v.assign_add(2.0)
        return new * 10.0, v.assign(new + 1.0, read_value=False)

    scaled, assigned = step()
    assert scaled.numpy() == 30.0 and assigned.numpy() == 4.0 and v.numpy() == 4.0


def test_dtype_shape_name_and_a_callable_initial_value():
    w = al.Variable(lambda: np.arange(6, dtype=np.float64).reshape(2, 3), name="w", trainable=False)
    assert (w.name, w.dtype, w.shape.as_list(), w.trainable) == ("w:0", al.float64, [2, 3], False)
    assert repr(w) == ("<autoloop.Variable 'w:0' shape=(2, 3) dtype=float64, numpy=\n"
                       "array([[0., 1., 2.],\n       [3., 4., 5.]])>")  # TF's layout of a multi-line value
    assert al.Variable([1, 2], dtype=al.float32).dtype == al.float32
    grows = al.Variable([1.0], shape=al.TensorShape([None]))
    grows.assign([1.0, 2.0, 3.0])
    assert grows.numpy().tolist() == [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(w[1].numpy(), [3.0, 4.0, 5.0])


def test_numpy_gives_a_copy_and_the_initial_array_is_copied():
    v = al.Variable([1.0, 2.0])
    v.numpy()[0] = 9.0
    assert v.numpy().tolist() == [1.0, 2.0]
    array = np.ones(2, np.float32)
    w = al.Variable(array)
    array[0] = 5.0
    assert w.numpy().tolist() == [1.0, 1.0]


def test_scatter_updates():
    v = al.Variable(np.zeros([4], np.float32))
    v.scatter_nd_update([[1], [3]], [5.0, 6.0])
    assert v.numpy().tolist() == [0, 5, 0, 6]
    v.scatter_nd_add([[1], [1]], [1.0, 2.0])  # repeated indices add up
    assert v.numpy().tolist() == [0, 8, 0, 6]
    v.scatter_nd_sub([[3]], [1.0])
    assert v.numpy().tolist() == [0, 8, 0, 5]
    m = al.Variable(np.zeros([3, 2], np.int32))
    m.scatter_update(al.IndexedSlices(al.constant([[1, 2]]), al.constant([2])))
    m.scatter_add(al.IndexedSlices(al.constant([[1, 1], [1, 1]]), al.constant([0, 2])))
    m.scatter_sub(al.IndexedSlices(al.constant([[3, 3]]), al.constant([0])))
    assert m.numpy().tolist() == [[-2, -2], [0, 0], [2, 3]]
    with pytest.raises(TypeError, match="Variable.scatter_update takes an IndexedSlices"):
        m.scatter_update(al.constant([1]))


def test_an_update_of_the_wrong_dtype_or_shape_is_a_clear_error():
    v = al.Variable([1.0, 2.0], name="weights")
    line = sys._getframe().f_lineno + 3
    with pytest.raises(TypeError, match=r"cannot assign a int32 value to a float32 variable \('weights', at "
                                        rf".*test_variable.py:{line}\).*autoloop.cast"):
        v.assign(al.constant([1, 2]))
    with pytest.raises(ValueError, match=r"cannot add a value of shape \(3,\) to the variable 'weights' of shape "
                                         r"\(2,\)"):
        v.assign_add([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        al.Variable(1).assign(0.5)  # 0.5 does not fit an int32
    assert v.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="initial_value must be given"):
        al.Variable()


# -- captured by functions --------------------------------------------------------------------------
@pytest.mark.parametrize("on", BACKENDS)
def test_a_function_sees_the_current_value_and_its_updates_persist(on):
    v = al.Variable(1.0)

    @al.function(backend=on)
    def step(x):
        v.assign_add(x)
        return v * 2

    assert step(al.constant(2.0)).numpy() == 6.0 and v.numpy() == 3.0
    v.assign(10.0)  # changed outside: seen by the next call, without a new trace
    assert step(al.constant(1.0)).numpy() == 22.0 and v.numpy() == 11.0
    assert step.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("on", BACKENDS)
def test_reads_and_writes_keep_program_order_in_loops(on):
    total = al.Variable(0)
    seen = al.Variable(np.zeros([5], np.int32))

    @al.function(backend=on)
    def count(n):
        i = 0
        while i < n:
            seen.scatter_nd_update([[i]], [total.read_value()])  # the value before this iteration's update
            total.assign_add(i)
            i += 1
        return total.read_value()

    assert count(al.constant(5)).numpy() == 10
    assert seen.numpy().tolist() == [0, 0, 1, 3, 6]
    assert count(al.constant(2)).numpy() == 11  # state persists between calls


@pytest.mark.parametrize("on", BACKENDS)
def test_a_variable_assigned_in_a_branch(on):
    counter = al.Variable(0)

    @al.function(backend=on)
    def tally(x):
        if x > 0:
            counter.assign_add(1)
        else:
            counter.assign_sub(1)
        return counter.read_value() * 10

    assert [tally(al.constant(k)).numpy() for k in (1, 1, -1, 1)] == [10, 20, 10, 20]
    assert counter.numpy() == 2


@pytest.mark.parametrize("on", BACKENDS)
def test_a_loop_condition_reads_a_variable_the_body_updates(on):
    v = al.Variable(1.0)

    @al.function(backend=on)
    def double_until(limit):
        steps = 0
        while v < limit:
            v.assign(v * 2.0)
            steps += 1
        return steps

    assert double_until(al.constant(100.0)).numpy() == 7 and v.numpy() == 128.0


def test_a_variable_update_in_a_scan_body_is_refused_on_jax_and_runs_on_numpy():
    pytest.importorskip("jax")
    v = al.Variable(0.0)

    def summed(xs):
        def body(x, state):
            v.assign_add(x)
            return None, state
        al.scan(body=body, xs=xs, initial=al.constant(0.0))
        return v.read_value()

    assert al.function(summed)(al.constant([1.0, 2.0])).numpy() == 3.0
    with pytest.raises(al.errors.BackendError, match="a variable update in a scan's body or condition"):
        al.function(summed, backend="jax")(al.constant([1.0, 2.0]))


# -- made in functions -------------------------------------------------------------------------------
def test_a_function_may_make_a_variable_once_on_its_first_call():
    holder = {}

    @al.function
    def scaled(x):
        if "v" not in holder:
            holder["v"] = al.Variable(2.0)
        return holder["v"] * x

    assert scaled(al.constant(3.0)).numpy() == 6.0 and scaled(al.constant(4.0)).numpy() == 8.0
    assert scaled.experimental_get_tracing_count() == 1
    holder["v"].assign(5.0)
    assert scaled(al.constant(1.0)).numpy() == 5.0


def test_a_function_that_makes_a_variable_on_every_trace_names_the_line():
    @al.function
    def fresh(x):
        v = al.Variable(1.0)
        return v + x

    line = fresh.python_function.__code__.co_firstlineno + 2
    with pytest.raises(ValueError, match=rf"tf.function only supports singleton tf.Variables created on the first "
                                         rf"call: the variable 'Variable' \(at .*test_variable.py:{line}\)"):
        fresh(al.constant(1.0))


def test_a_later_trace_that_makes_a_variable_is_an_error():
    made = {}

    @al.function
    def per_dtype(x):
        if x.dtype == al.float64 and "v" not in made:
            made["v"] = al.Variable(1.0)
        return x

    per_dtype(al.constant(1.0))  # the first trace makes none
    with pytest.raises(ValueError, match="only supports singleton tf.Variables created on the first call"):
        per_dtype(al.constant(1.0, al.float64))


def test_an_initial_value_computed_by_the_traced_function_is_refused():
    holder = {}

    @al.function
    def f(x):
        if not holder:
            holder["v"] = al.Variable(x * 2)
        return x

    with pytest.raises(ValueError, match="its initial value .* is computed by the function being traced"):
        f(al.constant(1.0))


# -- TF1 graphs --------------------------------------------------------------------------------------
def test_autoloop_variable_in_a_tf1_graph_is_a_session_variable():
    import autoloop.compat.v1 as v1
    with v1.Graph().as_default():
        v = al.Variable(3, name="counter")
        assert isinstance(v, v1.Variable)
        step = v.assign_add(2)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(step) == 5 and sess.run(step) == 7
    assert isinstance(al.Variable(1.0), al.Variable) and not isinstance(al.Variable(1.0), v1.Variable)


def test_a_variable_whose_shape_a_loop_changes():
    pytest.importorskip("jax")
    v = al.Variable([1.0], shape=al.TensorShape([None]), name="grows")

    def grow(n):
        i = 0
        while i < n:
            v.assign(al.concat([v.read_value(), [2.0]], 0))
            i += 1
        return v.read_value()

    assert al.function(grow)(al.constant(2)).numpy().tolist() == [1.0, 2.0, 2.0]
    with pytest.raises(al.errors.BackendError, match=r"the variable 'grows' has shape \(3,\) before an iteration "
                                                     r"and \(4,\) after it"):
        al.function(grow, backend="jax")(al.constant(2))
    assert v.numpy().tolist() == [1.0, 2.0, 2.0]  # nothing ran


@pytest.mark.parametrize("on", BACKENDS)
def test_a_printed_variable_prints_its_value_in_program_order(on, capsys):
    v = al.Variable(0)

    @al.function(backend=on)
    def count(n):
        i = 0
        while i < n:
            v.assign_add(1)
            print("v is", v)
            i += 1
        return v.read_value()

    count(al.constant(2))
    count(al.constant(1))
    assert capsys.readouterr().out == "v is 1\nv is 2\nv is 3\n"
