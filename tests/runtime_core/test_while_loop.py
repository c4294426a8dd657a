"""`while_loop`: the rules of the seed documents, each checked eagerly and traced.

Every test takes the `mode` fixture (conftest.py), which runs the function
as a plain call or as ``function(fn, autograph=False)``; traced runs are
also replayed in checked mode.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import autoloop as tf
from .helpers import to_numpy

Pair = collections.namedtuple("Pair", "j, k")


def ones(*shape, dtype=np.float32):
    return tf.constant(np.ones(shape, dtype))


# -- the seed examples ---------------------------------------------------------------
def test_counter_example(mode):
    def counter(i):
        c = lambda i: tf.less(i, 10)
        b = lambda i: (tf.add(i, 1),)
        return tf.while_loop(c, b, [i])[0]

    assert mode(counter, tf.constant(0)).numpy() == 10


def test_tf1_counter_with_bare_body_return(mode):
    def counter(i):
        return tf.while_loop(lambda i: tf.less(i, 10), lambda i: tf.add(i, 1), [i])

    result = mode(counter, tf.constant(0))
    assert isinstance(result, list) and len(result) == 1
    assert result[0].numpy() == 10


def test_single_bare_loop_var_gives_a_bare_result(mode):
    def counter(i):
        return tf.while_loop(lambda i: i < 10, lambda i: i + 1, i)

    result = mode(counter, tf.constant(3))
    assert isinstance(result, tf.Tensor) and result.numpy() == 10


def test_namedtuple_pair(mode):
    def pairs(i, j, k):
        ijk_0 = (i, Pair(j, k))
        c = lambda i, p: i < 10
        b = lambda i, p: (i + 1, Pair((p.j + p.k), (p.j - p.k)))
        return tf.while_loop(c, b, ijk_0)[1]

    final = mode(pairs, tf.constant(0), tf.constant(1), tf.constant(2))
    assert isinstance(final, Pair)
    assert (final[0].numpy(), final[1].numpy()) == (32, 64)


def test_shape_invariant_concat(mode):
    def grow(i0, m0):
        c = lambda i, m: i < 10
        b = lambda i, m: [i + 1, tf.concat([m, m], axis=0)]
        return tf.while_loop(c, b, loop_vars=[i0, m0],
                             shape_invariants=[i0.get_shape(), tf.TensorShape([None, 2])])[1]

    result = mode(grow, tf.constant(0), ones(2, 2))
    assert result.shape == tf.TensorShape([2048, 2])
    assert result.dtype is tf.float32
    np.testing.assert_array_equal(result.numpy(), np.ones((2048, 2), np.float32))
    if mode.traced:
        assert mode.concrete.outputs[0].shape == tf.TensorShape([None, 2])


def test_sum_square2(mode):
    def sum_square2(n):
        i, result = tf.constant(0), tf.constant(0)
        c = lambda i, _: tf.less(i, n)
        b = lambda i, result: (i + 1, result + i * i)
        return tf.while_loop(c, b, [i, result])[1]

    assert mode(sum_square2, tf.constant(10)).numpy() == 285
    assert mode(sum_square2, tf.constant(0)).numpy() == 0


def test_numpy_and_python_loop_vars_become_tensors(mode):
    def loop(n):
        return tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 2.0), [0, np.float32(1.5)])

    i, x = mode(loop, tf.constant(3))
    assert (i.numpy(), x.numpy()) == (3, 12.0)
    assert (i.dtype, x.dtype) == (tf.int32, tf.float32)


# -- nested structures -------------------------------------------------------------------
def test_nested_structures_come_back_in_the_same_structure(mode):
    def loop(n, x):
        loop_vars = (n, [x, {"b": x * 2.0, "a": (x, Pair(n, n))}])

        def cond(count, rest):
            return count > 0

        def body(count, rest):
            x, d = rest
            return (count - 1, [x + 1.0, {"a": (d["a"][0] * 2.0, Pair(d["a"][1].j + 1, d["a"][1].k)),
                                          "b": d["b"] - 1.0}])

        return tf.while_loop(cond, body, loop_vars)

    count, (x, d) = result = mode(loop, tf.constant(3), tf.constant(1.0))
    assert isinstance(result, tuple) and isinstance(result[1], list) and isinstance(d, dict)
    assert isinstance(d["a"], tuple) and isinstance(d["a"][1], Pair)
    assert list(d) == ["b", "a"]  # the user's key order survives
    assert to_numpy(result) == (0, [4.0, {"b": -1.0, "a": (8.0, Pair(6, 3))}])


def test_body_may_return_a_list_for_a_tuple(mode):
    def loop(i):
        return tf.while_loop(lambda i, j: i < 5, lambda i, j: [i + 1, j + 2], (i, i))

    result = mode(loop, tf.constant(0))
    assert isinstance(result, tuple)
    assert to_numpy(result) == (5, 10)


def test_dict_loop_vars_are_passed_as_one_argument(mode):
    def loop(n):
        state = {"i": tf.constant(0), "total": tf.constant(0)}
        return tf.while_loop(lambda s: s["i"] < n,
                             lambda s: {"i": s["i"] + 1, "total": s["total"] + s["i"]}, [state])[0]

    assert to_numpy(mode(loop, tf.constant(5))) == {"i": 5, "total": 10}


# -- argument validation ---------------------------------------------------------------
@pytest.mark.parametrize("which", ["cond", "body"])
def test_non_callable_cond_or_body_is_a_type_error(mode, which):
    good = lambda i: i < 3  # noqa: E731
    args = {"cond": good, "body": lambda i: i + 1}
    args[which] = 7

    def loop(i):
        return tf.while_loop(args["cond"], args["body"], [i])

    with pytest.raises(TypeError, match=which):
        mode(loop, tf.constant(0))


@pytest.mark.parametrize("empty", [[], (), {}, None])
def test_empty_loop_vars_is_a_value_error(mode, empty):
    def loop(i):
        return tf.while_loop(lambda *a: True, lambda *a: a, empty)

    with pytest.raises(ValueError, match="loop_vars"):
        mode(loop, tf.constant(0))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, None, "4"])
def test_parallel_iterations_must_be_a_positive_int(mode, bad):
    def loop(i):
        return tf.while_loop(lambda i: i < 3, lambda i: i + 1, [i], parallel_iterations=bad)

    with pytest.raises(ValueError, match="parallel_iterations"):
        mode(loop, tf.constant(0))


@pytest.mark.parametrize("parallel_iterations", [1, 2, 10, 32])
def test_results_do_not_depend_on_parallel_iterations(mode, parallel_iterations):
    def fib(n):
        def body(i, a, b, history):
            return i + 1, b, a + b, history + a
        return tf.while_loop(lambda i, a, b, h: i < n, body,
                             [tf.constant(0), tf.constant(0), tf.constant(1), tf.constant(0)],
                             parallel_iterations=parallel_iterations)

    assert to_numpy(mode(fib, tf.constant(20))) == [20, 6765, 10946, 10945]


# -- shape invariants ----------------------------------------------------------------------
def _assert_names(message: str, *parts: str):
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"


def test_incompatible_shape_is_a_value_error_naming_variable_shapes_and_fix(mode):
    def loop(i, m):
        return tf.while_loop(lambda i, m: i < 3, lambda i, m: (i + 1, tf.concat([m, m], 0)), [i, m])

    with pytest.raises(ValueError) as info:
        mode(loop, tf.constant(0), ones(2, 2))
    _assert_names(str(info.value), "loop_vars[1]", "(2, 2)", "(4, 2)", "shape_invariants",
                  "TensorShape([None, 2])")


def test_incompatible_with_a_partial_invariant(mode):
    def loop(i, m):
        return tf.while_loop(lambda i, m: i < 3, lambda i, m: (i + 1, tf.concat([m, m], 1)), [i, m],
                             shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 2])])

    with pytest.raises(ValueError) as info:
        mode(loop, tf.constant(0), ones(2, 2))
    # Traced, the body sees m at its invariant shape (None, 2), so concat gives (None, 4).
    after = "(None, 4)" if mode.traced else "(2, 4)"
    _assert_names(str(info.value), "loop_vars[1]", after, "(None, 2)", "TensorShape([None, None])")


def test_more_general_shape_is_a_value_error(mode):
    """[None, 2] after one iteration is more general than the invariant [2, 2]."""
    def loop(i, m, k):
        return tf.while_loop(lambda i, m: i < 3, lambda i, m: (i + 1, tf.concat([m, m], 0)[:k]), [i, m])

    if not mode.traced:
        # Eagerly every shape is concrete: [:k] gives (2, 2), so the loop is fine.
        assert mode(loop, tf.constant(0), ones(2, 2), tf.constant(2))[1].shape == tf.TensorShape([2, 2])
        return
    with pytest.raises(ValueError) as info:
        mode(loop, tf.constant(0), ones(2, 2), tf.constant(2))
    _assert_names(str(info.value), "loop_vars[1]", "(2, 2)", "(None, 2)", "shape_invariants", "set_shape")


def test_set_shape_in_body_satisfies_the_invariant(mode):
    def loop(i, m, k):
        def body(i, m):
            grown = tf.concat([m, m], 0)[:k]
            grown.set_shape([2, 2])
            return i + 1, grown * 2.0
        return tf.while_loop(lambda i, m: i < 3, body, [i, m])

    i, m = mode(loop, tf.constant(0), ones(2, 2), tf.constant(2))
    assert m.shape == tf.TensorShape([2, 2])
    np.testing.assert_array_equal(m.numpy(), np.full((2, 2), 8.0, np.float32))


def test_set_shape_with_an_incompatible_shape_is_a_value_error(mode):
    def loop(i, m):
        def body(i, m):
            m.set_shape([3, 2])
            return i + 1, m
        return tf.while_loop(lambda i, m: i < 3, body, [i, m])

    with pytest.raises(ValueError):
        mode(loop, tf.constant(0), ones(2, 2))


def test_initial_value_must_match_its_invariant(mode):
    def loop(i, m):
        return tf.while_loop(lambda i, m: i < 3, lambda i, m: (i + 1, m), [i, m],
                             shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 3])])

    with pytest.raises(ValueError) as info:
        mode(loop, tf.constant(0), ones(2, 2))
    _assert_names(str(info.value), "loop_vars[1]", "(2, 2)", "(None, 3)", "shape invariant")


def test_partial_invariant_lets_a_dimension_vary(mode):
    def loop(n, m):
        def body(i, m):
            return i + 1, tf.concat([m, m[:1] * 3.0], 0)
        return tf.while_loop(lambda i, m: i < n, body, [tf.constant(0), m],
                             shape_invariants=[None, tf.TensorShape([None, 2])])

    i, m = mode(loop, tf.constant(4), ones(1, 2))
    assert m.numpy().shape == (5, 2)
    np.testing.assert_array_equal(m.numpy()[:, 0], [1, 3, 3, 3, 3])


def test_shape_invariants_structure_must_match(mode):
    def loop(i, m):
        return tf.while_loop(lambda i, m: i < 3, lambda i, m: (i + 1, m), [i, m],
                             shape_invariants=[tf.TensorShape([])])

    with pytest.raises(ValueError, match="shape_invariants"):
        mode(loop, tf.constant(0), ones(2, 2))


def test_unknown_rank_invariant_accepts_any_shape(mode):
    def loop(i, m):
        return tf.while_loop(lambda i, m: i < 2, lambda i, m: (i + 1, tf.concat([m, m], 0)), [i, m],
                             shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])

    assert mode(loop, tf.constant(0), ones(3))[1].numpy().shape == (12,)


# -- dtype and structure changes ---------------------------------------------------------
def test_dtype_change_is_a_type_error_naming_both_dtypes(mode):
    def loop(i, x):
        return tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, tf.cast(x, tf.float32)), [i, x])

    with pytest.raises(TypeError) as info:
        mode(loop, tf.constant(0), tf.constant(1))
    _assert_names(str(info.value), "loop_vars[1]", "int32", "float32", "cast")


def test_python_float_from_an_int_loop_var_is_a_dtype_change(mode):
    def loop(i):
        return tf.while_loop(lambda i: i < 3, lambda i: 1.5, [i])

    with pytest.raises(TypeError, match="int32.*float32"):
        mode(loop, tf.constant(0))


@pytest.mark.parametrize("body", [
    lambda i, x: (i + 1, x, x),
    lambda i, x: (i + 1,),
    lambda i, x: (i + 1, (x, x)),
    lambda i, x: {"i": i + 1, "x": x},
], ids=["longer", "shorter", "nested", "dict"])
def test_structure_change_is_a_type_error(mode, body):
    def loop(i, x):
        return tf.while_loop(lambda i, x: i < 3, body, [i, x])

    with pytest.raises(TypeError, match="structure"):
        mode(loop, tf.constant(0), tf.constant(1.0))


def test_body_returning_none_is_a_type_error(mode):
    def loop(i, x):
        return tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, None), [i, x])

    with pytest.raises(TypeError, match="None"):
        mode(loop, tf.constant(0), tf.constant(1.0))


def test_cond_must_return_a_boolean_scalar(mode):
    def loop(i):
        return tf.while_loop(lambda i: i, lambda i: i - 1, [i])

    with pytest.raises(TypeError, match="boolean scalar"):
        mode(loop, tf.constant(3))


# -- maximum_iterations --------------------------------------------------------------------
@pytest.mark.parametrize("limit, expected", [(None, 10), (4, 4), (10, 10), (25, 10), (0, 0)])
def test_maximum_iterations_is_anded_with_cond(mode, limit, expected):
    def loop(i):
        return tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i], maximum_iterations=limit)[0]

    assert mode(loop, tf.constant(0)).numpy() == expected


@pytest.mark.parametrize("limit, expected", [(3, 3), (12, 10), (0, 0)])
def test_maximum_iterations_as_a_tensor(mode, limit, expected):
    def loop(i, limit):
        return tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i], maximum_iterations=limit)[0]

    assert mode(loop, tf.constant(0), tf.constant(limit)).numpy() == expected


def test_maximum_iterations_must_be_a_scalar_integer(mode):
    def loop(i):
        return tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i], maximum_iterations=2.5)

    with pytest.raises(TypeError):
        mode(loop, tf.constant(0))


def test_maximum_iterations_stops_an_endless_loop_and_cond_runs_as_often_as_needed(mode):
    def loop(i):
        return tf.while_loop(lambda i: tf.constant(True), lambda i: i * 2, [i], maximum_iterations=5)[0]

    assert mode(loop, tf.constant(1)).numpy() == 32


# -- options recorded on the While node -------------------------------------------------
def _while_nodes(graph):
    return [node for node in graph.walk() if node.op == "While"]


def test_back_prop_and_swap_memory_are_accepted_and_recorded(mode):
    def loop(i):
        return tf.while_loop(lambda i: i < 4, lambda i: i + 1, [i], back_prop=False, swap_memory=True,
                             parallel_iterations=3, name="counting")[0]

    assert mode(loop, tf.constant(0)).numpy() == 4
    if mode.traced:
        (node,) = _while_nodes(mode.concrete.graph)
        assert node in mode.concrete.graph.nodes
        assert node.attrs["back_prop"] is False
        assert node.attrs["swap_memory"] is True
        assert node.attrs["parallel_iterations"] == 3
        assert node.name == "counting"


def test_while_node_default_options(mode):
    if not mode.traced:
        pytest.skip("graph attributes exist only when traced")

    def loop(i):
        return tf.while_loop(lambda i: i < 4, lambda i: i + 1, [i])[0]

    mode(loop, tf.constant(0))
    (node,) = [n for n in mode.concrete.graph.nodes if n.op == "While"]
    assert (node.attrs["back_prop"], node.attrs["swap_memory"], node.attrs["parallel_iterations"]) == (True, False, 10)


# -- tracing calls cond and body exactly once --------------------------------------------
def test_cond_and_body_are_called_once_while_tracing(mode):
    calls = collections.Counter()

    def cond(i, total):
        calls["cond"] += 1
        return i < 10

    def body(i, total):
        calls["body"] += 1
        return i + 1, total + i

    def loop(i):
        return tf.while_loop(cond, body, [i, tf.constant(0)])[1]

    assert mode(loop, tf.constant(0)).numpy() == 45
    if mode.traced:
        assert calls == {"cond": 1, "body": 1}
    else:
        assert calls == {"cond": 11, "body": 10}


# -- captures, nesting, branches -----------------------------------------------------------
def test_captured_outer_tensors(mode):
    def loop(n, step, scale):
        offset = step * 2
        return tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + step, acc + i * scale + offset),
                             [tf.constant(0), tf.constant(0)])

    i, acc = mode(loop, tf.constant(7), tf.constant(2), tf.constant(3))
    assert (i.numpy(), acc.numpy()) == (8, sum(k * 3 + 4 for k in range(0, 7, 2)))


def test_nested_while_loops(mode):
    def table(n):
        def outer_body(i, total):
            inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + i * j + n),
                                  [tf.constant(0), tf.constant(0)])[1]
            return i + 1, total + inner
        return tf.while_loop(lambda i, total: i < n, outer_body, [tf.constant(0), tf.constant(0)])[1]

    expected = sum(i * j + 5 for i in range(5) for j in range(i))
    assert mode(table, tf.constant(5)).numpy() == expected


def test_three_deep_nesting_captures_through_every_level(mode):
    def deep(n, w):
        def level(depth, value):
            if depth == 0:
                return value + w
            return tf.while_loop(lambda k, v: k < n, lambda k, v: (k + 1, level(depth - 1, v)),
                                 [tf.constant(0), value])[1]
        return level(3, tf.constant(0))

    assert mode(deep, tf.constant(3), tf.constant(2)).numpy() == 27 * 2


def test_while_inside_cond(mode):
    def f(x, n):
        def loop():
            return tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + x), [tf.constant(0), x])[1]
        return tf.cond(x > 0, loop, lambda: -x)

    assert mode(f, tf.constant(3), tf.constant(4)).numpy() == 15
    assert mode(f, tf.constant(-3), tf.constant(4)).numpy() == 3


def test_cond_inside_while(mode):
    def collatz_steps(n):
        def body(x, steps):
            x = tf.cond(tf.equal(x % 2, 0), lambda: x // 2, lambda: 3 * x + 1)
            return x, steps + 1
        return tf.while_loop(lambda x, steps: x > 1, body, [n, tf.constant(0)])[1]

    assert mode(collatz_steps, tf.constant(27)).numpy() == 111


@pytest.mark.parametrize("start", [10, 50])
def test_zero_iterations_returns_the_initial_values(mode, start):
    calls = []

    def loop(i, m):
        def body(i, m):
            calls.append(1)
            return i + 1, m * 2.0
        return tf.while_loop(lambda i, m: i < 10, body, [i, m])

    i, m = mode(loop, tf.constant(start), ones(2, 3))
    assert i.numpy() == start
    np.testing.assert_array_equal(m.numpy(), np.ones((2, 3)))
    assert len(calls) == (1 if mode.traced else 0)


def test_loop_var_returned_unchanged_and_an_input_as_loop_var(mode):
    def loop(x, n):
        return tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x), [tf.constant(0), x])

    i, x = mode(loop, tf.constant([1.0, 2.0]), tf.constant(3))
    assert i.numpy() == 3
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


def test_loop_vars_swapped_each_iteration(mode):
    def loop(a, b):
        return tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, b, a), [tf.constant(0), a, b])

    assert to_numpy(mode(loop, tf.constant(1), tf.constant(2))) == [3, 2, 1]


def test_eager_and_traced_results_are_identical():
    def loop(n, x):
        def body(i, x):
            return i + 1, x * 1.5 - tf.cast(i, tf.float32)
        return tf.while_loop(lambda i, x: i < n, body, [tf.constant(0), x])

    args = tf.constant(6), tf.constant([0.5, 2.0, -1.0])
    eager = to_numpy(loop(*args))
    traced = to_numpy(tf.function(loop, autograph=False)(*args))
    assert eager[0] == traced[0]
    assert eager[1].dtype == traced[1].dtype
    np.testing.assert_array_equal(eager[1], traced[1])


def test_python_loop_vars_reach_cond_and_body_as_tensors(mode):
    seen = []

    def loop(n):
        def cond(i, x):
            seen.append(type(i))
            return i < n
        return tf.while_loop(cond, lambda i, x: (i + 1, x), [0, np.float32(1.5)])

    for n in (0, 2):
        i, x = mode(loop, tf.constant(n))
        assert isinstance(i, tf.Tensor) and isinstance(x, tf.Tensor)
        assert (i.numpy(), x.numpy()) == (n, 1.5)
    assert set(seen) == {tf.Tensor}


def test_outer_value_read_twice_in_a_nested_loop(mode):
    """`x` is captured into the outer body, then twice into the inner body."""
    def f(x, n):
        def outer_body(i, total):
            inner = tf.while_loop(lambda j, t: j < n, lambda j, t: (j + 1, t + x * x), [0, 0])[1]
            return i + 1, total + inner
        return tf.while_loop(lambda i, total: i < n, outer_body, [0, 0])[1]

    assert mode(f, tf.constant(3), tf.constant(2)).numpy() == 2 * 2 * 9


def test_ordered_and_default_dicts_keep_their_type(mode):
    def loop(n):
        state = (collections.OrderedDict([("z", tf.constant(0)), ("a", tf.constant(1))]),
                 collections.defaultdict(list, {"k": tf.constant(2)}))

        def body(i, state):
            ordered, default = state
            return i + 1, (collections.OrderedDict([("z", ordered["z"] + 1), ("a", ordered["a"] * 2)]),
                           collections.defaultdict(list, {"k": default["k"] + 3}))
        return tf.while_loop(lambda i, state: i < n, body, [tf.constant(0), state])[1]

    ordered, default = mode(loop, tf.constant(3))
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["z", "a"]
    assert type(default) is collections.defaultdict and default.default_factory is list
    assert to_numpy((dict(ordered), dict(default))) == ({"z": 3, "a": 8}, {"k": 11})
