"""Which bodies may be compacted: `autoloop.control_flow.scan_entries` on traced scans.

A body that treats rows independently is compacted with ``compaction="auto"``;
one that mixes entries (or might) is masked, and its reason names the op.
Either way the results equal the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop.control_flow.scan_entries import entrywise_problem
from tests.runtime_core.helpers import Mode
from tests.scan.reference import reference_scan
from tests.scan.test_scan_arguments import assert_same

BATCH, FEATURES = 4, 3
WEIGHTS = al.constant(np.arange(FEATURES * FEATURES, dtype=np.float32).reshape(FEATURES, FEATURES) / 10)
TABLE = al.constant(np.arange(10 * FEATURES, dtype=np.float32).reshape(10, FEATURES))
SHARED_ROW = al.constant(np.ones([1, FEATURES], np.float32))
PER_ENTRY = al.constant(np.ones([BATCH, FEATURES], np.float32))

# name -> how the body changes h ([BATCH, FEATURES] float32) using ids ([BATCH] int32)
ENTRYWISE = {
    "captured per-entry tensor": lambda h, ids: h + PER_ENTRY,  # carried in the state (scan_captures)
    "element-wise": lambda h, ids: al.tanh(h * 0.5 + 1.0) - al.abs(h),
    "broadcast shared row": lambda h, ids: h + SHARED_ROW + al.constant([1.0, 2.0, 3.0]),
    "matmul with weights": lambda h, ids: h @ WEIGHTS,
    "reduction over features": lambda h, ids: h - al.reduce_mean(h, axis=1, keepdims=True),
    "softmax": lambda h, ids: al.nn.softmax(h),
    "slice keeping axis 0": lambda h, ids: al.concat([h[:, 1:], h[:, :1]], axis=1),
    "ellipsis slice": lambda h, ids: al.stack([h[..., 0]] * FEATURES, axis=1),
    "embedding lookup": lambda h, ids: h + al.gather(TABLE, ids),
    "one hot": lambda h, ids: h + al.one_hot(ids % FEATURES, FEATURES),
    "transpose keeping axis 0": lambda h, ids: al.transpose(al.expand_dims(h, 2), [0, 2, 1])[:, 0, :],
    "reshape rows": lambda h, ids: al.reshape(al.reshape(h, [-1, FEATURES, 1]), [-1, FEATURES]),
    "where": lambda h, ids: al.where(h > 1.0, h, -h),
    "argmax": lambda h, ids: h + al.cast(al.expand_dims(al.argmax(h, axis=1), 1), al.float32),
}
MIXING = {
    "reduction over entries": (lambda h, ids: h - al.reduce_mean(h, axis=0), "it works along axis 0"),
    "reduction over everything": (lambda h, ids: h - al.reduce_sum(h), "every axis"),
    "batch size from the shape": (lambda h, ids: h * al.cast(al.shape(h)[0], al.float32), "Shape"),
    "entries times entries": (lambda h, ids: al.reduce_sum(h @ (al.expand_dims(h, 2) * al.expand_dims(h, 1)), axis=1),
                              "contracts or broadcasts the entry axis"),
    "slice of one entry": (lambda h, ids: h + h[0], "the slice does not keep axis 0 whole"),
    "per-entry value broadcast against features": (lambda h, ids: h * al.cast(ids[:, None] + al.reshape(ids, [1, -1])
                                                                             [:, :FEATURES], al.float32), "Reshape"),
    "transpose moving entries": (lambda h, ids: al.transpose(al.transpose(h)), "moves the entry axis"),
    "stack along entries": (lambda h, ids: al.reduce_sum(al.stack([h, h], axis=0), axis=0), "joins along axis 0"),
    "print of the state": (lambda h, ids: _printed(h), "PrintV2"),
}


def _printed(h):
    al.print(h)
    return h


def _arguments(update):
    def body(x, state):
        h, ids, step, limit = state
        h = update(h, ids)
        return h, (h, ids, step + 1, limit)

    initial = (al.constant(np.linspace(0, 1, BATCH * FEATURES, dtype=np.float32).reshape(BATCH, FEATURES)),
               al.constant([1, 7, 3, 0]), al.zeros([BATCH], al.int32), al.constant([2, 0, 3, 1]))
    return dict(body=body, cond=lambda x, s: s[2] < s[3], initial=initial, cond_dims=[BATCH],
                ys=al.TensorSpec([BATCH, FEATURES]))


def _scan_node(arguments):
    graph = al.function(lambda: al.scan(**arguments), autograph=False).get_concrete_function().graph
    return next(node for node in graph.nodes if node.op == "Scan")


@pytest.mark.parametrize("name", sorted(ENTRYWISE))
def test_entrywise_bodies_are_compacted(name):
    arguments = _arguments(ENTRYWISE[name])
    node = _scan_node(arguments)
    assert entrywise_problem(node) is None
    assert node.attrs["compaction"] == "compact"
    found = Mode("traced")(lambda: al.scan(**arguments, compaction=True))  # interpreter and compiled agree
    expected = reference_scan(**arguments)
    for f, e in zip(al.nest.flatten(found), al.nest.flatten(expected)):
        np.testing.assert_allclose(f.numpy(), e, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(MIXING))
def test_bodies_that_mix_entries_are_masked(name, capsys):
    update, reason = MIXING[name]
    arguments = _arguments(update)
    node = _scan_node(arguments)
    assert node.attrs["compaction"] == "mask"
    problem = entrywise_problem(node)
    assert problem is not None and reason in problem and "test_scan_compaction_rules.py" in problem
    assert_same(Mode("traced")(lambda: al.scan(**arguments)), reference_scan(**arguments))
    with pytest.raises(ValueError, match="compaction=True"):
        al.function(lambda: al.scan(**arguments, compaction=True), autograph=False)()


def test_a_cond_that_mixes_entries_is_masked():
    arguments = dict(_arguments(ENTRYWISE["element-wise"]), cond=lambda x, s: s[2] < al.reduce_max(s[3]))
    assert "works across every axis" in entrywise_problem(_scan_node(arguments))


def test_a_state_result_that_does_not_come_from_the_state():
    arguments = _arguments(ENTRYWISE["element-wise"])
    arguments["body"] = lambda x, s: (s[0], (PER_ENTRY, s[1], s[2] + 1, s[3]))
    assert "does not come from the state row by row" in entrywise_problem(_scan_node(arguments))


def test_eager_compaction_checks_a_trace_of_the_body_first():
    calls = []

    def update(h, ids):
        calls.append(h.shape[0])
        return h - al.reduce_mean(h, axis=0)

    with pytest.raises(ValueError, match="it works along axis 0"):
        al.scan(**_arguments(update), compaction=True)
    assert calls == [None]  # traced once (the entry axis is unknown there), never run


def test_eager_compaction_runs_the_python_body_on_the_active_rows():
    rows = []

    def update(h, ids):
        rows.append(h.shape[0])
        return h + 1.0

    found = al.scan(**_arguments(update), compaction=True)
    assert rows == [None, 3, 2, 1]  # the proving trace, then frames with lengths [2, 0, 3, 1]
    assert_same(found, reference_scan(**_arguments(lambda h, ids: h + 1.0)))
