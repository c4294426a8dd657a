"""scan over sequences of different lengths, as RETURNN writes it: xs [frames, B, ...] with cond_dims, captured
per-entry tensors compacted with the state, a per-entry spatial_dim; --explain and the long-tail warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autoloop as al
from autoloop import cli
from autoloop.control_flow.scan_run import MaskedScanWarning
from tests.autodiff.checks import check_gradient
from tests.scan.reference import reference_scan

T, B, F, H = 6, 5, 3, 4
RNG = np.random.default_rng(7)
XS = RNG.normal(size=[T, B, F]).astype(np.float32)
LENGTHS = np.array([6, 2, 0, 5, 1], np.int32)
W = RNG.normal(size=[F, H]).astype(np.float32)
U = (RNG.normal(size=[H, H]) * 0.3).astype(np.float32)


def _rnn_args(lengths):
    def body(x, state):
        h, t = state
        h = al.tanh(al.matmul(x, W) + al.matmul(h, U))
        return h, (h, t + 1)
    return dict(body=body, initial=(np.zeros([B, H], np.float32), np.zeros([B], np.int32)),
                ys=al.TensorSpec([B, H]), cond=lambda x, s: s[1] < lengths, cond_dims=[B])


def _scan_node(mode):
    return [n for n in mode.concrete.graph.walk() if n.op == "Scan"][0] if mode.traced else None


def _assert_equal(got, expected):
    for g, e in zip(al.nest.flatten(got), al.nest.flatten(expected)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-6, atol=1e-6)


def test_xs_with_cond_dims_and_captured_lengths_compact(mode):
    def run(xs, lengths):
        return al.scan(xs=xs, **_rnn_args(lengths))
    ys, state, ran = mode(run, al.constant(XS), al.constant(LENGTHS))
    expected = reference_scan(xs=al.constant(XS), **_rnn_args(al.constant(LENGTHS)))
    _assert_equal((ys, state, ran), expected)
    np.testing.assert_array_equal(ran.numpy(), LENGTHS)
    if mode.traced:
        node = _scan_node(mode)
        assert node.attrs["compaction"] == "compact"
        assert any(name.startswith("captured") for name in node.attrs["names"])


def test_a_closed_over_constant_of_lengths_is_per_entry_too():
    lengths = al.constant(LENGTHS)  # traced as a constant inside the cond

    @al.function(autograph=False)
    def run(xs):
        return al.scan(xs=xs, **_rnn_args(lengths))
    _assert_equal(run(al.constant(XS)), reference_scan(xs=al.constant(XS), **_rnn_args(lengths)))
    (node,) = [n for n in run.get_concrete_function(al.constant(XS)).graph.walk() if n.op == "Scan"]
    assert node.attrs["compaction"] == "compact"


def test_per_entry_spatial_dim(mode):
    def body(x, h):
        h = al.tanh(al.matmul(x, W) + al.matmul(h, U))
        return h, h

    def run(xs, lengths):
        return al.scan(body=body, initial=al.zeros([B, H]), xs=xs, ys=al.TensorSpec([B, H]), spatial_dim=lengths)
    ys, h, ran = mode(run, al.constant(XS), al.constant(LENGTHS))
    expected = reference_scan(xs=al.constant(XS), **_rnn_args(al.constant(LENGTHS)))
    _assert_equal((ys, h, ran), (expected[0], expected[1][0], expected[2]))
    if mode.traced:
        assert _scan_node(mode).attrs["compaction"] == "compact"


def test_per_entry_spatial_dim_without_state_and_with_a_cond():
    seen = al.scan(body=lambda x, s: (x * 2.0, None), xs=al.constant(XS[:, :, 0]), ys=al.TensorSpec([B]),
                   spatial_dim=al.constant(LENGTHS), cond=lambda x, s: x > -1.0)
    steps = np.arange(T)[:, None]
    alive = np.cumprod((XS[:, :, 0] > -1.0) & (steps < LENGTHS), axis=0).astype(bool)
    np.testing.assert_array_equal(seen[2].numpy(), alive.sum(0))
    frames = alive.sum(0).max()  # the loop ends when every entry has
    np.testing.assert_allclose(seen[0].numpy(), np.where(alive, XS[:, :, 0] * 2, 0)[:frames])
    with pytest.raises(ValueError, match="cond_before_body=True"):
        al.scan(body=lambda x, s: (x, None), xs=al.constant(XS), ys=al.TensorSpec([B, F]),
                spatial_dim=al.constant(LENGTHS), cond_before_body=False)


def test_do_while_over_xs_with_cond_dims(mode):
    def run(xs):
        return al.scan(body=lambda x, s: (s, s + x), initial=al.zeros([B]), xs=xs, ys=al.TensorSpec([B]),
                       cond=lambda x, s: s < 1.0, cond_dims=[B], cond_before_body=False)
    got = mode(run, al.constant(np.abs(XS[:, :, 0])))
    expected = reference_scan(body=lambda x, s: (s, s + x), initial=np.zeros([B], np.float32),
                              xs=al.constant(np.abs(XS[:, :, 0])), ys=al.TensorSpec([B]), cond=lambda x, s: s < 1.0,
                              cond_dims=[B], cond_before_body=False)
    _assert_equal(got, expected)


def test_a_capture_is_per_entry_only_when_its_uses_say_so(mode):
    # bias has B entries too (B == H here), but it is added along the trailing axis: shared, not per entry.
    bias = al.constant(np.arange(B, dtype=np.float32) / 10.0)

    def run(lengths):
        def body(x, state):
            h, t = state
            return None, (h * 0.5 + bias, t + 1)  # exact on every backend
        return al.scan(body=body, initial=(al.ones([B, B]), al.zeros([B], al.int32)),
                       cond=lambda x, s: s[1] < lengths, cond_dims=[B])
    _, (h, _), ran = mode(run, al.constant(LENGTHS))
    expected = np.ones([B, B], np.float32)
    for b in range(B):
        for _ in range(LENGTHS[b]):
            expected[b] = expected[b] * np.float32(0.5) + np.arange(B, dtype=np.float32) / np.float32(10.0)
    np.testing.assert_array_equal(h.numpy(), expected)
    if mode.traced:
        names = _scan_node(mode).attrs["names"]
        assert [n for n in names if n.startswith("captured")] == ["captured lengths:0"]  # not bias


def test_gradients_through_xs_with_cond_dims_match_finite_differences():
    def fn(xs, w, lengths):
        def body(x, state):
            h, t = state
            h = al.tanh(x * w + h * 0.5)
            return h, (h, t + 1)
        ys, (h, _), _ = al.scan(body=body, initial=(al.zeros([B, F], al.float64), al.zeros([B], al.int32)),
                                xs=xs, ys=al.TensorSpec([B, F], al.float64), cond=lambda x, s: s[1] < lengths,
                                cond_dims=[B])
        return ys, h
    check_gradient(fn, [XS.astype(np.float64), RNG.normal(size=[F]), LENGTHS])


MASKED = '''
import autoloop as al


@al.function
def run(x):
    lengths = al.cast(x * 10.0, al.int32)

    def body(_, state):
        h, t = state
        return None, (h - al.reduce_mean(h), t + 1)   # mixes entries: no compaction
    _, (h, t), n = al.scan(body=body, initial=(x, al.zeros_like(lengths)), cond=lambda _, s: s[1] < lengths,
                           cond_dims=[8])
    return n
'''


def test_explain_and_the_long_tail_warning_say_why_a_scan_masks(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(MASKED)
    arguments = "[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 3.0]"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cli.main(["run", "model.py::run", arguments, "--explain"]) == 0
    out = capsys.readouterr().out
    assert "batched scan 'scan'" in out and "masked, not compacted" in out and "Mean" in out, out
    assert any(issubclass(w.category, MaskedScanWarning) and "30 frames" not in str(w.message) for w in caught)


def test_explain_reports_compaction_of_vectorized_map(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(
        "import autoloop as al\n\n\ndef halve(x):\n    while x > 1.0:\n        x = x / 2.0\n    return x\n\n\n"
        "@al.function\ndef run(x):\n    return al.vectorized_map(halve, x)\n")
    assert cli.main(["run", "model.py::run", "[0.5, 8.0, 100.0]", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "vectorized_map while loop" in out and "finished entries compacted" in out, out
