"""Retracing is visible: `experimental_get_tracing_count` and the frequent-retracing warning."""

import sys
import threading
import warnings

import numpy as np
import pytest

import autoloop as al


def _calls_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w for w in caught if issubclass(w.category, al.RetracingWarning)]


def test_tracing_count_counts_signatures_not_calls():
    f = al.function(lambda x, scale: x * scale)
    assert f.experimental_get_tracing_count() == 0
    for _ in range(3):
        f(al.constant([1.0]), 2.0)
    assert f.experimental_get_tracing_count() == 1
    f(al.constant([1.0, 2.0]), 2.0)  # new shape
    f(al.constant([1]), 2)  # new dtype and Python value
    f(al.constant([1.0]), 3.0)  # new Python value
    f(al.constant([1.0]), 2.0)  # cached
    assert f.experimental_get_tracing_count() == 4
    f.get_concrete_function(np.zeros(3, np.float64), 2.0)
    assert f.experimental_get_tracing_count() == 5


def test_a_new_python_float_every_call_warns_once_at_the_callers_line():
    f = al.function(lambda x, y: x + y)
    x = al.constant(1.0)
    caught = _calls_warnings(lambda: [f(x, float(i)) for i in range(12)])
    assert len(caught) == 1 and f.experimental_get_tracing_count() == 12
    message = str(caught[0].message)
    assert "traced a new graph on each of its last 5 calls" in message and "autoloop.constant(x)" in message
    assert caught[0].filename == __file__  # the warning points at the call, not at autoloop


def test_retracing_that_settles_does_not_warn():
    f = al.function(lambda x, y: x + y)
    x = al.constant(1.0)

    def calls():
        for i in range(40):
            f(x, float(i % 4))  # four values, each traced once
    assert _calls_warnings(calls) == [] and f.experimental_get_tracing_count() == 4


def test_calls_that_hit_the_cache_reset_the_run_of_tracing_calls():
    f = al.function(lambda x, y: x + y)
    x = al.constant(1.0)

    def calls():
        for i in range(10):
            f(x, float(i))  # traces
            f(x, 0.0)  # cached after the first time
    assert _calls_warnings(calls) == []


def test_each_function_warns_for_itself():
    x = al.constant(1.0)
    f, g = al.function(lambda x, y: x + y), al.function(lambda x, y: x - y)
    assert len(_calls_warnings(lambda: [f(x, float(i)) for i in range(6)])) == 1
    assert len(_calls_warnings(lambda: [g(x, float(i)) for i in range(6)])) == 1
    assert _calls_warnings(lambda: [f(x, float(i)) for i in range(6, 20)]) == []


@pytest.fixture
def frequent_thread_switches():
    """Switch threads every microsecond, so that first calls really do trace at the same time."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


@pytest.mark.parametrize("repeat", range(3))
def test_threads_calling_a_new_function_trace_each_signature_once(repeat, frequent_thread_switches):
    traced = []

    @al.function
    def f(x):
        traced.append(x.dtype)
        total = al.zeros_like(x)
        i = al.constant(0)
        while i < 20:
            total += x
            i += 1
        return total

    inputs = [np.ones(3, np.float32), np.ones(3, np.float64), np.ones(3, np.int32)]
    results, failures, start = [], [], threading.Barrier(8)

    def worker(k):
        try:
            start.wait()
            for step in range(10):
                x = inputs[(k + step) % 3]
                results.append((x.dtype, f(x).numpy().tolist()))
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert f.experimental_get_tracing_count() == 3 and len(traced) == 3
    assert all(values == [20, 20, 20] for _, values in results) and len(results) == 80


def test_a_method_counts_traces_per_instance():
    class Model:
        @al.function
        def step(self, x):
            return x + 1

    first, second = Model(), Model()
    first.step(al.constant(1))
    first.step(al.constant(2))
    second.step(al.constant(1.0))
    assert first.step.experimental_get_tracing_count() == 1
    assert second.step.experimental_get_tracing_count() == 1
