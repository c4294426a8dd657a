"""vectorized_map: every batched form equal to map_fn's per-entry loop, on both backends, and its gradients."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import autoloop as al
from tests.conftest import needs_jax
from autoloop.batching.interpreter import batch_graph
from autoloop.ir import context
from autoloop.ir.graph import Graph
from autoloop.tensor import Tensor
from tests.autodiff.checks import check_gradient


def _same_as_map_fn(fn, elems, backend="numpy", signature=None):
    """vectorized_map(fn) equals map_fn(fn) traced on `backend`, and eagerly; returns the traced concrete graph."""
    vectorized = al.function(lambda e: al.vectorized_map(fn, e), backend=backend, autograph=False)
    looped = al.function(lambda e: al.map_fn(fn, e, fn_output_signature=signature), autograph=False)
    expected = al.nest.flatten(looped(elems))
    for got in (vectorized(elems), al.vectorized_map(fn, elems)):
        got = al.nest.flatten(got)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape, (g, e)
            np.testing.assert_array_equal(g.numpy(), e.numpy())
    return vectorized.get_concrete_function(elems).graph


def _ops(graph):
    return [node.op for node in graph.walk()]


X = np.arange(24, dtype=np.float32).reshape(4, 2, 3) / 7.0 - 1.0
W = np.linspace(-1, 1, 12).astype(np.float32).reshape(3, 4)

OP_CASES = {
    "elementwise": (lambda x: al.tanh(x) * 2.0 + al.constant([1.0, 2.0, 3.0]), None),
    "reductions": (lambda x: (al.reduce_sum(x), al.reduce_max(x, axis=1), al.reduce_mean(x, axis=-2, keepdims=True)),
                   (al.float32, al.float32, al.float32)),
    "argmax": (lambda x: al.argmax(x, axis=1), al.int64),
    "matmul": (lambda x: al.matmul(x, W), None),
    "reshape": (lambda x: al.reshape(x, [3, 2]) + al.reshape(x, [-1])[0], None),
    "slices": (lambda x: (x[1:, 2], x[:, 0], x[-1]), (al.float32, al.float32, al.float32)),
    "gather": (lambda x: al.gather(x, [2, 0], axis=1), None),
    "joins": (lambda x: (al.stack([x, al.ones([2, 3])], axis=1), al.concat([x, x * 2.0], axis=-1)),
              (al.float32, al.float32)),
    "axes": (lambda x: (al.transpose(x), al.squeeze(al.expand_dims(x, 0)), al.tile(x, [2, 1])),
             (al.float32, al.float32, al.float32)),
    "shape": (lambda x: (al.cast(al.shape(x), al.float32), al.cast(al.size(x), al.float32)),
              (al.float32, al.float32)),
    "where": (lambda x: al.where(x > 0.0, x, al.zeros_like(x)), None),
    # what backward passes are made of (a Jacobian batches them over its rows)
    "broadcast and sum back": (lambda x: (al.broadcast_to(x[:, :1], [4, 2, 3]), _sum_to_shape(x, [3]),
                                          _sum_to_shape(x, [1, 3]), al.ensure_shape(x, [2, None])),
                               (al.float32,) * 4),
    "einsum": (lambda x: (al.einsum("ij,jk->ik", x, W), al.einsum("ij->j", x)), (al.float32, al.float32)),
    "scatter and gather": (lambda x: (al.scatter_nd([[1], [0]], x, [3, 3]), al.gather_nd(x, [[1, 2], [0, 0]]),
                                      al.gather_nd(x, [[[1]], [[0]]])), (al.float32,) * 3),
    "matrices": (lambda x: (al.linalg.inv(_spd(x)), al.linalg.cholesky(_spd(x))), (al.float32, al.float32)),
    "pad and roll": (lambda x: (al.pad(x, [[1, 0], [0, 2]]), al.roll(x, 1, axis=1)), (al.float32, al.float32)),
}


def _spd(x):
    """A symmetric positive definite 3 x 3 matrix made from a 2 x 3 entry."""
    return al.matmul(x, x, transpose_a=True) + 3.0 * al.eye(3)


def _sum_to_shape(x, shape):
    from autoloop.ops.gradient_support import sum_to_shape
    return sum_to_shape(x, al.constant(shape))


@pytest.mark.parametrize("case", sorted(OP_CASES))
def test_batched_ops_equal_the_per_entry_loop(case):
    fn, signature = OP_CASES[case]
    graph = _same_as_map_fn(fn, X, signature=signature)
    assert "While" not in _ops(graph)  # one pass over the batch, no loop over entries


def test_gather_with_per_entry_indices_and_one_hot():
    table = al.constant(W)
    ids = np.array([[0, 2], [1, 1], [2, 0]], np.int32)
    _same_as_map_fn(lambda i: (al.gather(table, i), al.one_hot(i, 3)), ids, signature=(al.float32, al.float32))


def halve_until_small(x):
    steps = 0
    while x > 1.0:
        x = x / 2.0
        steps += 1
    return x, steps


@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_a_per_entry_while_runs_each_trip_count_compacted(target):
    x = np.array([0.5, 3.0, 40.0, 1000.0, 7.0], np.float32)
    graph = _same_as_map_fn(halve_until_small, x, backend=target, signature=(al.float32, al.int32))
    (scan,) = [node for node in graph.walk() if node.op == "Scan"]
    assert scan.attrs["compaction"] == "compact"


def test_maximum_iterations_caps_each_entry():
    def fn(x):
        return al.while_loop(lambda v: v > 1.0, lambda v: v / 2.0, [x], maximum_iterations=3)[0]
    _same_as_map_fn(fn, np.array([0.5, 3.0, 40.0, 1000.0], np.float32))


def test_a_shared_condition_stays_one_while_loop():
    def fn(x):
        i = al.constant(0)
        while i < 3:
            x = x * 2.0 + 1.0
            i += 1
        return x
    graph = _same_as_map_fn(fn, X)
    assert "While" in _ops(graph) and "Scan" not in _ops(graph)


def test_per_entry_branch_runs_no_loop_for_entries_that_do_not_take_it():
    def fn(x):
        if x > 0.0:
            while x != 0.0:  # would never end for a negative or fractional x
                x = x - 1.0
        else:
            x = x * 10.0
        return x
    _same_as_map_fn(fn, np.array([3.0, -1.5, 0.0, 2.0, -0.25], np.float32))


def test_nested_per_entry_loops_and_branches():
    def fn(x):
        total = 0.0
        while x > 1.0:
            if x > 10.0:
                x = x / 3.0
            else:
                x = x - 1.0
            inner = x
            while inner > 0.5:
                inner = inner * 0.5
                total += inner
        return x, total
    _same_as_map_fn(fn, np.array([0.5, 2.5, 40.0, 12.0], np.float32), signature=(al.float32, al.float32))


def test_closures_are_shared_by_every_entry():
    scale = al.constant(3.0)
    limit = al.constant(20.0)

    def fn(x):
        while x < limit:
            x = x * scale
        return x
    _same_as_map_fn(fn, np.array([1.0, 0.5, 30.0], np.float32))


def test_an_op_without_a_rule_runs_per_entry_or_raises():
    def fn(n):
        return al.fill([2], n) * 2
    n = np.array([3, 0, 5], np.int32)
    with pytest.warns(UserWarning, match="runs Fill .* once per entry"):
        graph = _same_as_map_fn(fn, n)
    assert "While" in _ops(graph)  # the range ran once per entry
    with pytest.raises(ValueError, match=r"cannot batch Fill .*fallback_to_while_loop=True"):
        al.vectorized_map(fn, n, fallback_to_while_loop=False)


def test_an_ops_registration_can_give_its_own_batch_rule(monkeypatch):
    from autoloop.ops import registry
    from autoloop.ops.api import broadcast_to, concat, shape

    def fill_rule(node, inputs, batched, batching):  # fill(dims, value) with a value per entry
        dims, value = inputs
        target = concat([shape(value), dims], 0)
        return [broadcast_to(al.reshape(value, concat([shape(value), al.ones_like(dims)], 0)), target)], [True]

    monkeypatch.setattr(registry.get("Fill"), "batch", fill_rule)
    graph = _same_as_map_fn(lambda n: al.fill([2], n) * 2, np.array([3, 0, 5], np.int32))
    assert "While" not in _ops(graph)  # no loop over entries: the registration's rule ran


def test_lists_appended_per_entry_are_refused_clearly():
    def collect(x):
        out = []
        while x > 1.0:
            x = x / 2.0
            out.append(x)
        return x
    with pytest.raises(NotImplementedError, match="TensorArray or a list appended to in a loop"):
        al.vectorized_map(collect, al.constant([3.0, 40.0]))


def test_nested_elems_and_results():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    out = al.vectorized_map(lambda e: {"s": e[0] * al.cast(al.reduce_sum(e[1]), al.float32), "k": 7}, (a, b))
    np.testing.assert_array_equal(out["s"].numpy(), a * b.sum(1))
    np.testing.assert_array_equal(out["k"].numpy(), [7, 7, 7])  # a shared result is given to every entry


def test_batch_graph_is_a_reusable_transformation():
    graph = Graph("one")
    with context.building(graph):
        x = Tensor(value=graph.add_input(al.float32, al.TensorShape([3])))
        w = Tensor(value=graph.add_input(al.float32, al.TensorShape([3])))
        graph.outputs = [al.reduce_sum(x * w)._value]
    batched, flags = batch_graph(graph, [True, False], size=5)
    assert flags == [True] and batched.inputs[0].shape.as_list() == [5, 3]
    assert batched.outputs[0].shape.as_list() == [5]


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match="callable"):
        al.vectorized_map(None, al.constant([1.0]))
    with pytest.raises(ValueError, match="axis 0"):
        al.vectorized_map(lambda x: x, al.constant(1.0))


def _gradient_fn(x, w):
    def one(v):
        while al.reduce_sum(v * v) > 1.0:
            v = al.tanh(v * w) * 0.9
        if v[0] > 0.0:
            v = v * w
        return al.reduce_sum(v * v)
    return al.vectorized_map(one, x)


def test_gradients_through_per_entry_loops_match_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.normal(size=[5, 3]) * 2.0
    w = rng.normal(size=[3]) * 0.5 + 1.5
    check_gradient(_gradient_fn, [x, w], rtol=1e-5, atol=1e-6)


# -- generated functions: per-entry loops and branches ---------------------------------------------
_STEP = st.sampled_from(["scale", "shift", "square_root", "loop", "branch", "reduce"])


def _build(program):
    """A function of one entry (a vector of 3) from a list of steps, using while_loop/cond directly."""
    def run(x, steps):
        for step, value in steps:
            if step == "scale":
                x = x * value
            elif step == "shift":
                x = x + value - al.reduce_mean(x)
            elif step == "square_root":
                x = al.sqrt(al.abs(x) + value)
            elif step == "reduce":
                x = x - al.reduce_max(x) * value
            elif step == "loop":
                x = al.while_loop(lambda v: al.reduce_sum(al.abs(v)) > abs(value) * 3.0 + 0.5,
                                  lambda v: v * 0.5 - 0.01, [x])[0]
            else:
                inner = [s for s in steps[:1] if s[0] != "branch"]
                x = al.cond(al.reduce_sum(x) > value, lambda: run(x * 2.0, inner), lambda: x - value)
        return x
    return lambda x: run(x, program)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_STEP, st.floats(-2.0, 2.0, width=32)), min_size=1, max_size=4),
       st.lists(st.floats(-50.0, 50.0, width=32), min_size=6, max_size=12))
def test_generated_programs_equal_map_fn(program, values):
    elems = np.array(values[:len(values) // 3 * 3], np.float32).reshape(-1, 3)
    _same_as_map_fn(_build(program), elems)


@needs_jax
@settings(max_examples=4, deadline=None)
@example([("shift", 0.0), ("branch", 0.0)], [0.0, 0.0, 0.0, 0.0, 0.0, 5.0])  # a branch on a sum that rounds near 0
@given(st.lists(st.tuples(_STEP, st.floats(-2.0, 2.0, width=32)), min_size=1, max_size=3),
       st.lists(st.floats(-50.0, 50.0, width=32), min_size=6, max_size=9))
def test_generated_programs_equal_map_fn_on_jax(program, values):
    elems = np.array(values[:len(values) // 3 * 3], np.float32).reshape(-1, 3)
    vectorized = al.function(lambda e: al.vectorized_map(_build(program), e), backend="jax", autograph=False)
    # map_fn on JAX too: XLA's sums may round differently from numpy's, and a branch on a sum near 0 then differs
    expected = al.function(lambda e: al.map_fn(_build(program), e), backend="jax", autograph=False)(elems)
    np.testing.assert_allclose(vectorized(elems).numpy(), expected.numpy(), rtol=2e-6, atol=1e-6)

