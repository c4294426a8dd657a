"""`gradients` and `GradientTape`: their contract (API.md §3), eagerly and traced."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al

X = np.array([0.5, -1.5, 2.0])


def _both(fn):
    """`fn` run eagerly and traced (converted), as numpy structures."""
    eager = fn(al.constant(X))
    traced = al.function(fn)(X)
    return [None if t is None else t.numpy() for t in eager], [None if t is None else t.numpy() for t in traced]


def test_several_xs_and_grad_ys_eager_and_traced_agree():
    def fn(x):
        with al.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = al.sin(y)
        weights = al.constant([1.0, 10.0, 100.0], al.float64)
        return tape.gradient([y, z], [x, y], output_gradients=[weights, weights])

    eager, traced = _both(fn)
    y = X * X
    expected_y = np.array([1.0, 10.0, 100.0]) * (1 + np.cos(y))
    np.testing.assert_allclose(eager[1], expected_y)
    np.testing.assert_allclose(eager[0], expected_y * 2 * X)
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(e, t, rtol=1e-15)


def test_gradients_in_a_traced_function_with_grad_ys():
    @al.function
    def fn(x):
        y = x * x
        return al.gradients([y, al.reduce_sum(x)], [x], grad_ys=[al.ones_like(x) * 2.0, None])

    (grad,) = fn(X)
    np.testing.assert_allclose(grad.numpy(), 4 * X + 1)


def test_sources_keep_their_structure():
    x = al.constant(X)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = al.reduce_sum(x * 3.0)
    result = tape.gradient(y, {"a": x, "b": [x, x]})
    assert set(result) == {"a", "b"} and isinstance(result["b"], list)
    np.testing.assert_array_equal(result["b"][1].numpy(), np.full(3, 3.0))


def test_unconnected_and_unwatched_sources_get_none():
    def fn(x):
        other = x * 2.0
        with al.GradientTape() as tape:
            tape.watch(x)
            y = al.reduce_sum(x * x)
        return tape.gradient(y, [x, other, al.constant(1.0, al.float64)])

    for result in _both(fn):
        assert result[1] is None and result[2] is None
        np.testing.assert_allclose(result[0], 2 * X)


def test_unconnected_gradients_zero():
    x = al.constant(X)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = al.constant(3.0)
    np.testing.assert_array_equal(tape.gradient(y, x, unconnected_gradients="zero").numpy(), np.zeros(3))


def test_stop_gradient_blocks_its_path():
    def fn(x):
        with al.GradientTape(persistent=True) as tape:
            tape.watch(x)
            blocked = al.stop_gradient(x * x)
            y = al.reduce_sum(blocked * x)
        return [tape.gradient(y, x), tape.gradient(blocked, x)]

    for result in _both(fn):
        np.testing.assert_allclose(result[0], X * X)  # only through the second factor
        assert result[1] is None  # reached only through a blocked path


def test_gradients_stop_gradients_argument():
    @al.function
    def fn(x):
        y = x * x
        z = y * x
        return al.gradients(z, [x, y], stop_gradients=[y])

    dx, dy = fn(X)
    np.testing.assert_allclose(dx.numpy(), X * X)
    np.testing.assert_allclose(dy.numpy(), X)


def test_what_ran_before_the_block_or_in_stop_recording_is_constant():
    def fn(x):
        before = x * x
        with al.GradientTape() as tape:
            tape.watch(x)
            y = before * x
            with tape.stop_recording():
                hidden = y * 2.0
            z = hidden + y
        return [tape.gradient(z, x)]

    for result in _both(fn):
        np.testing.assert_allclose(result[0], X * X)


def test_a_non_persistent_tape_gives_one_gradient():
    x = al.constant(X)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)


def test_a_persistent_tape_gives_many_and_watch_accessed_variables_is_accepted():
    x = al.constant(X)
    with al.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = x * x
    first, second = tape.gradient(y, x), tape.gradient(y, x)
    np.testing.assert_array_equal(first.numpy(), second.numpy())


def test_gradients_eagerly_is_an_error():
    with pytest.raises(RuntimeError, match="GradientTape"):
        al.gradients(al.constant(1.0), [al.constant(1.0)])


def test_back_prop_false_raises_naming_the_loop_and_line():
    def fn(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            _, y = al.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), (0, x), back_prop=False,
                                 name="frozen")
            z = al.reduce_sum(y)
        return tape.gradient(z, x)

    line = fn.__code__.co_firstlineno + 3
    for run in (lambda: fn(al.constant(X)), lambda: al.function(fn)(X)):
        with pytest.raises(ValueError, match=rf"while loop 'frozen' at .*test_api.py:{line}.*back_prop=False"):
            run()


def test_back_prop_false_does_not_affect_other_paths():
    def fn(x, w):
        with al.GradientTape() as tape:
            tape.watch([x, w])
            _, y = al.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), (0, x), back_prop=False)
            z = al.reduce_sum(y) * w + w * w
        return tape.gradient(z, [w])

    eager = fn(al.constant(X), al.constant(3.0, al.float64))
    traced = al.function(fn)(X, np.array(3.0))
    for result in (eager, traced):
        np.testing.assert_allclose(result[0].numpy(), np.sum(X) * 8 + 6.0)


def test_a_missing_rule_is_a_lookup_error_naming_the_op_and_line():
    from autoloop.ops import registry
    from autoloop.ops.dispatch import apply
    from autoloop.ops.registry import OpDef, Spec
    registry.register(OpDef("TestOpWithoutGradient", kernel=lambda x: x, infer=lambda x: Spec(x.dtype, x.shape)))
    try:
        @al.function(autograph=False)
        def fn(x):
            return al.gradients(apply("TestOpWithoutGradient", [x]), [x])
        with pytest.raises(LookupError, match=r"no gradient for op TestOpWithoutGradient \(created at .*test_api"):
            fn(X)
    finally:
        registry._REGISTRY.pop("TestOpWithoutGradient")


def test_tapes_nest_for_second_derivatives_eagerly_and_traced():
    def fn(x):
        with al.GradientTape() as outer:
            outer.watch(x)
            with al.GradientTape() as inner:
                inner.watch(x)
                y = x * x * x
            dy = inner.gradient(y, x)
        return [dy, outer.gradient(dy, x)]

    for result in _both(fn):
        np.testing.assert_allclose(result[0], 3 * X * X)
        np.testing.assert_allclose(result[1], 6 * X)


def test_traced_tape_gradient_inside_a_loop_body():
    @al.function
    def fn(xs):
        total = al.zeros([], al.float64)
        for x in xs:
            with al.GradientTape() as tape:
                tape.watch(x)
                y = al.sin(x)
            total += tape.gradient(y, x)
        return total

    np.testing.assert_allclose(fn(X).numpy(), np.sum(np.cos(X)))


@al.function
def _loop_function(x, w):
    while al.reduce_sum(x) < 10.0:
        x = x * w + al.sin(x)
    al.print("ran")
    return x * 2.0, al.reduce_sum(x)


def _plain(x, w):
    while al.reduce_sum(x) < 10.0:
        x = x * w + al.sin(x)
    return x * 2.0, al.reduce_sum(x)


def test_a_traced_function_called_under_an_eager_tape_is_one_entry(capsys):
    x, w = al.constant(np.array([0.5, 0.2])), al.constant(np.array(1.3))
    found = []
    for fn in (_loop_function, _plain):
        with al.GradientTape() as tape:
            tape.watch([x, w])
            y, s = fn(x, w)
            z = al.reduce_sum(y) + s
        found.append([g.numpy() for g in tape.gradient(z, [x, w])])
    for a, b in zip(*found):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    assert capsys.readouterr().out.count("ran") == 1  # the call ran once: nothing recomputed


def test_a_traced_function_with_random_draws_under_an_eager_tape():
    @al.function
    def noisy(x):
        return x * al.random.normal([3], dtype=al.float64)

    x = al.constant(np.array([1.0, 2.0, 4.0]))
    with al.GradientTape() as tape:
        tape.watch(x)
        y = noisy(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), y.numpy() / x.numpy())  # the draw the result used


def test_a_traced_function_with_a_back_prop_false_loop_under_an_eager_tape():
    @al.function(autograph=False)
    def frozen(x):
        return al.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * 2.0), (0, x), back_prop=False)[1]

    x = al.constant(X)
    with al.GradientTape() as tape:
        tape.watch(x)
        y = frozen(x)
    np.testing.assert_array_equal(y.numpy(), X * 4)
    with pytest.raises(ValueError, match="back_prop=False"):
        tape.gradient(y, x)
