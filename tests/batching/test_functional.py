"""map_fn, foldl, foldr: against their plain-Python reference, eagerly, traced, on JAX, and differentiated."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import autoloop as al
from tests.autodiff.checks import check_gradient

Pair = collections.namedtuple("Pair", "a b")
BACKENDS = ["numpy", "jax"]


def _modes(fn, target):
    """fn run eagerly and as a traced function on `target`."""
    return [fn, al.function(fn, autograph=False, backend=target)]


@pytest.mark.parametrize("target", BACKENDS)
def test_map_fn_matches_a_python_loop(target):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for run in _modes(lambda x: al.map_fn(lambda row: al.reduce_sum(row * row), x,
                                          fn_output_signature=al.float32), target):
        np.testing.assert_allclose(run(x).numpy(), [np.sum(r * r) for r in x])
    for run in _modes(lambda x: al.map_fn(lambda row: row * 2.0, x), target):
        out = run(x)
        assert out.shape.as_list() == [4, 3]
        np.testing.assert_array_equal(out.numpy(), x * 2)


@pytest.mark.parametrize("target", BACKENDS)
def test_map_fn_nested_elems_and_signature(target):
    a = np.arange(3, dtype=np.float32)
    b = np.arange(3, dtype=np.int32) + 10

    def fn(a, b):
        return al.map_fn(lambda e: {"sum": e.a + al.cast(e.b, al.float32), "b": e.b * 2}, Pair(a, b),
                         fn_output_signature={"sum": al.float32, "b": al.TensorSpec([], al.int32)})

    for run in _modes(fn, target):
        out = run(a, b)
        np.testing.assert_array_equal(out["sum"].numpy(), a + b)
        np.testing.assert_array_equal(out["b"].numpy(), b * 2)


def test_map_fn_dtype_alias_and_unknown_length():
    f = al.function(lambda x: al.map_fn(lambda v: v > 1.0, x, dtype=al.bool),
                    input_signature=[al.TensorSpec([None], al.float32)], autograph=False)
    np.testing.assert_array_equal(f(np.array([0.5, 2.0, 3.0], np.float32)).numpy(), [False, True, True])
    np.testing.assert_array_equal(f(np.zeros([0], np.float32)).numpy(), np.zeros([0], bool))


def test_map_fn_errors_name_the_fix():
    x = al.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="fn_output_signature"):
        al.map_fn(lambda v: al.cast(v, al.int32), x)
    with pytest.raises(TypeError, match="structure"):
        al.map_fn(lambda v: (v, v), x)
    with pytest.raises(TypeError, match="callable"):
        al.map_fn(3, x)
    with pytest.raises(ValueError, match="different lengths"):
        al.map_fn(lambda e: e[0], (x, al.constant([1.0])))
    with pytest.raises(ValueError, match="pass both|not both"):
        al.map_fn(lambda v: v, x, dtype=al.float32, fn_output_signature=al.float32)


@pytest.mark.parametrize("target", BACKENDS)
def test_folds_match_python(target):
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    cases = [
        (lambda x: al.foldl(lambda acc, v: acc * 2.0 + v, x), 1 * 8 + 2 * 4 + 3 * 2 + 4),
        (lambda x: al.foldr(lambda acc, v: acc * 2.0 + v, x), 4 * 8 + 3 * 4 + 2 * 2 + 1),
        (lambda x: al.foldl(lambda acc, v: acc * 2.0 + v, x, initializer=al.constant(1.0)), 16 + 26),
        (lambda x: al.foldr(lambda acc, v: acc - v, x, initializer=al.constant(0.0)), -10),
    ]
    for fn, expected in cases:
        for run in _modes(fn, target):
            assert run(x).numpy() == expected


def test_fold_nested_accumulator_and_elems():
    x = al.constant([1.0, 2.0, 3.0])
    total, count = al.foldl(lambda acc, e: (acc[0] + e["v"] * e["w"], acc[1] + 1), {"v": x, "w": x * 2.0},
                            initializer=(al.constant(0.0), al.constant(0)))
    assert total.numpy() == 28.0 and count.numpy() == 3
    with pytest.raises(ValueError, match="initializer"):
        al.foldl(lambda a, v: a + v, al.zeros([0]))
    with pytest.raises(TypeError, match="float32 value where int32"):
        al.foldl(lambda a, v: v, x, initializer=al.constant(0))


@pytest.mark.parametrize("op", ["map", "foldl", "foldr"])
def test_gradients_match_finite_differences(op):
    def fn(x, w):
        if op == "map":
            return al.map_fn(lambda row: al.tanh(al.reduce_sum(row * w)), x, fn_output_signature=al.float64)
        fold = al.foldl if op == "foldl" else al.foldr
        return fold(lambda acc, row: al.sin(acc) * w[0] + row, x)

    rng = np.random.default_rng(3)
    check_gradient(fn, [rng.normal(size=[4, 2]), rng.normal(size=[2])])


def test_functional_loops_in_a_tf1_session():
    import autoloop.compat.v1 as v1
    graph = v1.Graph()
    with graph.as_default():
        x = v1.placeholder(v1.float32, [4])
        squares = v1.map_fn(lambda v: v * v, x)
        total = v1.foldr(lambda acc, v: acc * 2.0 + v, x)
        halved = v1.vectorized_map(lambda v: v1.while_loop(lambda v: v > 1.0, lambda v: v / 2.0, [v]), x)
        with v1.Session(graph=graph) as session:
            found = session.run([squares, total, halved], feed_dict={x: np.array([1.0, 2.0, 3.0, 40.0], np.float32)})
    np.testing.assert_array_equal(found[0], [1.0, 4.0, 9.0, 1600.0])
    assert found[1] == 40 * 8 + 3 * 4 + 2 * 2 + 1
    np.testing.assert_array_equal(found[2], [1.0, 1.0, 0.75, 0.625])
