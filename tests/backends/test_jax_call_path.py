"""The cached call of a ``backend="jax"`` function, each fast path beside the path it shortcuts.

- the shortest path: a call of one JAX array like the last such call runs
  its trace without building a key (`autoloop.traced_function`); it must
  select what `short_key` and the full trace key select;
- the quick program: a program with a watched loop and one scalar result
  runs a form without the Ctrl-C host call first, which gives up (returns a
  marker) where a loop would run long; the watched program then answers
  (`autoloop.backends.jax.interrupts`).
"""

from __future__ import annotations

import signal
import threading
import traceback
import warnings

import numpy as np
import pytest

import autoloop as al
from autoloop.tensor import Tensor

jax = pytest.importorskip("jax",
                          reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")
jnp = jax.numpy
from autoloop.backends.jax.interrupts import first_countdown  # noqa: E402 - needs JAX

RETRACING_ON_PURPOSE = pytest.mark.filterwarnings("ignore::autoloop.RetracingWarning")


def count_up(n, start):
    i = n - n
    while i < n:  # no bound known while compiling: a watched loop
        i += 1
    return start + i


def count_down(n, start):
    i = n - n
    while i < n:
        i += 1
    return start - i


def collatz(n):
    steps = n - n
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def run_in_threads(worker, count):
    """``worker(seed)`` for seeds 0..count-1, each in its own thread, all joined."""
    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def loop_body(function, *args):
    """The body graph of the one ``While`` in `function`'s trace for `args`."""
    (loop,) = [node for node in function.get_concrete_function(*args).graph.walk() if node.op == "While"]
    return loop.attrs["body"]


def program_of(function):
    (concrete,) = function._traces.values()
    return concrete.compiled


# -- the shortest path -------------------------------------------------------------------------
@RETRACING_ON_PURPOSE
def test_one_jax_array_selects_the_trace_of_its_dtype_and_shape_in_any_order():
    traced = []

    def double(x):
        traced.append(1)
        return x * 2
    f = al.function(double, autograph=False, backend="jax")
    inputs = [jnp.int32(3), jnp.float32(1.5), jnp.arange(3, dtype=jnp.int32), jnp.ones((2, 2), jnp.float32),
              jnp.arange(4, dtype=jnp.int32), al.constant(5), np.float32(2.5)]
    traces = None
    for order in (inputs, inputs[::-1], inputs[1::2] + inputs[::2], inputs * 2):
        for x in order:
            result = f(x)
            expected = np.asarray(x) * 2
            assert result.dtype.as_numpy_dtype == expected.dtype
            np.testing.assert_array_equal(result.numpy(), expected)
        traces = traces or len(traced)
        assert len(traced) == traces  # each signature traced once, whatever the order
    assert traces >= 5 and f.experimental_get_tracing_count() == traces


def test_the_shortest_path_gives_what_the_short_and_full_paths_give():
    f = al.function(collatz, backend="jax")
    for n in range(1, 60):
        full = f.get_concrete_function(al.constant(n))(al.constant(n)).numpy()  # the full key, then the trace
        short = f(al.constant(n)).numpy()  # a Tensor: short_key
        shortest = f(jnp.int32(n)).numpy()  # one JAX array like the last one
        assert full == short == shortest == collatz(n)
    assert f.experimental_get_tracing_count() == 1


def test_a_cached_call_on_the_shortest_path_counts_as_a_call_that_did_not_trace():
    f = al.function(lambda x: x + 1, autograph=False, backend="jax")
    x = jnp.float32(1)
    f(x)
    f(x)  # on the shortest path from here
    with warnings.catch_warnings():
        warnings.simplefilter("error", al.RetracingWarning)
        for value in (1.0, 2.0, 3.0, 4.0):  # four traces in a row
            f(value)
        f(x)  # a cached call: the count starts again
        f(5.0)  # one trace in a row: no warning


@RETRACING_ON_PURPOSE
def test_calls_of_jax_arrays_from_several_threads_get_their_own_results():
    f = al.function(lambda x: al.reduce_sum(x * x), autograph=False, backend="jax")
    inputs = [jnp.arange(n, dtype=dtype) for n in (1, 3, 5) for dtype in (jnp.int32, jnp.float32)]
    expected = [np.sum(np.asarray(x) ** 2, dtype=x.dtype) for x in inputs]
    failures, barrier = [], threading.Barrier(4)

    def worker(seed):
        barrier.wait()
        order = np.random.default_rng(seed).permutation(len(inputs))
        for _ in range(30):
            for i in order:
                got = f(inputs[i]).numpy()
                if got != expected[i] or got.dtype != expected[i].dtype:
                    failures.append((i, got))

    run_in_threads(worker, 4)
    assert failures == []
    assert f.experimental_get_tracing_count() == len(inputs)  # each signature traced once


@RETRACING_ON_PURPOSE
def test_threads_mixing_the_shortest_path_with_python_values_and_mutated_objects():
    class Scale:
        def __init__(self, factor):
            self.factor = factor

    def scaled(x, scale=None, offset=0):
        return x * (1 if scale is None else scale.factor) + offset

    f = al.function(scaled, autograph=False, backend="jax")
    failures, barrier = [], threading.Barrier(3)

    def worker(seed):
        x, scale = jnp.int32(seed + 1), Scale(1)
        barrier.wait()
        for step in range(12):
            checks = [(f(x), seed + 1),  # one JAX array: the shortest path once it is this thread's
                      (f(x, None, step % 3), seed + 1 + step % 3),  # a Python value: a trace per value
                      (f(x, scale), (seed + 1) * scale.factor)]  # an object: keyed by a snapshot of it
            scale.factor = step % 4 + 1  # mutated: the next call must not get the old trace
            failures.extend((seed, step, got.numpy(), want) for got, want in checks if got.numpy() != want)

    run_in_threads(worker, 3)
    assert failures == []


@RETRACING_ON_PURPOSE
def test_a_trace_drops_the_shortest_path_so_cached_calls_still_end_a_run_of_traces():
    f = al.function(lambda x: x + 1, autograph=False, backend="jax")
    x = jnp.float32(1)
    f(x)
    f(x)  # the shortest path from here
    assert f._last_device_call[1] is x.aval
    f(2.0)  # a trace drops it: a call on it would not end the run of tracing calls
    assert f._last_device_call[0] is None
    assert f(x).numpy() == 2.0  # the short path, which ends the run (and keeps the shortest path again)
    assert f._last_device_call[1] is x.aval
    with warnings.catch_warnings():
        warnings.simplefilter("error", al.RetracingWarning)
        for value in (3.0, 4.0, 5.0, 6.0):  # four traces in a row, after the one before the cached call
            f(value)
    with pytest.warns(al.RetracingWarning, match="traced a new graph on each of its last 5 calls"):
        f(7.0)


@RETRACING_ON_PURPOSE
def test_the_shortest_path_takes_one_positional_argument_only_and_others_take_their_paths():
    def scale(x, factor=2, offset=None):
        return x * factor if offset is None else x * factor + offset

    for backend in ("numpy", "jax"):
        f = al.function(scale, autograph=False, backend=backend)
        x = jnp.int32(3)
        for _ in range(3):  # the third call of one JAX array on the shortest path, where there is one
            assert f(x).numpy() == 6
            assert f(x, 3).numpy() == 9 and f(x, factor=4).numpy() == 12 and f(x=x, factor=5).numpy() == 15
            assert f(x, offset=jnp.int32(1)).numpy() == 7 and f(al.constant(3)).numpy() == 6
        with pytest.raises(TypeError, match=r"scale\(\): missing a required argument: 'x'"):
            f()
        with pytest.raises(TypeError, match=r"scale\(\): multiple values for argument 'x'"):
            f(x, x=x)
        assert f.experimental_get_tracing_count() == 5  # (x), factor 3, 4 and 5, an offset
        # Parameters named as Function.__call__'s own are the function's: its first argument is positional-only
        g = al.function(lambda first, self=1: first * self, autograph=False, backend=backend)
        assert g(first=x, self=2).numpy() == 6 and g(x, self=3).numpy() == 9 and g(x).numpy() == 3


def test_the_shortest_path_steps_aside_while_functions_run_eagerly():
    calls = []

    def double(x):
        calls.append(type(x))
        return x * 2
    f = al.function(double, autograph=False, backend="jax")
    x = jnp.int32(4)
    for _ in range(3):
        assert f(x).numpy() == 8
    assert len(calls) == 1 and f._last_device_call[1] is x.aval  # traced once, then the shortest path
    al.config.run_functions_eagerly(True)
    try:
        assert int(f(x)) == 8  # the plain Python function, on the JAX array as given
    finally:
        al.config.run_functions_eagerly(False)
    assert calls[1:] == [type(x)]
    assert f(x).numpy() == 8 and len(calls) == 2


def test_new_arrays_of_a_new_dtype_or_shape_retrace_after_the_shortest_path():
    f = al.function(collatz, backend="jax")
    signatures = [jnp.int32(6), jnp.int32(7), jnp.uint8(6), jnp.int16(9), jnp.int32(6) + 1]
    for _ in range(3):
        for n in signatures:
            assert f(n).numpy() == collatz(int(n)) and f(n).dtype.as_numpy_dtype == np.asarray(n).dtype
    assert f.experimental_get_tracing_count() == 3  # int32, uint8 and int16
    f2 = al.function(lambda v: al.reduce_sum(v), autograph=False, backend="jax")
    for v in (jnp.arange(3), jnp.arange(4), jnp.arange(3.0), jnp.ones((2, 2))) * 2:
        assert f2(v).numpy() == np.sum(np.asarray(v)) and f2(v).dtype.as_numpy_dtype == np.asarray(v).dtype
    assert f2.experimental_get_tracing_count() == 4


def test_a_numpy_function_called_on_jax_arrays_keeps_taking_the_full_path():
    f = al.function(lambda x: x * 3, autograph=False)
    for _ in range(3):
        assert f(jnp.int32(2)).numpy() == 6 and f(jnp.float32(0.5)).numpy() == 1.5


def test_of_value_makes_the_tensor_that_init_makes():
    value = np.float32(2.5)
    made, by_init = Tensor.of_value(value), Tensor(value)
    for slot in Tensor.__slots__:
        if slot != "__weakref__":
            assert getattr(made, slot) is getattr(by_init, slot) or getattr(made, slot) == getattr(by_init, slot), slot


# -- the quick program ---------------------------------------------------------------------------
def test_a_short_loop_runs_the_quick_program_and_a_long_one_the_watched_program():
    f = al.function(count_up, backend="jax")
    assert f(al.constant(10), al.constant(0)).numpy() == 10
    program = program_of(f)
    assert program._quick is not None and not program.facts.watch.ran_long
    assert program._quick._cache_size() == 1 and program._jitted._cache_size() == 0  # the watched one: never run
    long = 3 * first_countdown(loop_body(f, al.constant(10), al.constant(0)), jax.default_backend())  # past it
    assert f(al.constant(long), al.constant(0)).numpy() == long  # gave up, then watched
    assert program.facts.watch.ran_long  # the next call goes to the watched program directly
    assert f(al.constant(7), al.constant(0)).numpy() == 7
    assert not program.facts.watch.ran_long  # that one was short: the quick program again
    assert f(al.constant(long), al.constant(1)).numpy() == long + 1


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float32, np.float64])
def test_a_result_equal_to_the_marker_is_the_true_result(dtype):
    from autoloop.backends.jax.interrupts import give_up_marker
    marker = give_up_marker(dtype)
    f = al.function(count_down, backend="jax")
    signed = np.dtype(dtype).kind == "i"
    start = marker + dtype(3) if signed else marker  # the loop runs 3 times, or not at all
    n = np.asarray(3 if signed else 0, dtype)
    result = f(al.constant(n), al.constant(np.asarray(start, dtype))).numpy()
    assert result.dtype == dtype and result == marker
    assert np.asarray(result).tobytes() == np.asarray(marker).tobytes()


def test_the_first_countdown_counts_an_accelerators_cost_of_an_iteration():
    body = loop_body(al.function(count_up, backend="jax"), al.constant(10), al.constant(0))
    on_cpu, on_gpu = first_countdown(body, "cpu"), first_countdown(body, "gpu")
    assert on_cpu > 1 << 18  # a scalar body: hundreds of thousands of iterations, a few milliseconds on a CPU
    assert 256 <= on_gpu <= 512  # each about 10 µs on a GPU: the first host call within about 5 ms, not seconds
    assert first_countdown(body, "tpu") == on_gpu

    def products(m, w, steps):
        for _ in al.range(steps):
            m = al.matmul(m, w)
        return m
    body = loop_body(al.function(products, backend="jax"), np.ones((512, 512)), np.ones((512, 512)), al.constant(20))
    assert first_countdown(body, "cpu") <= 8  # about a millisecond an iteration on a CPU
    assert first_countdown(body, "gpu") >= 400  # about 10 µs on a GPU: twenty never ask


def test_give_up_markers():
    from autoloop.backends.jax.interrupts import give_up_marker
    assert give_up_marker(np.int32) == np.int32(-2**31) and give_up_marker(np.uint16) == np.uint16(2**16 - 1)
    assert np.float32(np.finfo(np.float32).min) < give_up_marker(np.float32) < 0
    assert give_up_marker(np.bool_) is None and give_up_marker(np.complex64) is None


@pytest.mark.parametrize("kind", ["bool result", "vector result", "two results", "jax_arrays"])
def test_programs_without_a_quick_form_run_the_watched_program(kind):
    def loop(n):
        i = n - n
        while i < n:
            i += 1
        return {"bool result": lambda: i > 2, "vector result": lambda: al.stack([i, i]),
                "two results": lambda: (i, i + 1), "jax_arrays": lambda: i}[kind]()
    f = al.function(loop, backend="jax", jax_arrays=kind == "jax_arrays")
    expected = {"bool result": True, "vector result": [5, 5], "two results": (5, 6), "jax_arrays": 5}[kind]
    for _ in range(2):
        result = f(al.constant(5))
        got = [np.asarray(getattr(r, "numpy", lambda r=r: r)()) for r in result] if kind == "two results" else \
            np.asarray(getattr(result, "numpy", lambda: result)())
        np.testing.assert_array_equal(got, expected)
    assert program_of(f)._quick is None


def test_the_quick_and_watched_programs_agree():
    f = al.function(collatz, backend="jax")
    f(jnp.int32(1))
    watch = program_of(f).facts.watch
    for n in range(1, 120):
        quick = f(jnp.int32(n)).numpy()
        watch.ran_long = True  # the next call runs the watched program
        watched = f(jnp.int32(n)).numpy()
        assert quick == watched == collatz(n)


def test_ctrl_c_while_the_quick_program_runs_is_raised_from_the_loop_line():
    f = al.function(count_up, backend="jax")
    concrete = f.get_concrete_function(al.constant(1), al.constant(0))

    def interrupted(*inputs):
        raise KeyboardInterrupt  # what Python's handler raises when the quick program returns
    concrete.compiled._quick = interrupted
    with pytest.raises(KeyboardInterrupt) as caught:
        f(al.constant(1), al.constant(0))
    line = count_up.__code__.co_firstlineno + 2
    assert caught.value.autoloop_location == (__file__, line)
    frame = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert (frame.filename, frame.lineno) == (__file__, line)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals: main thread")
def test_a_watched_call_after_the_quick_one_gave_up_listens_from_its_start(pythons_sigint_handler):
    f = al.function(count_up, backend="jax")
    program = f.get_concrete_function(al.constant(1), al.constant(0)).compiled
    jitted, handlers = program._jitted, []

    def gave_up(*inputs):
        return program._marker

    def watched(*inputs):  # where the watched program would be compiled first
        handlers.append(signal.getsignal(signal.SIGINT))
        signal.raise_signal(signal.SIGINT)  # noted, not raised: a compile here goes on undisturbed
        return jitted(*inputs)
    program._quick, program._jitted = gave_up, watched
    with pytest.raises(KeyboardInterrupt) as caught:
        f(al.constant(1), al.constant(0))
    assert handlers == [program.facts.watch._note]
    assert caught.value.autoloop_location == program.facts.watch.first_loop
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
