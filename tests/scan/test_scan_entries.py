"""A batched cond (cond_dims): each entry stops on its own; compaction gives the same results.

Entry b is index b on axis 0 of every state tensor: once its cond is false
its state stops changing, its later frames are zeros, and lengths counts
the frames it ran. Compaction (the body on the active rows only) must not
change any of that.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import autoloop as al
from tests.runtime_core.helpers import Mode
from tests.scan.reference import reference_scan
from tests.scan.test_scan_arguments import assert_same

COMPACTION = [False, True, "auto"]


def countdown(limits, features: int = 2):
    """A batched scan: entry b runs `limits[b]` frames; its frame is its step count, broadcast."""
    limits = al.constant(limits)

    def body(x, state):
        h, step, limit = state
        h = h * 0.5 + al.cast(al.expand_dims(step, 1), al.float32)
        return (h, step * 10), (h, step + 1, limit)

    def cond(x, state):
        return state[1] < state[2]

    batch = limits.shape[0]
    initial = (al.ones([batch, features]), al.zeros([batch], al.int32), limits)
    ys = (al.TensorSpec([None, features], al.float32), al.TensorSpec([None], al.int32))
    return dict(body=body, cond=cond, initial=initial, ys=ys, cond_dims=[batch])


@pytest.mark.parametrize("compaction", COMPACTION)
@pytest.mark.parametrize("cond_before_body", [True, False])
def test_each_entry_stops_on_its_own(mode, compaction, cond_before_body):
    arguments = dict(countdown([3, 0, 1, 5, 3]), cond_before_body=cond_before_body)
    limits = arguments["initial"][2]
    found = mode(lambda limits: al.scan(**dict(arguments, initial=arguments["initial"][:2] + (limits,)),
                                        compaction=compaction), limits)
    assert_same(found, reference_scan(**arguments))
    (frames, steps), (h, step, _), lengths = found
    if cond_before_body:
        assert lengths.numpy().tolist() == [3, 0, 1, 5, 3] == step.numpy().tolist()
    else:  # a do-while runs each entry at least once
        assert lengths.numpy().tolist() == [3, 1, 1, 5, 3] == step.numpy().tolist()
    assert lengths.dtype is al.int32 and lengths.shape == al.TensorShape([5])
    steps = steps.numpy()
    assert steps.shape == (5, 5)
    for entry, length in enumerate(lengths.numpy()):
        assert steps[:length, entry].tolist() == [10 * k for k in range(length)]
        assert not steps[length:, entry].any() and not frames.numpy()[length:, entry].any()  # zeros after


def test_a_finished_entry_keeps_its_state(mode):
    arguments = countdown([1, 4])
    _, (h, _, _), _ = mode(lambda: al.scan(**arguments))
    # entry 0 ran once: 1 * 0.5 + 0; entry 1 four times.
    np.testing.assert_allclose(h.numpy()[0], [0.5, 0.5])
    np.testing.assert_allclose(h.numpy()[1], [((0.5 * 0.5 + 1) * 0.5 + 2) * 0.5 + 3] * 2)


@pytest.mark.parametrize("compaction", COMPACTION)
def test_cond_dims_of_rank_two(mode, compaction):
    limits = al.constant([[2, 0, 1], [4, 4, 0]])

    def body(x, state):
        h, step, limit = state
        return h, (h + al.cast(al.expand_dims(step, 2), al.float32), step + 1, limit)

    arguments = dict(body=body, cond=lambda x, s: s[1] < s[2], cond_dims=[2, 3], ys=al.TensorSpec([2, 3, 4]),
                     initial=(al.zeros([2, 3, 4]), al.zeros([2, 3], al.int32), limits))
    found = mode(lambda: al.scan(**arguments, compaction=compaction))
    assert_same(found, reference_scan(**arguments))
    assert found[2].numpy().tolist() == [[2, 0, 1], [4, 4, 0]]


def test_cond_dims_may_name_the_batch_with_a_tensor_or_none(mode):
    for dims in ([None], [al.constant(3)], al.TensorShape([3])):
        arguments = dict(countdown([1, 2, 0]), cond_dims=dims)
        found = mode(lambda: al.scan(**arguments))
        assert found[2].numpy().tolist() == [1, 2, 0] and found[2].shape == al.TensorShape([3])


def test_max_seq_len_and_spatial_dim_cap_a_batched_cond(mode):
    for cap in (dict(max_seq_len=2), dict(spatial_dim=al.constant(2))):
        arguments = dict(countdown([3, 0, 1, 5]), **cap)
        found = mode(lambda: al.scan(**arguments))
        assert_same(found, reference_scan(**arguments))
        assert found[2].numpy().tolist() == [2, 0, 1, 2]


def test_every_entry_false_from_the_start_runs_no_frames(mode):
    arguments = countdown([0, 0])
    (frames, steps), _, lengths = mode(lambda: al.scan(**arguments))
    assert frames.numpy().shape == (0, 2, 2) and steps.numpy().shape == (0, 2)
    assert lengths.numpy().tolist() == [0, 0]


def test_a_batch_of_zero_entries(mode):
    (frames, _), _, lengths = mode(lambda: al.scan(**countdown(np.zeros([0], np.int32))))
    assert frames.numpy().shape == (0, 0, 2) and lengths.numpy().shape == (0,)


def test_entries_of_a_batch_known_only_when_the_graph_runs(mode):
    def fn(limits):
        batch = al.shape(limits)[0]
        initial = (al.ones(al.stack([batch, 2])), al.zeros_like(limits), limits)
        arguments = dict(countdown([0]), initial=initial, cond_dims=[batch])
        return al.scan(**arguments)

    limits = al.constant([2, 0, 3])
    if mode.traced:  # the batch is a graph input of unknown size
        graph = al.function(fn, autograph=False).get_concrete_function(al.TensorSpec([None], al.int32)).graph
        scan_node = next(n for n in graph.nodes if n.op == "Scan")
        assert scan_node.outputs[-1].shape == al.TensorShape([None])
    (frames, _), _, lengths = mode(fn, limits)
    assert lengths.numpy().tolist() == [2, 0, 3] and frames.numpy().shape == (3, 3, 2)


# -- compaction on and off agree ---------------------------------------------------------------
def _dense_body(weights):
    def body(x, state):
        h, step, limit = state
        h = al.tanh(h @ weights + 0.1) * 0.9 + al.reduce_sum(h, axis=-1, keepdims=True) * 0.01
        return (h[:, :1], al.cast(step, al.float64)), (h, step + 1, limit)
    return body


def _run_all_ways(limits, features, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    weights = al.constant(rng.standard_normal((features, features)).astype(dtype) * 0.5)
    initial = (al.constant(rng.standard_normal((len(limits), features)).astype(dtype)),
               al.zeros([len(limits)], al.int32), al.constant(np.asarray(limits, np.int32)))
    arguments = dict(body=_dense_body(weights), cond=lambda x, s: s[1] < s[2], initial=initial,
                     cond_dims=[len(limits)],
                     ys=(al.TensorSpec([None, 1], al.as_dtype(dtype)), al.TensorSpec([None], al.float64)))
    results = {}
    for compaction in COMPACTION:
        traced = Mode("traced")  # the interpreter and the compiled executor agree, bit for bit
        results[("traced", compaction)] = traced(lambda: al.scan(**arguments, compaction=compaction))
        node = next(n for n in traced.concrete.graph.nodes if n.op == "Scan")
        assert node.attrs["compaction"] == ("mask" if compaction is False else "compact")
        results[("eager", compaction)] = al.scan(**arguments, compaction=compaction)
    return results, reference_scan(**arguments)


def _assert_close(found, expected):
    for f, e in zip(al.nest.flatten(found), al.nest.flatten(expected)):
        f = np.asarray(f.numpy())
        assert f.dtype == np.asarray(e).dtype and f.shape == np.shape(e)
        np.testing.assert_allclose(f, e, rtol=1e-12, atol=1e-12)  # matrix products may round apart


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lengths=st.lists(st.one_of(st.integers(0, 3), st.integers(0, 30)), min_size=1, max_size=9),
       features=st.integers(1, 5), seed=st.integers(0, 2 ** 16))
def test_compaction_on_and_off_agree_on_generated_batches(lengths, features, seed):
    results, expected = _run_all_ways(lengths, features, seed)
    for found in results.values():
        _assert_close(found, expected)
        assert found[2].numpy().tolist() == lengths


@settings(max_examples=15, deadline=None)
@given(lengths=st.lists(st.integers(0, 12), min_size=1, max_size=7),
       shape=st.lists(st.integers(1, 3), min_size=0, max_size=2), do_while=st.booleans())
def test_compaction_is_exact_for_element_wise_bodies(lengths, shape, do_while):
    batch = len(lengths)
    limits = al.constant(np.asarray(lengths, np.int32))

    def body(x, state):
        h, step, limit = state
        grown = h * 1.5 - al.cast(al.reshape(step, [-1] + [1] * len(shape)), al.float32)
        return grown, (grown, step + 1, limit)

    arguments = dict(body=body, cond=lambda x, s: s[1] < s[2], cond_dims=[batch], cond_before_body=not do_while,
                     initial=(al.ones([batch] + shape), al.zeros([batch], al.int32), limits),
                     ys=al.TensorSpec([batch] + shape))
    expected = reference_scan(**arguments)
    for compaction in COMPACTION:
        assert_same(Mode("traced")(lambda: al.scan(**arguments, compaction=compaction)), expected)
        assert_same(al.scan(**arguments, compaction=compaction), expected)
