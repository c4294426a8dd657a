"""The cached call of a traced function: trace keys, result packing, numpy's error state, threads.

A call whose arguments are all eager tensors takes a short path (a key of
dtypes and shapes, one dict lookup, the compiled graph, one tensor packed);
these tests hold it to what the full path gives.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import autoloop as al
from autoloop.execute import CompiledGraph


def counting(body):
    calls = []

    def counted(*args):
        calls.append(1)
        return body(*args)
    return al.function(counted, autograph=False), calls


# These tests trace one function for many signatures on purpose.
RETRACING_ON_PURPOSE = pytest.mark.filterwarnings("ignore::autoloop.RetracingWarning")


@RETRACING_ON_PURPOSE
def test_the_short_path_retraces_for_new_dtypes_and_shapes_in_any_order():
    f, calls = counting(lambda x, y: x * y)
    inputs = [(al.constant(3), al.constant(4)), (al.constant(1.5), al.constant(2.0)),
              (al.constant([1, 2]), al.constant([3, 4])), (al.constant(3), al.constant([3, 4])),
              (al.constant(np.float64(0.5)), al.constant(np.float64(8)))]
    for order in (inputs, inputs[::-1], inputs[1::2] + inputs[::2]):
        for x, y in order:
            result = f(x, y)
            expected = x.numpy() * y.numpy()
            assert result.dtype == x.dtype and np.array_equal(result.numpy(), expected)
            assert type(result.numpy()) is type(np.asarray(expected)[()] if np.ndim(expected) == 0 else expected)
    assert len(calls) == len(inputs)


def test_unrelated_functions_with_the_same_signature_keep_their_own_traces():
    add, _ = counting(lambda x: x + 1)
    double, _ = counting(lambda x: x * 2)
    x, y = al.constant(5), al.constant([1.5, 2.5])
    for _ in range(2):
        assert double(x).numpy() == 10 and add(x).numpy() == 6
        np.testing.assert_array_equal(add(y).numpy(), [2.5, 3.5])
        np.testing.assert_array_equal(double(y).numpy(), [3.0, 5.0])


def test_each_call_returns_a_new_tensor_and_structures_come_back_whole():
    single, _ = counting(lambda x: x + 1)
    pair, _ = counting(lambda x: (x + 1, {"twice": x * 2}))
    x = al.constant(2)
    first, second = single(x), single(x)
    assert first is not second and first.numpy() == second.numpy() == 3
    result = pair(x)
    assert isinstance(result, tuple) and result[0].numpy() == 3 and result[1]["twice"].numpy() == 4


@RETRACING_ON_PURPOSE
def test_scalars_0d_arrays_and_array_subclasses_key_the_trace_they_need():
    f, calls = counting(lambda x: x * 2)
    values = [np.int32(3), np.asarray(np.int32(3)), np.float16(1.5), np.ma.masked_array([1, 2], dtype=np.int32),
              np.asarray([1, 2], dtype=np.int32), np.int64(3)]
    for value in values + values[::-1]:
        result = f(al.Tensor(value))
        assert result.dtype == al.as_dtype(np.asarray(value).dtype)
        np.testing.assert_array_equal(result.numpy(), np.asarray(value) * 2)
    assert len(calls) == 4  # int32 scalars (as numpy scalars or 0-d arrays), float16, int32 [2], int64


@RETRACING_ON_PURPOSE
def test_python_arguments_on_the_short_path_select_the_trace_of_their_value_and_type():
    f, calls = counting(lambda x, k, flag: x * k if flag is not None else x)
    x = al.constant(2.0)
    arguments = [(3, True), (4, True), (3, None), (3.0, True), (True, True), (3, "yes"), (1, 1)]
    for order in (arguments, arguments[::-1], arguments):
        for k, flag in order:
            result = f(x, k, flag)
            expected = np.asarray(x.numpy() * np.float32(k) if flag is not None else x.numpy())
            assert result.numpy() == expected and result.dtype == al.as_dtype(expected.dtype), (k, flag)
    assert len(calls) == len(arguments)  # one trace per (value, type): True and 1, 3 and 3.0 apart


def test_a_failing_graph_on_the_short_path_names_the_op():
    f, _ = counting(lambda x, i: x[i] + 1)
    x = al.constant([1, 2])
    assert f(x, al.constant(1)).numpy() == 3  # cached: the next call takes the short path
    with pytest.raises(al.errors.InvalidArgumentError, match="StridedSlice .* index 5 is out of bounds"):
        f(x, al.constant(5))


def test_rank_0_results_are_numpy_scalars_even_from_a_0d_array():
    f, _ = counting(lambda x: al.reshape(x, []))  # np.reshape gives a 0-d array
    result = f(al.constant([7]))
    assert type(result.numpy()) is np.int32 and result.numpy() == 7


@RETRACING_ON_PURPOSE
def test_calls_from_several_threads_at_once_get_their_own_results():
    f, _ = counting(lambda x: al.reduce_sum(x * x))
    inputs = [al.constant(np.arange(n, dtype=dtype)) for n in (1, 3, 5) for dtype in (np.int32, np.float64)]
    expected = [np.sum(x.numpy() * x.numpy(), dtype=x.numpy().dtype) for x in inputs]
    failures, barrier = [], threading.Barrier(4)

    def worker(seed):
        barrier.wait()
        order = np.random.default_rng(seed).permutation(len(inputs))
        for _ in range(50):
            for i in order:
                got = f(inputs[i]).numpy()
                if got != expected[i] or got.dtype != expected[i].dtype:
                    failures.append((i, got))

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


# -- numpy's floating-point error state ----------------------------------------------------
def overflowing():
    return al.function(lambda x, y: (x * x, y / (y - y)), autograph=False)


def test_a_graph_ignores_numpy_errors_and_restores_the_callers_state():
    f = overflowing()
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        big, inf = f(al.constant(2**20), al.constant(1.0))
        assert big.numpy() == 0 and np.isinf(inf.numpy())  # int32 wraps; 1 / 0 is inf
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
    assert np.geterr()["over"] != "raise"


def test_the_callers_error_state_comes_back_after_a_failing_graph():
    f = al.function(lambda x, i: x[i], autograph=False)
    before = np.geterr()
    with pytest.raises(al.errors.InvalidArgumentError):
        f(al.constant([1, 2]), al.constant(5))
    assert np.geterr() == before


def test_the_error_state_is_per_thread():
    f = overflowing()
    seen = []
    inside = threading.Event()
    release = threading.Event()

    def other_thread():
        with np.errstate(all="raise"):
            inside.set()
            release.wait(5)
            seen.append(np.geterr()["over"])

    thread = threading.Thread(target=other_thread)
    thread.start()
    inside.wait(5)
    for _ in range(100):
        f(al.constant(2**20), al.constant(1.0))
    release.set()
    thread.join()
    assert seen == ["raise"]


def test_a_compiled_graph_called_directly_also_ignores_errors():
    concrete = overflowing().get_concrete_function(al.constant(2**20), al.constant(1.0))
    compiled = CompiledGraph(concrete.graph)
    with np.errstate(all="raise"):
        big, inf = compiled(np.int32(2**20), np.float32(1.0))
    assert big == 0 and np.isinf(inf)


def test_the_busy_count_that_lets_calls_skip_their_checks_returns_to_zero():
    """`context.BUSY` counts traces, eager blocks, tapes and a TF1 default graph in all threads; while it
    is 0 a call asks nothing else. Whatever ends a trace or a tape (an error included), it goes back."""
    from autoloop.ir import context
    assert context.BUSY[0] == 0

    @al.function
    def fails(x):
        raise ValueError("while tracing")

    with pytest.raises(ValueError, match="while tracing"):
        fails(al.constant(1))
    assert context.BUSY[0] == 0
    x = al.constant(2.0)
    with al.GradientTape() as tape:
        tape.watch(x)
        assert context.BUSY[0] == 1
        y = al.function(lambda v: v * v)(x)  # recorded: the call took the path that asks
    assert context.BUSY[0] == 0 and tape.gradient(y, x).numpy() == 4.0
    with context.eager():
        assert context.BUSY[0] == 1
    al.compat.v1.disable_eager_execution()
    try:
        assert context.BUSY[0] == 1 and context.current_graph() is not None
    finally:
        al.compat.v1.enable_eager_execution()
    assert context.BUSY[0] == 0 and context.current_graph() is None
