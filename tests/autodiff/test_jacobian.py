"""GradientTape.jacobian / batch_jacobian and UnconnectedGradients."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al

from .checks import BACKENDS


def _program(x):
    y = x
    for _ in range(3):
        y = al.sin(y) * x + al.reduce_sum(x)
    return y


def _numeric_jacobian(fn, x, step=1e-6):
    x = np.asarray(x, np.float64)
    columns = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = step
        plus = fn(x + e.reshape(x.shape))
        minus = fn(x - e.reshape(x.shape))
        columns.append(((plus - minus) / (2 * step)).ravel())
    return np.stack(columns, axis=1).reshape(np.shape(fn(x)) + x.shape)


def _eval(x):
    return _program(al.constant(x)).numpy()


def test_eager_jacobian_matches_finite_differences():
    x0 = np.array([0.3, -0.7, 1.1])
    x = al.constant(x0)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = _program(x)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), _numeric_jacobian(_eval, x0), rtol=1e-6, atol=1e-8)


def _loop_jacobian(x, **options):
    with al.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in al.range(3):
            y = al.sin(y) * x + al.reduce_sum(x)
    return tape.jacobian(y, x, **options)


def _traced_jacobian(backend_name, use_pfor):
    return al.function(lambda x: _loop_jacobian(x, experimental_use_pfor=use_pfor), backend=backend_name)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_traced_jacobian_without_pfor_is_one_row_loop(backend_name):
    x0 = np.array([[0.3, -0.7], [1.1, 0.2]])
    f = _traced_jacobian(backend_name, False)
    np.testing.assert_allclose(f(x0).numpy(), _numeric_jacobian(_eval, x0), rtol=1e-6, atol=1e-8)
    graph = f.get_concrete_function(x0).graph
    rows = [n for n in graph.nodes if n.op == "While"]
    assert len(rows) == 2  # the forward loop and the row loop: the backward pass is not unrolled per row
    assert any(n.op == "While" for n in rows[1].attrs["body"].nodes)  # one backward loop, inside the rows


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_traced_jacobian_with_pfor_is_one_batched_backward_loop(backend_name, recwarn):
    x0 = np.array([[0.3, -0.7], [1.1, 0.2]])
    f = _traced_jacobian(backend_name, True)
    found = f(x0).numpy()
    np.testing.assert_allclose(found, _numeric_jacobian(_eval, x0), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(found, _traced_jacobian(backend_name, False)(x0).numpy())
    graph = f.get_concrete_function(x0).graph
    loops = [n for n in graph.nodes if n.op == "While"]
    assert len(loops) == 2  # the forward loop, and the backward loop run once for all 4 rows
    backward = loops[1]
    assert not any(n.op in ("While", "Scan") for n in backward.attrs["body"].nodes)
    assert (4, 2, 2) in [tuple(v.shape.as_list()) for v in backward.outputs]  # cotangents, rows on axis 0
    assert not recwarn.list  # every op of the backward pass batched: no fallback


def test_unconnected_and_structures():
    x, z = al.constant([1.0, 2.0]), al.constant([3.0, 4.0, 5.0])
    with al.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    found = tape.jacobian(y, {"x": x, "z": z})
    np.testing.assert_array_equal(found["x"].numpy(), np.eye(2) * 2)
    assert found["z"] is None
    zeros = tape.jacobian(y, z, unconnected_gradients=al.UnconnectedGradients.ZERO)
    assert zeros.shape == (2, 3) and not zeros.numpy().any()
    assert tape.gradient(y, z, unconnected_gradients="zero").shape == (3,)
    with pytest.raises(ValueError, match="UnconnectedGradients.NONE or .ZERO"):
        tape.gradient(y, z, unconnected_gradients="zeros")


def test_tape_rules():
    x = al.constant([1.0, 2.0])
    with al.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.jacobian(y, x)
    with pytest.raises(RuntimeError, match="one set of gradients"):
        tape.jacobian(y, x)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.jacobian(y, x, experimental_use_pfor=False)


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("traced", [False, True])
def test_batch_jacobian(traced, use_pfor):
    x0 = np.random.default_rng(0).standard_normal((3, 2))
    w = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])

    def per_example(x):
        return al.tanh(al.matmul(x, w))

    def run(x):
        with al.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = per_example(x)
        return tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor)

    found = (al.function(run)(x0) if traced else run(al.constant(x0))).numpy()
    assert found.shape == (3, 3, 2)
    for b in range(3):
        expected = _numeric_jacobian(lambda row: per_example(al.constant(row[None]))[0].numpy(), x0[b])
        np.testing.assert_allclose(found[b], expected, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="batch size"):
        with al.GradientTape() as tape:
            x = al.constant(x0)
            tape.watch(x)
            y = al.reduce_sum(x, axis=1)[:2]
        tape.batch_jacobian(y, x)


def _with_tensor_array(x, use_pfor):
    with al.GradientTape() as tape:
        tape.watch(x)
        frames = al.TensorArray(al.float64, size=3)
        y = x
        for i in al.range(3):
            y = al.sin(y) * x
            frames = frames.write(i, y)
        stacked = frames.stack()
    return tape.jacobian(stacked, x, experimental_use_pfor=use_pfor)


def test_a_backward_pass_that_cannot_be_batched_is_the_row_loop_with_a_warning():
    x0 = np.array([0.3, 0.5])
    looped = al.function(lambda x: _with_tensor_array(x, False))(x0).numpy()
    with pytest.warns(UserWarning, match=r"jacobian at .*test_jacobian.py:\d+ computes its rows one at a time .*"
                                         r"TensorArray .*experimental_use_pfor=False"):
        vectorized = al.function(lambda x: _with_tensor_array(x, True))(x0).numpy()
    np.testing.assert_array_equal(vectorized, looped)
    with pytest.warns(UserWarning, match="computes its rows one at a time .*TensorArray"):
        eager = _with_tensor_array(al.constant(x0), True).numpy()  # stops batching midway, leaving nothing
    np.testing.assert_allclose(eager, looped, rtol=1e-12)
    expected = _numeric_jacobian(lambda v: _with_tensor_array_value(v), x0)
    np.testing.assert_allclose(vectorized, expected, rtol=1e-6, atol=1e-8)


def _with_tensor_array_value(x):
    y, rows = al.constant(x), []
    for _ in range(3):
        y = al.sin(y) * x
        rows.append(y.numpy())
    return np.stack(rows)


def test_an_op_without_a_batching_rule_runs_once_per_row_with_a_warning():
    x0 = np.array([0.3, -0.7])
    a = np.array([[2.0, 1.0], [0.5, 3.0]])

    def run(x, use_pfor):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = al.linalg.solve(a, x[:, None])[:, 0]  # its gradient solves with the cotangent: a MatrixSolve
        return tape.jacobian(y, x, experimental_use_pfor=use_pfor)

    with pytest.warns(UserWarning, match=r"GradientTape.jacobian runs MatrixSolve .* once per entry"):
        vectorized = al.function(lambda x: run(x, True))(x0).numpy()
    np.testing.assert_array_equal(vectorized, al.function(lambda x: run(x, False))(x0).numpy())
    np.testing.assert_allclose(vectorized, np.linalg.inv(a), rtol=1e-12)


def test_eagerly_a_recorded_call_of_a_traced_loop_is_vectorized_too(recwarn):
    """The call's backward graph (its loop popping the stacks the call saved) is built into the batched
    program, its saved values as constants."""
    @al.function
    def inner(x):
        y = x
        for _ in al.range(3):
            y = al.sin(y) * x
        return y

    x = al.constant([0.3, -0.7, 0.4])
    with al.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = inner(x) * 2.0 + inner(x * x)
    vectorized = tape.jacobian(y, x).numpy()
    assert not recwarn.list
    np.testing.assert_allclose(vectorized, tape.jacobian(y, x, experimental_use_pfor=False).numpy(), rtol=1e-12)

    def value(v):
        plain = inner.python_function
        return (plain(al.constant(v)) * 2.0 + plain(al.constant(v * v))).numpy()
    np.testing.assert_allclose(vectorized, _numeric_jacobian(value, x.numpy()), rtol=1e-6, atol=1e-8)


def test_eagerly_a_checkpointed_loop_makes_the_row_loop_with_a_warning():
    x = al.constant([0.3, -0.7])
    with al.GradientTape(persistent=True) as tape:
        tape.watch(x)
        _, y = al.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, al.sin(y) * x), (0, x), checkpoint=True)
    with pytest.warns(UserWarning, match="the tape recorded a checkpointed while loop, whose backward pass runs "
                                         "eagerly only"):
        vectorized = tape.jacobian(y, x).numpy()
    np.testing.assert_array_equal(vectorized, tape.jacobian(y, x, experimental_use_pfor=False).numpy())


@pytest.mark.parametrize("traced", [False, True])
def test_vectorized_jacobian_of_a_target_whose_size_is_known_only_when_it_runs(traced):
    def run(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = al.boolean_mask(x, x > 0.0) ** 2.0
        return tape.jacobian(y, x)

    x0 = np.array([0.5, -1.0, 2.0])
    found = (al.function(run, input_signature=[al.TensorSpec([None], al.float64)])(x0) if traced
             else run(al.constant(x0))).numpy()
    np.testing.assert_allclose(found, [[1.0, 0.0, 0.0], [0.0, 0.0, 4.0]])


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_parallel_iterations_vectorizes_that_many_rows_at_a_time(backend_name):
    """TensorFlow's memory knob: the batched backward pass runs on 3 rows at a time in a loop (the last
    chunk holds one real row), with the same Jacobian; the size may be known only when it runs."""
    x0 = np.array([0.3, -0.7, 1.1, 0.2, 0.5, 0.9, -0.4])
    looped = _traced_jacobian(backend_name, False)(x0).numpy()

    def chunked(x):
        return _loop_jacobian(x, parallel_iterations=3)

    for f in (al.function(chunked, backend=backend_name),
              al.function(chunked, input_signature=[al.TensorSpec([None], al.float64)])):
        np.testing.assert_allclose(f(x0).numpy(), looped, rtol=1e-12)
    np.testing.assert_allclose(chunked(al.constant(x0)).numpy(), looped, rtol=1e-12)
    graph = al.function(chunked, backend=backend_name).get_concrete_function(x0).graph
    chunk_loop = [n for n in graph.nodes if n.op == "While"][1]
    backward = [n for n in chunk_loop.attrs["body"].nodes if n.op == "While"]
    assert len(backward) == 1 and (3, 7) in [tuple(v.shape.as_list()) for v in backward[0].outputs]
    with pytest.raises(ValueError, match="parallel_iterations must be a positive integer"):
        _eager_jacobian(x0, parallel_iterations=0)


def _eager_jacobian(x0, **options):
    x = al.constant(x0)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return tape.jacobian(y, x, **options)


@pytest.mark.parametrize("traced", [False, True])
def test_jacobian_for_variables_read_in_a_traced_loop(traced):
    """A variable source is its reads (the tape's watch points), through a call of a traced function too;
    one never read is None, or zeros with UnconnectedGradients.ZERO."""
    w, unused = al.Variable(np.array([0.5, -0.2, 0.3])), al.Variable(np.array([1.0, 2.0]))

    @al.function
    def inner(x):
        y = x
        for _ in al.range(3):
            y = al.tanh(y * w) + x
        return y

    def jacobians(x):
        with al.GradientTape(persistent=True) as tape:
            y = inner(x)
        return (tape.jacobian(y, [w, unused]), tape.jacobian(y, w, experimental_use_pfor=False),
                tape.jacobian(y, unused, unconnected_gradients="zero"))

    x0 = np.array([0.3, -0.7, 0.4])
    (vectorized, none), looped, zeros = (al.function(jacobians) if traced else jacobians)(al.constant(x0))
    assert none is None and zeros.shape == (3, 2) and not zeros.numpy().any()
    np.testing.assert_allclose(vectorized.numpy(), looped.numpy(), rtol=1e-12)

    def value(v):
        y = al.constant(x0)
        for _ in range(3):
            y = al.tanh(y * v) + x0
        return y.numpy()
    np.testing.assert_allclose(vectorized.numpy(), _numeric_jacobian(value, w.numpy()), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_newton_steps_in_a_graph_loop_take_a_vectorized_jacobian_of_loop_code(backend_name, recwarn):
    """The Jacobian built inside a while loop's body (its batched backward loop nested there)."""
    target = np.array([0.2, -0.1, 0.3])

    def residual(x):
        y = x
        for _ in al.range(3):
            y = al.tanh(y) + 0.5 * x
        return y - target

    def newton(x, use_pfor):
        for _ in al.range(6):
            with al.GradientTape() as tape:
                tape.watch(x)
                r = residual(x)
            step = al.linalg.solve(tape.jacobian(r, x, experimental_use_pfor=use_pfor), r[:, None])
            x = x - step[:, 0]
        return x, residual(x)

    x0 = np.array([0.5, 0.5, 0.5])
    (x, r), (looped, _) = [al.function(lambda x: newton(x, p), backend=backend_name)(x0) for p in (True, False)]
    assert np.abs(r.numpy()).max() < 1e-9
    np.testing.assert_allclose(x.numpy(), looped.numpy(), rtol=1e-12)
    assert not [w for w in recwarn.list if "jacobian" in str(w.message)]
