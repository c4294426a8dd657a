"""Gradients keep no state between traces or threads: retracing with new dtypes, unrelated functions in
either order, and one function and eager tapes from several threads at once."""

from __future__ import annotations

import threading

import numpy as np

import autoloop as al


def power_loop(x, n):
    i = al.constant(0)
    y = x
    while i < n:
        y = y * x
        i += 1
    return y


@al.function
def gradient_of_power(x, n):
    return al.gradients(al.reduce_sum(power_loop(x, n)), [x])[0]


@al.function
def gradient_of_sine(x):
    with al.GradientTape() as tape:
        tape.watch(x)
        y = al.reduce_sum(al.sin(x))
    return tape.gradient(y, x)


def test_retracing_with_new_dtypes_and_shapes_and_other_functions_in_between():
    for dtype in (np.float64, np.float32, np.float64):
        for shape in ((2,), (3, 2)):
            x = np.full(shape, 1.1, dtype)
            g = gradient_of_power(x, np.array(3, np.int32)).numpy()
            assert g.dtype == dtype and g.shape == shape
            np.testing.assert_allclose(g, 4 * x ** 3, rtol=1e-6)
            np.testing.assert_allclose(gradient_of_sine(x).numpy(), np.cos(x), rtol=1e-6)


def test_one_function_and_eager_tapes_from_several_threads_at_once():
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(5):
                x = rng.uniform(0.5, 1.5, 3)
                n = int(rng.integers(0, 4))
                np.testing.assert_allclose(gradient_of_power(x, np.array(n, np.int32)).numpy(),
                                           (n + 1) * x ** n, rtol=1e-12)
                tensor = al.constant(x)
                with al.GradientTape() as tape:
                    tape.watch(tensor)
                    y = al.reduce_sum(power_loop(tensor, al.constant(n)))
                np.testing.assert_allclose(tape.gradient(y, tensor).numpy(), (n + 1) * x ** n, rtol=1e-12)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
