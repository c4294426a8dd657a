"""Gradients through loops, branches and TensorArrays, eagerly and traced, against finite differences.

Each function below is plain Python on tensors: traced it is converted
(``while`` becomes a graph ``While`` whose gradient is a backward loop),
eagerly it runs as Python and the tape records every iteration; both must
match central differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al

from .checks import check_gradient


def doubling(x, w):
    """A trip count that depends on the data: ``while x < 100: x = x * w + 1``."""
    while x < 100.0:
        x = x * w + 1.0
    return x


def trip_count(x, w):
    count = 0
    while x < 100:
        x, count = x * w + 1, count + 1
    return count


STARTS = [2.9, 3.1, 13.5, 14.0, 150.0]  # trip counts 6, 5, 4, 3, 0


@pytest.mark.parametrize("x0", STARTS)
def test_data_dependent_trip_count_on_both_sides_of_a_change(x0):
    w = 1.9
    check_gradient(doubling, [np.array(x0), np.array(w)], autograph=True)


def test_the_cases_above_do_cross_a_trip_count_change():
    counts = [trip_count(x0, 1.9) for x0 in STARTS]
    assert counts == [6, 5, 4, 3, 0], counts


def rnn(h, w, xs):
    """``h = tanh(W @ h + x[t])`` over the rows of `xs`; the loss reads every step."""
    total = al.zeros([], al.float64)
    for t in al.range(al.shape(xs)[0]):
        h = al.tanh(al.matmul(w, h) + xs[t])
        total += al.reduce_sum(h * h)
    return total + al.reduce_sum(h)


def test_a_for_loop_over_a_tensor_range_with_captured_weights():
    rng = np.random.default_rng(0)
    check_gradient(rnn, [rng.standard_normal(3), rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((4, 3))],
                   autograph=True)


def nested(x, w):
    """The inner trip count depends on the outer loop."""
    i = 0
    s = x * 0.0
    while i < 4:
        j = 0
        while j < i:
            s = s + al.sin(x * w) * x
            x = x * 0.9 + w
            j += 1
        x = x + s * 0.1
        i += 1
    return x + s


def test_nested_loops():
    check_gradient(nested, [np.array([0.3, -0.7]), np.array(0.8)], autograph=True)


def branch_in_loop(x, w):
    i = 0
    while i < 6:
        if al.reduce_sum(x) > 0.5:
            x = al.sin(x) * w
        else:
            x = x * x + w
        i += 1
    return x


@pytest.mark.parametrize("x0", [[0.3, 0.1], [1.3, 0.9], [-0.4, 2.0]])
def test_a_branch_inside_a_loop(x0):
    check_gradient(branch_in_loop, [np.array(x0), np.array(1.3)], autograph=True)


def loop_in_branch(x, w, flag):
    if flag > 0:
        i = 0
        while i < 3:
            x = al.tanh(x * w) + x
            i += 1
    else:
        x = x * w
    return x


@pytest.mark.parametrize("flag", [1.0, -1.0])
def test_a_loop_inside_a_branch(flag):
    check_gradient(loop_in_branch, [np.array([0.2, 0.5]), np.array(1.1), np.array(flag)], autograph=True)


def appended(x):
    """A Python list appended to in a graph loop is a TensorArray; its stack differentiates."""
    values = []
    for i in al.range(4):
        x = al.sin(x) + 0.5
        values.append(x * al.cast(i, al.float64))
    return al.stack(values)


def test_a_list_appended_to_in_a_loop():
    check_gradient(appended, [np.array([0.4, -0.2, 1.0])], autograph=True)


def tensor_arrays(xs, w):
    """TensorArray reads, writes, unstack, stack, gather and scatter inside a functional loop."""
    inputs = al.TensorArray(al.float64, size=4).unstack(xs)
    outputs = al.TensorArray(al.float64, size=4)

    def body(t, h, out):
        h = al.tanh(w * h + inputs.read(t))
        return t + 1, h, out.write(t, h * h)

    _, h, outputs = al.while_loop(lambda t, h, out: t < 4, body, (0, xs[0] * 0.0, outputs))
    scattered = al.TensorArray(al.float64, size=5).scatter([4, 1, 0, 2], outputs.stack())
    return al.reduce_sum(outputs.gather([1, 1, 3])) + al.reduce_sum(scattered.stack() * w) + h


def test_tensor_arrays_in_a_loop():
    rng = np.random.default_rng(1)
    check_gradient(tensor_arrays, [rng.standard_normal((4, 2)), np.array(0.7)])


def test_maximum_iterations_and_several_outputs():
    def fn(x, y):
        def body(i, x, y):
            return i + 1, x * y + 0.1, y - al.sin(x)
        _, x, y = al.while_loop(lambda i, x, y: x < 50.0, body, (0, x, y), maximum_iterations=5)
        return x, y
    check_gradient(fn, [np.array(1.2), np.array(1.5)])


def test_a_loop_that_runs_zero_times_passes_the_gradient_through():
    def fn(x, w):
        _, y = al.while_loop(lambda i, y: i < 0, lambda i, y: (i + 1, y * w), (0, x))
        return y * 3.0
    check_gradient(fn, [np.array([1.0, 2.0]), np.array(2.0)])
    gradient = al.function(lambda x, w: al.gradients(fn(x, w), [x, w]), autograph=False)
    dx, dw = gradient(np.array([1.0, 2.0]), np.array(2.0))
    np.testing.assert_array_equal(dx.numpy(), np.full(2, 3.0))
    np.testing.assert_array_equal(dw.numpy(), 0.0)


def test_a_loop_variable_only_added_to_saves_nothing():
    @al.function
    def fn(x, c):
        i = al.constant(0)
        while i < 10:
            x = x + c
            i += 1
        return al.gradients(x, [x, c])

    graph = fn.get_concrete_function(np.zeros(3), np.ones(3)).graph
    loop = next(node for node in graph.nodes if node.op == "While" and "_gradient" in node.attrs)
    assert loop.attrs["_gradient"].saved == []
    grads = fn(np.zeros(3), np.ones(3))
    np.testing.assert_array_equal(grads[1].numpy(), np.full(3, 10.0))


def test_the_rnn_saves_two_values_per_iteration():
    @al.function
    def fn(h, w, xs):
        return al.gradients(rnn(h, w, xs), [w])

    graph = fn.get_concrete_function(np.zeros(3), np.eye(3), np.zeros((4, 3))).graph
    loop = next(node for node in graph.nodes if node.op == "While" and "_gradient" in node.attrs)
    saved = loop.attrs["_gradient"].saved
    assert sorted(v.node.op for v in saved) == ["Placeholder", "Tanh"], saved  # h for W's gradient; tanh's output


def test_second_derivative_through_a_loop():
    def fn(x):
        with al.GradientTape() as inner:
            inner.watch(x)
            _, y = al.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, x))  # x ** 4
        return inner.gradient(y, x)  # 4 x ** 3

    check_gradient(fn, [np.array([0.7, -1.1])])  # so 12 x ** 2


def conditional_writes(x):
    """A TensorArray written on one branch of an ``if`` inside a loop: its flow goes through the Cond."""
    out = al.TensorArray(al.float64, size=4)
    for i in al.range(4):
        if al.reduce_sum(x) > 0.0:
            out = out.write(i, al.sin(x))
        else:
            out = out.write(i, x * x)
        x = x - 0.4
    return out.stack()


def test_a_tensor_array_written_in_a_branch_inside_a_loop():
    check_gradient(conditional_writes, [np.array([0.5, 0.35])], autograph=True)  # sums 0.85, 0.05, -0.75, -1.55


def test_a_checkpointed_loop_inside_a_stored_one_is_bitwise_the_stored_gradient():
    def loss(x, checkpoint):
        def outer(i, y):
            _, z = al.while_loop(lambda k, z: k < i + 2, lambda k, z: (k + 1, al.sin(z) * 1.1 + y * 0.1), (0, y),
                                 checkpoint=checkpoint)
            return i + 1, z
        return al.reduce_sum(al.while_loop(lambda i, y: i < 4, outer, (0, x))[1])

    results = [al.function(lambda x, c=c: al.gradients(loss(x, c), [x]), autograph=False)(np.array([0.3, -0.8]))
               for c in (None, True, 2)]
    assert all(np.array_equal(results[0][0].numpy(), r[0].numpy()) for r in results[1:])
    check_gradient(lambda x: loss(x, True), [np.array([0.3, -0.8])])


def with_break_continue_and_return(x, w):
    """A loop left by ``break``, skipping work with ``continue``, and an early ``return``."""
    total = x * 0.0
    for i in al.range(8):
        x = al.sin(x) * w + 0.2
        if al.reduce_sum(x) < -1.0:
            break
        if i % 2 == 0:
            continue
        total += x * x
        if al.reduce_sum(total) > 5.0:
            return total * w
    return total + x


@pytest.mark.parametrize("w", [0.7, 1.6, -1.9])
def test_break_continue_and_return(w):
    check_gradient(with_break_continue_and_return, [np.array([0.4, 0.9]), np.array(w)], autograph=True)


def first_assigned_in_the_loop(x):
    """`y` is first assigned inside the loop (converted code carries it with a "defined" flag)."""
    for i in al.range(3):
        y = x * al.cast(i + 1, al.float64)
        x = al.tanh(x + y)
    return x + y


def test_a_variable_first_assigned_in_a_loop():
    check_gradient(first_assigned_in_the_loop, [np.array([0.2, -0.4])], autograph=True)


def test_converted_python_and_the_functional_forms_give_the_same_gradients():
    def functional(x, w):
        def body(x):
            return al.cond(al.reduce_sum(x) > 1.0, lambda: x * w + al.sin(x), lambda: x * w + 1.0)
        return al.while_loop(lambda x: al.reduce_sum(x) < 30.0, body, [x])[0]

    def python(x, w):
        while al.reduce_sum(x) < 30.0:
            if al.reduce_sum(x) > 1.0:
                x = x * w + al.sin(x)
            else:
                x = x * w + 1.0
        return x

    results = []
    for fn, autograph in ((functional, False), (python, True)):
        gradient = al.function(lambda x, w, fn=fn: al.gradients(al.reduce_sum(fn(x, w)), [x, w]), autograph=autograph)
        results.append([g.numpy() for g in gradient(np.array([0.2, 0.3]), np.array(1.7))])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_a_constant_array_read_by_a_rule_in_a_loop():
    """Regression: a rule inside a loop reading a folded constant array (a numpy matrix) failed with
    'truth value of an array is ambiguous'."""
    w = np.array([[0.5, 1.0], [0.0, 2.0]])

    @al.function
    def f(h):
        g = h
        for _ in al.range(3):
            g = al.matmul(g, w)
        return al.gradients(al.reduce_sum(g), [h])[0]

    expected = np.ones((2, 2)) @ np.linalg.matrix_power(w, 3).T
    np.testing.assert_allclose(f(np.ones((2, 2))).numpy(), expected)
