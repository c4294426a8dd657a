"""Python objects as arguments: one rule keys every call (`autoloop.arguments`).

Records (dataclasses, namedtuples, attrs-style classes) are keyed by their
fields' values, tensors among them becoming inputs; any other object by
identity plus a snapshot of its attributes, held alive by the cache entry.
Every test runs on the numpy executor and on ``backend="jax"``.
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import threading
import weakref

import numpy as np
import pytest

import autoloop as al

# Calls with a new config on purpose trace on each call: the retracing warning says so, rightly.
pytestmark = pytest.mark.filterwarnings("ignore:.*traced a new graph on each")


@pytest.fixture(params=["numpy", "jax"])
def backend_name(request):
    if request.param == "jax":
        pytest.importorskip("jax")
    return request.param


@dataclasses.dataclass
class Config:
    scale: float
    steps: int


@dataclasses.dataclass(frozen=True)
class Weights:
    w: object  # a tensor: an input
    bias: float


@dataclasses.dataclass(slots=True)
class Slotted:
    w: object
    name: str


Pair = collections.namedtuple("Pair", ["w", "shift"])


class _Attribute:
    def __init__(self, name):
        self.name = name


class AttrsStyle:
    """What the attrs package generates: the fields listed in ``__attrs_attrs__``."""

    __attrs_attrs__ = (_Attribute("w"), _Attribute("power"))

    def __init__(self, w, power):
        self.w, self.power = w, power


class Plain:
    def __init__(self, scale):
        self.scale = scale


def repeated_scale(x, config):
    for _ in range(config.steps):
        x = x * config.scale
    return x


def test_dataclasses_are_keyed_by_their_fields(backend_name):
    f = al.function(repeated_scale, backend=backend_name)
    x = al.constant(1.0)
    # Each Config is freed after its call, so a new one may sit at the old one's address.
    assert [float(f(x, Config(2.0, k))) for k in range(1, 7)] == [2, 4, 8, 16, 32, 64]
    assert f.experimental_get_tracing_count() == 6
    assert float(f(x, Config(2.0, 3))) == 8  # an equal config: the same trace
    assert f.experimental_get_tracing_count() == 6
    config = Config(3.0, 2)
    assert float(f(x, config)) == 9
    config.steps = 3  # mutated between calls: its fields key the trace
    assert float(f(x, config)) == 27


def affine(x, weights):
    return x * weights.w + weights.bias


@pytest.mark.parametrize("record", [Weights, Pair, AttrsStyle, Slotted])
def test_tensors_in_records_are_inputs(backend_name, record):
    def fn(x, r):
        w, python_value = (r.w, r.shift) if record is Pair else (r.w, getattr(r, "power", 1))
        if record is Slotted:
            assert r.name == "slotted"
        return x * w * python_value

    make = {Weights: lambda w, p: Weights(w, p), Pair: lambda w, p: Pair(w, p),
            AttrsStyle: lambda w, p: AttrsStyle(w, p), Slotted: lambda w, p: Slotted(w, "slotted")}[record]
    if record is Weights:
        fn = affine
    f = al.function(fn, backend=backend_name)
    x = al.constant([1.0, 2.0])
    first = make(al.constant(3.0), 2)
    expected_first = [5.0, 8.0] if record is Weights else ([3.0, 6.0] if record is Slotted else [6.0, 12.0])
    assert f(x, first).numpy().tolist() == expected_first
    second = make(np.array(5.0, np.float32), 2)  # a new array value: an input, the same trace
    expected_second = [7.0, 12.0] if record is Weights else ([5.0, 10.0] if record is Slotted else [10.0, 20.0])
    assert f(x, second).numpy().tolist() == expected_second
    assert f.experimental_get_tracing_count() == 1
    f(x, make(al.constant([1.0, 1.0]), 2))  # a new shape among the fields retraces
    assert f.experimental_get_tracing_count() == 2
    if record is not Slotted:
        f(x, make(al.constant(3.0), 4))  # a new Python value among the fields retraces
        assert f.experimental_get_tracing_count() == 3
    assert isinstance(first.w, al.Tensor) and not first.w.is_symbolic  # the caller's record is left alone


def scaled(x, holder):
    return x * holder.scale


def test_plain_objects_mutated_between_calls_retrace(backend_name):
    f = al.function(scaled, backend=backend_name)
    x = al.constant(2.0)
    holder = Plain(3.0)
    assert float(f(x, holder)) == 6
    assert float(f(x, holder)) == 6
    assert f.experimental_get_tracing_count() == 1
    holder.scale = 5.0
    assert float(f(x, holder)) == 10
    holder.scale = 3.0  # back to a state seen before: that trace again
    assert float(f(x, holder)) == 6
    assert f.experimental_get_tracing_count() == 2
    holder.scale = np.array(4.0, np.float32)
    assert float(f(x, holder)) == 8
    holder.scale[...] = 7.0  # an array attribute changed in place
    assert float(f(x, holder)) == 14
    holder.scale = {"nested": [1.0]}
    holder.scale = Plain(Plain(2.0))  # objects in attributes are snapshotted too

    def deep(x, holder):
        return x * holder.scale.scale.scale
    g = al.function(deep, backend=backend_name)
    assert float(g(x, holder)) == 4
    holder.scale.scale.scale = 6.0
    assert float(g(x, holder)) == 12


def test_plain_objects_are_kept_alive_by_the_cache(backend_name):
    f = al.function(scaled, backend=backend_name)
    x = al.constant(1.0)
    results, references = [], []
    for k in range(6):
        holder = Plain(float(k))
        references.append(weakref.ref(holder))
        results.append(float(f(x, holder)))
        del holder
        gc.collect()
    assert results == [0, 1, 2, 3, 4, 5]
    assert all(reference() is not None for reference in references)  # each trace's key holds its object


def test_a_cycle_among_attributes_is_keyed(backend_name):
    f = al.function(scaled, backend=backend_name)
    holder = Plain(2.0)
    holder.me = holder
    holder.items = [holder]
    assert float(f(al.constant(3.0), holder)) == 6
    holder.scale = 4.0
    assert float(f(al.constant(3.0), holder)) == 12


def test_positional_and_keyword_calls_of_star_arguments_are_distinct(backend_name):
    f = al.function(lambda *args, **kwargs: len(args) * 10 + len(kwargs), backend=backend_name)
    t = al.constant(1)
    assert f(t) == 10
    assert f(x=t) == 1
    assert f([t, t]) == 10 and f((t, t)) == 10


def test_threads_calling_with_their_own_configs(backend_name):
    f = al.function(repeated_scale, backend=backend_name)
    x = al.constant(1.0)
    results = {}

    def worker(k):
        results[k] = [float(f(x, Config(2.0, k))) for _ in range(3)]
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {k: [2.0 ** k] * 3 for k in range(1, 5)}
    assert f.experimental_get_tracing_count() == 4


def test_functions_called_in_different_orders_keep_their_own_traces(backend_name):
    f, g = al.function(repeated_scale, backend=backend_name), al.function(scaled, backend=backend_name)
    x = al.constant(1.0)
    config, holder = Config(2.0, 2), Plain(3.0)
    assert (float(f(x, config)), float(g(x, holder))) == (4, 3)
    assert (float(g(x, holder)), float(f(x, config))) == (3, 4)
    assert float(f(al.constant(1, al.float64), config)) == 4  # a new dtype retraces
    assert float(f(al.constant([1.0, 2.0]), config)[1]) == 8  # a new shape too
    assert f.experimental_get_tracing_count() == 3 and g.experimental_get_tracing_count() == 1


def test_the_short_path_and_the_full_key_agree(backend_name):
    # A call of tensors and Python numbers takes the short path once its full key has been traced;
    # records and objects take the full path. Both select the same traces.
    f = al.function(lambda x, n: x * n, backend=backend_name)
    x = al.constant([1.0, 2.0])
    assert f(x, 2).numpy().tolist() == [2.0, 4.0]
    assert f(x, 2).numpy().tolist() == [2.0, 4.0]  # short path
    assert f(x, n=2).numpy().tolist() == [2.0, 4.0]  # full path, same trace
    assert f(x, 3).numpy().tolist() == [3.0, 6.0]
    assert f.experimental_get_tracing_count() == 2
