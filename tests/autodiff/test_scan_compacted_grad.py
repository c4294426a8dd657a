"""The gradient of a compacted batched scan: its backward pass is a compacted scan too (each entry runs its own
trip count backward), and its gradients equal finite differences and the masked backward's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import autoloop as al
from autoloop.cli.output import format_batching
from tests.autodiff.checks import check_gradient

B, WIDTH = 5, 3
LENGTHS = np.array([0, 1, 4, 2, 7], np.int32)


def _rnn(before=True):
    def loss(h0, w, xs, compaction="auto"):
        lengths = al.constant(LENGTHS)

        def body(x, state):
            h, t = state
            h = al.tanh(h @ w + x) * 1.5
            return al.sin(h), (h, t + 1)
        ys, (h, t), n = al.scan(body=body, initial=(h0, al.zeros([B], al.int32)), xs=xs,
                                ys=al.TensorSpec([B, WIDTH], al.float64), cond=lambda x, s: s[1] < lengths,
                                cond_dims=[B], cond_before_body=before, compaction=compaction)
        return al.reduce_sum(ys * ys) + al.reduce_sum(al.cos(h) * h0)
    return loss


def _arguments(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=[B, WIDTH]), rng.normal(size=[WIDTH, WIDTH]) * 0.6, rng.normal(size=[7, B, WIDTH])]


def _gradients(loss, args, compaction):
    fn = al.function(lambda *a: al.gradients(loss(*a, compaction=compaction), list(a)), autograph=False)
    return [None if g is None else g.numpy() for g in fn(*args)], fn.get_concrete_function(*args).graph


@pytest.mark.parametrize("before", [True, False])
def test_the_backward_pass_is_a_compacted_scan_equal_to_the_masked_one(before):
    args = _arguments()
    compacted, graph = _gradients(_rnn(before), args, "auto")
    masked, masked_graph = _gradients(_rnn(before), args, False)
    for got, expected in zip(compacted, masked):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)
    scans = {node.name: node.attrs["compaction"] for node in graph.walk() if node.op == "Scan"}
    assert scans == {"scan_forward": "compact", "scan_backward": "compact"}, scans
    assert "While" not in [node.op for node in graph.walk()]  # no masked loop left
    assert "While" in [node.op for node in masked_graph.walk()]
    assert "'scan_backward'" in format_batching(graph) and "masked" not in format_batching(graph)


def test_gradients_match_finite_differences():
    check_gradient(lambda h0, w, xs: _rnn()(h0, w, xs), _arguments(1), rtol=1e-6, atol=1e-7)


def test_the_backward_runs_each_entrys_own_trip_count(monkeypatch):
    """Rows the backward body runs on: the sum of the lengths, not entries x longest (numpy's frame loop)."""
    from autoloop.control_flow import scan_run
    rows, original = [], scan_run._Entries.step

    def counted(self, body, num_ys, everyone, x):
        rows.append(len(self.state[0]))
        return original(self, body, num_ys, everyone, x)
    monkeypatch.setattr(scan_run._Entries, "step", counted)
    fn = al.function(lambda *a: al.gradients(_rnn()(*a), list(a)), autograph=False)
    fn(*_arguments())
    assert sum(rows) == 2 * int(LENGTHS.sum()), rows  # forward and backward, each the sum of the lengths


def _per_entry(x, w):
    def one(v):
        while al.reduce_sum(v * v) > 1.0:  # |v| shrinks by about 0.6 a step: trip counts 0 to 8
            v = al.tanh(al.expand_dims(v, 0) @ w)[0] * 0.5 + v * 0.1
        return v * w[0]
    return al.vectorized_map(one, x)


def test_vectorized_map_gradients_through_per_entry_loops():
    rng = np.random.default_rng(2)
    x = rng.normal(size=[6, 3]) * np.array([[0.1], [1.0], [3.0], [10.0], [30.0], [0.5]])
    w = rng.normal(size=[3, 3]) * 0.2 + np.eye(3)
    check_gradient(_per_entry, [x, w], rtol=1e-5, atol=1e-6)
    fn = al.function(lambda x, w: al.gradients(al.reduce_sum(_per_entry(x, w)), [x, w]), autograph=False)
    looped = al.function(lambda x, w: al.gradients(al.reduce_sum(al.map_fn(
        lambda v: _per_entry(al.expand_dims(v, 0), w)[0], x)), [x, w]), autograph=False)
    for got, expected in zip(fn(x, w), looped(x, w)):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-13)
    scans = [node.attrs["compaction"] for node in fn.get_concrete_function(x, w).graph.walk() if node.op == "Scan"]
    assert scans == ["compact", "compact"]


# -- generated per-entry loops: the compacted backward against the masked one ---------------------------------
_STEP = st.sampled_from(["scale", "tanh", "product", "shift"])


def _generated(program, per_entry):
    def loss(h0, w, xs, compaction="auto"):
        lengths = al.constant(np.array(per_entry, np.int32))

        def body(x, state):
            h, t = state
            for step, value in program:
                if step == "scale":
                    h = h * value
                elif step == "tanh":
                    h = al.tanh(h + x * value)
                elif step == "product":
                    h = h @ w
                else:
                    h = h - al.reduce_mean(h, axis=1, keepdims=True) * value
            return h * x, (h, t + 1)
        ys, (h, _), _ = al.scan(body=body, initial=(h0, al.zeros([B], al.int32)), xs=xs,
                                ys=al.TensorSpec([B, WIDTH], al.float64), cond=lambda x, s: s[1] < lengths,
                                cond_dims=[B], compaction=compaction)
        return al.reduce_sum(al.sin(ys)) + al.reduce_sum(h * h)
    return loss


@settings(max_examples=8, deadline=None)
@example([("tanh", 0.5)], [0, 0, 0, 0, 0], 0)  # no entry runs a frame: nothing to gather from
@given(st.lists(st.tuples(_STEP, st.floats(-1.0, 1.0)), min_size=1, max_size=3),
       st.lists(st.integers(0, 7), min_size=B, max_size=B), st.integers(0, 100))
def test_generated_loops_compacted_backward_equals_the_masked_one(program, lengths, seed):
    args = _arguments(seed)
    args[1] = args[1] * 0.5
    compacted, graph = _gradients(_generated(program, lengths), args, "auto")
    masked, _ = _gradients(_generated(program, lengths), args, False)
    for got, expected in zip(compacted, masked):
        assert (got is None) == (expected is None)  # None: w is not used
        if got is not None:
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    assert [n.attrs["compaction"] for n in graph.walk() if n.op == "Scan"] == ["compact", "compact"]


def test_a_tape_over_a_traced_function_takes_the_compacted_backward():
    """An eager GradientTape around a call differentiates the function's graph in a graph of its own, reading the
    forward values it saved (the forward scan's starting states among them)."""
    args = _arguments(3)
    traced = al.function(lambda *a: _rnn()(*a), autograph=False)
    tensors = [al.constant(a) for a in args]
    with al.GradientTape() as tape:
        tape.watch(tensors)
        loss = traced(*tensors)
    expected, _ = _gradients(_rnn(), args, "auto")
    for got, want in zip(tape.gradient(loss, tensors), expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-13)
    from autoloop.autodiff.function_calls import gradient_pair
    backward = gradient_pair(traced.get_concrete_function(*args)).backward
    assert "scan_backward" in {n.name for n in backward.graph.walk() if n.op == "Scan"}


def test_second_derivatives_through_the_compacted_backward():
    """The compacted backward is differentiable again (reverse and forward mode), and builds inside a Jacobian's
    row loop (hessians)."""
    args = _arguments(4)
    results = {}
    for compaction in ("auto", False):
        def loss(h0, w, xs, compaction=compaction):
            return _rnn()(h0, w, xs, compaction=compaction)
        second = al.function(lambda h0, w, xs: al.gradients(al.gradients(loss(h0, w, xs), [w])[0], [h0])[0],
                             autograph=False)
        hessian = al.function(lambda h0, w, xs: al.hessians(loss(h0, w, xs), [w])[0], autograph=False)

        def forward_over_reverse(h0, w, xs, loss=loss):
            with al.autodiff.ForwardAccumulator(w, al.ones_like(w)) as accumulator:
                gradient = al.gradients(loss(h0, w, xs), [w])[0]
            return accumulator.jvp(gradient)
        results[compaction] = (second(*args).numpy(), hessian(*args).numpy(),
                               al.function(forward_over_reverse, autograph=False)(*args).numpy())
    for got, expected in zip(results["auto"], results[False]):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_a_tf1_session_runs_the_compacted_backward():
    tf1 = al.compat.v1
    args, results = _arguments(5), {}
    for compaction in ("auto", False):
        with tf1.Graph().as_default():
            placeholders = [tf1.placeholder(al.float64, a.shape) for a in args]
            grads = tf1.gradients(_rnn()(*placeholders, compaction=compaction), placeholders)
            with tf1.Session() as session:
                results[compaction] = session.run(grads, dict(zip(placeholders, args)))
    for got, expected in zip(results["auto"], results[False]):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)
    expected, _ = _gradients(_rnn(), args, "auto")
    for got, want in zip(results["auto"], expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
