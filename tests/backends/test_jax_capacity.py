"""Capacity is not truncation: the bound XLA needs for what a loop appends or saves is checked, never obeyed.

``maximum_iterations`` keeps TensorFlow's meaning (the loop stops); a
``capacity`` is the most iterations a loop may run, and one more is a
`LoopCapacityError` naming the loop and the capacity, on every backend and
eagerly. A bound plain in the condition (a counter) needs no option.
"""

from __future__ import annotations

import traceback

import numpy as np
import pytest

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

import autoloop as al  # noqa: E402
from autoloop.errors import BackendError, LoopCapacityError  # noqa: E402

COLLATZ_27 = 111  # steps from 27 to 1


def collatz_with_capacity(capacity):
    def collatz(n):
        seen = []
        while n != 1:
            al.set_loop_options(capacity=capacity)
            seen.append(n)
            n = al.where(n % 2 == 0, n // 2, 3 * n + 1)
        return al.stack(seen)
    return collatz


@pytest.mark.parametrize("on", ["numpy", "jax"])
def test_a_capacity_that_holds_the_loop_changes_nothing(on):
    for capacity in (COLLATZ_27, 500):
        seen = al.function(collatz_with_capacity(capacity), backend=on)(al.constant(27)).numpy()
        assert seen.shape == (COLLATZ_27,) and seen[0] == 27 and seen[-1] == 2


@pytest.mark.parametrize("on", ["numpy", "jax"])
def test_one_iteration_more_than_the_capacity_is_an_error_never_a_shorter_loop(on):
    for capacity in (50, COLLATZ_27 - 1):
        collatz = collatz_with_capacity(capacity)
        line = collatz.__code__.co_firstlineno + 2
        with pytest.raises(LoopCapacityError, match=f"the loop at {__file__}:{line} would run more than its "
                                                    f"capacity of {capacity} iterations.*never cut short.*"
                                                    f"set_loop_options\\(capacity=N\\)") as raised:
            al.function(collatz, backend=on)(al.constant(27))
        frames = traceback.extract_tb(raised.value.__traceback__)
        assert any(f.filename == __file__ and f.lineno == line for f in frames)  # the user's loop line


def test_an_eager_loop_checks_its_capacity_too():
    def step(n):
        return al.where(n % 2 == 0, n // 2, 3 * n + 1)
    (found,) = al.while_loop(lambda n: n != 1, lambda n: step(n), [al.constant(27)], capacity=COLLATZ_27)
    assert int(found) == 1
    with pytest.raises(LoopCapacityError, match=f"capacity of {COLLATZ_27 - 1} iterations"):
        al.while_loop(lambda n: n != 1, lambda n: step(n), [al.constant(27)], capacity=COLLATZ_27 - 1)


@pytest.mark.parametrize("on", ["numpy", "jax"])
def test_while_loop_takes_a_capacity_for_a_gradient(on):
    def gradient(x, w, capacity, checkpoint):
        def body(i, h):
            return i + 1, al.tanh(h * w + 0.01)
        _, h = al.while_loop(lambda i, h: al.reduce_sum(h) > 0.5, body, (al.constant(0), x), capacity=capacity,
                             checkpoint=checkpoint)
        return al.gradients(al.reduce_sum(h * h), [x, w])

    x, w = np.array([1.0, 2.0, 0.5]), np.array(0.9)
    expected = al.function(lambda x, w: gradient(x, w, None, None))(x, w)
    for checkpoint in (None, True):
        found = al.function(lambda x, w: gradient(x, w, 400, checkpoint), backend=on)(x, w)
        for a, b in zip(found, expected):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
        with pytest.raises(LoopCapacityError, match="capacity of 3 iterations"):
            al.function(lambda x, w: gradient(x, w, 3, checkpoint), backend=on)(x, w)


def test_a_counter_in_the_condition_is_the_bound():
    def collatz(n, limit_steps):
        k = 0
        seen = []
        while n != 1 and k < limit_steps:
            seen.append(n)
            n = al.where(n % 2 == 0, n // 2, 3 * n + 1)
            k += 1
        return k, al.stack(seen)

    for limit, steps in ((500, COLLATZ_27), (50, 50)):  # `k < 50` is the program's own meaning
        f = lambda n, limit=limit: collatz(n, limit)  # noqa: E731
        for on in ("numpy", "jax"):
            k, seen = al.function(f, backend=on)(al.constant(27))
            assert int(k) == steps and seen.shape == (steps,)


def test_without_a_bound_a_program_with_effects_is_told_to_give_a_capacity_not_maximum_iterations(capsys):
    def collatz(n):
        seen = []
        while n != 1:
            print(n)  # seen on every run: the program cannot be run again with a larger capacity
            seen.append(n)
            n = al.where(n % 2 == 0, n // 2, 3 * n + 1)
        return al.stack(seen)

    with pytest.raises(BackendError, match="give the loop a capacity") as raised:
        al.function(collatz, backend="jax")(al.constant(27))
    assert "maximum_iterations" not in str(raised.value)
    assert capsys.readouterr().out == ""  # refused before anything ran


def collatz(n):
    seen = []
    while n != 1:
        seen.append(n)
        n = al.where(n % 2 == 0, n // 2, 3 * n + 1)
    return al.stack(seen)


def test_without_a_bound_a_program_without_effects_grows_its_capacity_itself():
    traced = al.function(collatz, backend="jax")
    seen = traced(al.constant(27)).numpy()
    assert seen.tolist() == al.function(collatz)(al.constant(27)).numpy().tolist()
    assert seen.shape == (COLLATZ_27,) and seen[0] == 27 and seen[-1] == 2
    program = traced.get_concrete_function(al.constant(27)).compiled
    assert list(program._capacities.values()) == [128]  # 64 outgrown once, kept for the next calls
    assert traced(al.constant(7)).numpy().tolist() == [7, 22, 11, 34, 17, 52, 26, 13, 40, 20, 10, 5, 16, 8, 4, 2]
    assert list(program._capacities.values()) == [128]


def test_a_check_is_no_effect_but_a_given_capacity_is_never_grown():
    def checked(n):
        seen = []
        while n != 1:
            assert n > 0, "positive"
            seen.append(n)
            n = al.where(n % 2 == 0, n // 2, 3 * n + 1)
        return al.stack(seen)

    assert al.function(checked, backend="jax")(al.constant(27)).numpy().shape == (COLLATZ_27,)
    with pytest.raises(LoopCapacityError, match="capacity of 100 iterations"):
        al.function(collatz_with_capacity(100), backend="jax")(al.constant(27))


def test_past_the_most_it_grows_to_the_loop_asks_for_a_capacity(monkeypatch):
    from autoloop.backends.jax import growth
    monkeypatch.setattr(growth, "MOST_CAPACITY", 100)
    line = collatz.__code__.co_firstlineno + 2
    with pytest.raises(LoopCapacityError, match=f"the loop at {__file__}:{line} would run more than 64 iterations, "
                                                f"the most backend='jax' preallocates .* never cut short"):
        al.function(collatz, backend="jax")(al.constant(27))


def test_a_capacity_must_be_a_positive_int():
    for bad in (0, -1, 2.5, True, "10"):
        with pytest.raises(ValueError, match="capacity must be a positive int"):
            al.while_loop(lambda i: i < 3, lambda i: i + 1, [al.constant(0)], capacity=bad)


def test_an_inner_loop_bounded_by_the_outer_counter_needs_no_capacity():
    def triangle(n):
        out = []
        for i in range(al.constant(5)):
            for j in range(i):  # at most 4 iterations: the outer counter's range bounds them
                out.append(i * 10 + j)
        return al.stack(out)

    def gradient(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            s = x * 0.5
            for i in range(al.constant(4)):
                for j in range(i):
                    s = s + al.sin(s * x) * 0.3
            y = al.reduce_sum(s * s)
        return tape.gradient(y, x)

    expected = [i * 10 + j for i in range(5) for j in range(i)]
    x = np.array([0.3, -0.4])
    for on in ("numpy", "jax"):
        assert al.function(triangle, backend=on)(al.constant(1)).numpy().tolist() == expected
    np.testing.assert_allclose(al.function(gradient, backend="jax")(x).numpy(), al.function(gradient)(x).numpy(),
                               rtol=1e-12)


def _counted_frames(counts, printed=False):
    """A batched scan collecting ys, with no bound on its frames: entry b runs ``counts[b]`` frames."""
    def body(_, state):
        if printed:
            al.print(state[1])
        return state[0], (state[0] + 1.0, state[1] + 1)
    ys = al.scan(body=body, initial=(al.zeros([3]), al.zeros([3], al.int32)), ys=al.TensorSpec([3], al.float32),
                 cond=lambda _, s: s[1] < counts, cond_dims=[3])[0]
    return al.reduce_sum(ys, axis=0)


def test_a_scan_collecting_ys_without_a_bound_grows_its_capacity_itself(monkeypatch):
    counts = np.array([0, 70, 3], np.int32)
    traced = al.function(_counted_frames, autograph=False, backend="jax")
    np.testing.assert_array_equal(traced(counts).numpy(), [0, 69 * 70 / 2, 3])
    assert list(traced.get_concrete_function(counts).compiled._capacities.values()) == [128]
    with pytest.raises(BackendError, match="give max_seq_len"):  # a print would be seen twice: no growing
        al.function(lambda c: _counted_frames(c, printed=True), autograph=False, backend="jax")(counts)
    from autoloop.backends.jax import growth
    monkeypatch.setattr(growth, "MOST_CAPACITY", 100)
    with pytest.raises(LoopCapacityError, match="the scan at .* would run more than 64 frames, the most "
                                                "backend='jax' preallocates for its ys .* never cut short. Give it "
                                                "max_seq_len"):
        al.function(_counted_frames, autograph=False, backend="jax")(counts)
