"""backend="jax": the gradient of a batched scan compacted in stages is compacted too (its backward a batched scan
in stages, aligned on each entry's end; captured tensors' gradients summed in chunks of 4 B pairs), and equals the
masked backward's, the numpy backend's and finite differences, on long-tailed lengths."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop.cli.output import format_batching
from autoloop.errors import InvalidArgumentError
from tests.conftest import needs_jax

B, WIDTH = 8, 4
LENGTHS = np.array([2, 0, 3, 1, 6, 14, 40, 100], np.int32)  # a long tail, and a 0
FRAMES = 104


def _rnn(compaction=True):
    """An RNN over a padded batch, ``h @ W`` with `W` captured, stopping at captured per-entry `lengths`
    (``compaction=True``: compacted forward and backward on XLA even for a body this small)."""
    def loss(h0, w, xs, lengths):
        def body(x, state):
            h, t = state
            h = al.tanh(h @ w + x) * 1.2
            return al.sin(h), (h, t + 1)
        ys, (h, _), _ = al.scan(body=body, initial=(h0, al.zeros([B], al.int32)), xs=xs,
                                ys=al.TensorSpec([B, WIDTH], al.float64), cond=lambda x, s: s[1] < lengths,
                                cond_dims=[B], compaction=compaction)
        # XLA reads ys (their length known only when the scan runs) through a reduction over the frames
        return al.reduce_sum(al.cos(al.reduce_sum(ys, axis=0))) + al.reduce_sum(al.cos(h) * h0)
    return loss


def _arguments(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=[B, WIDTH]), rng.normal(size=[WIDTH, WIDTH]) * 0.5, rng.normal(size=[FRAMES, B, WIDTH]),
            LENGTHS]


def _gradient_function(loss, backend):
    return al.function(lambda h0, w, xs, lengths: al.gradients(loss(h0, w, xs, lengths), [h0, w, xs]),
                       autograph=False, backend=backend)


def _scans(function, args):
    return {n.name: n for n in function.get_concrete_function(*args).graph.walk() if n.op == "Scan"}


def _check_directional_derivatives(loss, args, grads, step=1e-6, rtol=1e-6, backend="jax"):
    """Central differences of the loss on `backend` (XLA) along random directions against the gradients."""
    value = al.function(loss, autograph=False, backend=backend)
    rng = np.random.default_rng(2)
    for _ in range(3):
        directions = [rng.normal(size=np.shape(g)) for g in grads]
        shifted = [float(value(*[a + sign * step * d for a, d in zip(args, directions)], *args[len(grads):]).numpy())
                   for sign in (1, -1)]
        exact = sum(float(np.sum(g * d)) for g, d in zip(grads, directions))
        np.testing.assert_allclose(exact, (shifted[0] - shifted[1]) / (2 * step), rtol=rtol, atol=1e-7)


@pytest.fixture
def stages(monkeypatch):
    """The scans lowered in stages: ``(scan name, row count)`` per stage loop (0: the first, every row)."""
    from autoloop.backends.jax import scan
    seen, original = [], scan._stage

    def recorded(lowering, node, groups, carry, size, *rest):
        seen.append((node.name, size))
        return original(lowering, node, groups, carry, size, *rest)
    monkeypatch.setattr(scan, "_stage", recorded)
    return seen


@needs_jax
def test_the_jax_backward_is_compacted_and_equals_the_masked_one_and_finite_differences(stages):
    """(A do-while, ``cond_before_body=False``, takes the same backward; the numpy tests run both.)"""
    from autoloop.backends.jax.scan_form import jax_form
    args = _arguments()
    compacted = _gradient_function(_rnn(), "jax")
    got = [g.numpy() for g in compacted(*args)]
    scans = _scans(compacted, args)
    assert set(scans) == {"scan_forward", "scan_backward"}, scans
    assert all(jax_form(node)[0] == "stages" for node in scans.values())
    assert {name for name, size in stages if size} == {"scan_forward", "scan_backward"}  # smaller stages ran
    explained = format_batching(compacted.get_concrete_function(*args).graph, backend="jax")  # what --explain prints
    assert explained.count("on XLA compacted in stages of 8, 4, ..., 1 rows") == 2 and "'scan_backward'" in explained
    for backend in ("numpy", "jax"):  # the masked backward on both
        for g, e in zip(got, _gradient_function(_rnn(compaction=False), backend)(*args), strict=True):
            np.testing.assert_allclose(g, e.numpy(), rtol=1e-11, atol=1e-12)
    _check_directional_derivatives(_rnn(), args, got)
    assert np.abs(got[2][LENGTHS.max():]).max() == 0  # frames no entry ran get no gradient
    assert np.abs(got[2][:, LENGTHS == 0]).sum() == 0
    assert (np.abs(got[2]).sum(axis=(0, 2)) > 0).sum() == (LENGTHS > 0).sum()


@needs_jax
def test_a_gradient_tape_around_a_jax_function_takes_the_compacted_backward():
    """An eager tape around a call of a backend="jax" function: the masked backward cannot run there (its saved
    lists would have to leave the compiled program); the compacted one saves the frames as arrays."""
    h0, w, counts = _bounded_arguments()
    expected = al.function(lambda a, b, c: al.gradients(_bounded_loss(a, b, c), [a, b]), autograph=False)
    traced = al.function(_bounded_loss, autograph=False, backend="jax")
    tensors = [al.constant(a) for a in (h0, w, counts)]
    with al.GradientTape() as tape:
        tape.watch(tensors[:2])
        loss = traced(*tensors)
    for got, want in zip(tape.gradient(loss, tensors[:2]), expected(h0, w, counts), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-11, atol=1e-12)
    from autoloop.autodiff.function_calls import gradient_pair
    backward = gradient_pair(traced.get_concrete_function(h0, w, counts)).backward
    assert "scan_backward" in {n.name for n in backward.graph.walk() if n.op == "Scan"}


def _per_entry(w):
    def one(v):
        while al.reduce_sum(v * v) > 0.05:  # 0 to about 40 steps, by the entry's size
            al.set_loop_options(maximum_iterations=64)  # a bound: XLA preallocates the frames the backward reads
            v = al.tanh(al.expand_dims(v, 0) @ w)[0] * 0.9
        return v * w[0]
    return one


@needs_jax
def test_vectorized_map_gradients_on_jax_equal_map_fns():
    rng = np.random.default_rng(4)  # 16 entries of 96 values: work enough for the cost rule to compact
    x = rng.normal(size=[16, 96]) * np.geomspace(0.001, 3, 16)[:, None]
    w = np.eye(96) * 1.02 + rng.normal(size=[96, 96]) * 0.002
    vectorized = al.function(lambda x, w: al.gradients(al.reduce_sum(al.vectorized_map(_per_entry(w), x)), [x, w]),
                             autograph=False, backend="jax")
    looped = al.function(lambda x, w: al.gradients(al.reduce_sum(al.map_fn(_per_entry(w), x)), [x, w]),
                         autograph=False)
    for got, expected in zip(vectorized(x, w), looped(x, w), strict=True):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    scans = [n.name for n in vectorized.get_concrete_function(x, w).graph.walk() if n.op == "Scan"]
    assert any(name.endswith("_backward") for name in scans), scans


def _bounded_loss(h0, w, counts, bound=12, compaction=True):
    def body(_, state):
        h, t, count = state
        return None, (al.tanh(h @ w), t + 1, count)
    options = {"max_seq_len": bound} if bound is not None else {}
    h = al.scan(body=body, initial=(h0, al.zeros_like(counts), counts), cond=lambda _, s: s[1] < s[2],
                cond_dims=counts.shape.as_list(), compaction=compaction, **options)[1][0]
    return al.reduce_sum(h * h)


def _bounded_arguments():
    rng = np.random.default_rng(0)
    return rng.normal(size=[8, 4]), rng.normal(size=[4, 4]) * 0.5, np.array([0, 1, 5, 2, 9, 3, 1, 1], np.int32)


@needs_jax
def test_the_cost_rule_chooses_the_jax_backward():
    """The compacted backward where the forward runs in stages and a step has work enough (or compaction=True),
    with or without a bound on the frames; else the masked one, which the gradients equal."""
    from autoloop.backends.jax.scan_form import jax_gradient_form
    h0, w, counts = _bounded_arguments()

    def form(h0, w, counts, **options):
        loss = al.function(lambda a, b, c: _bounded_loss(a, b, c, **options), autograph=False, backend="jax")
        (node,) = _scans(loss, (h0, w, counts)).values()
        return jax_gradient_form(node)
    assert form(h0, w, counts) == ("compacted", "compacted backward (compaction=True)")
    small = form(h0, w, counts, compaction="auto")
    assert small[0] == "masked" and "below 131,072" in small[1], small
    wide = np.random.default_rng(1).normal(size=[128, 128]) * 0.05
    assert form(np.ones([8, 128]), wide, counts, compaction="auto")[0] == "compacted"  # 8 x 128 x 128: enough
    assert form(h0, w, counts, bound=None) == ("compacted", "compacted backward (compaction=True)")  # a capacity
    assert form(h0[:4], w, counts[:4], compaction="auto") == ("masked", "masked backward: the forward runs masked "
                                                               "like jax.vmap: 4 entries, fewer than 8, leave little to drop")
    for options in ({"compaction": "auto"}, {"bound": None}):
        grads = {backend: al.function(lambda a, b, c: al.gradients(_bounded_loss(a, b, c, **options), [a, b]),
                                      autograph=False, backend=backend) for backend in ("numpy", "jax")}
        for got, expected in zip(grads["jax"](h0, w, counts), grads["numpy"](h0, w, counts), strict=True):
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-13)
        assert ("scan_backward" in _scans(grads["jax"], (h0, w, counts))) == ("bound" in options)
        explained = format_batching(grads["jax"].get_concrete_function(h0, w, counts).graph, backend="jax")
        assert ("while loop 'scan_loop'" in explained and "the forward of batched scan 'scan'; on XLA masked "
                "backward: a step is about 184 flops over the batch, below 131,072" in explained) != ("bound" in options)
        assert "scan_backward" in _scans(grads["numpy"], (h0, w, counts))


@needs_jax
def test_second_derivatives_through_the_jax_compacted_backward():
    """A Hessian (reverse over reverse in a row loop: the backward scan's own gradient reads frames it stacked,
    and the loop takes shapes of such stacks) and forward over reverse, as on numpy; 4 entries (stages of 4, 2,
    1: fewer loops to compile)."""
    h0, w, counts = (a[:4] if a.shape[0] == 8 else a for a in _bounded_arguments())

    def hessian(a, b, c):
        return al.hessians(_bounded_loss(a, b, c), [b])[0]

    def forward_over_reverse(a, b, c):
        with al.autodiff.ForwardAccumulator(b, al.ones_like(b)) as accumulator:
            gradient = al.gradients(_bounded_loss(a, b, c), [b])[0]
        return accumulator.jvp(gradient)
    for fn in (hessian, forward_over_reverse):
        on_jax = al.function(fn, autograph=False, backend="jax")
        expected = al.function(fn, autograph=False)(h0, w, counts).numpy()
        np.testing.assert_allclose(on_jax(h0, w, counts).numpy(), expected, rtol=1e-10, atol=1e-12)
        assert any(name.endswith("_backward") for name in _scans(on_jax, (h0, w, counts)))
    # without a bound (the frames in a capacity the program grows): the chunk loop's saved shapes stay static
    unbounded = al.function(lambda a, b, c: al.hessians(_bounded_loss(a, b, c, bound=None), [b])[0], autograph=False,
                            backend="jax")
    np.testing.assert_allclose(unbounded(h0, w, counts).numpy(), al.function(hessian, autograph=False)(h0, w, counts),
                               rtol=1e-10, atol=1e-12)
    assert any(name.endswith("_backward") for name in _scans(unbounded, (h0, w, counts)))


@needs_jax
def test_pad_rows_pads_stacked_frames_on_both_backends():
    def padded(h, rows=4):
        def body(_, s):
            return s[0], (s[0] * 2.0, s[1] + 1)
        ys = al.scan(body=body, initial=(h, al.zeros([3], al.int32)), ys=al.TensorSpec([3], al.float64),
                     cond=lambda _, s: s[1] < al.constant([0, 2, 1]), cond_dims=[3], max_seq_len=4)[0]
        from autoloop.ops.resize_ops import pad_rows
        return pad_rows(ys, rows) * 1.0
    h = np.array([1.0, 2.0, 3.0])
    expected = np.array([[0, 2, 3], [0, 4, 0], [0, 0, 0], [0, 0, 0]], np.float64)
    for backend, rows in (("numpy", 2), ("jax", 4)):  # rows=None: as many as the backend holds (the bound on XLA)
        found = al.function(lambda h: padded(h, None), autograph=False, backend=backend)(h).numpy()
        np.testing.assert_array_equal(found, expected[:rows])
    for backend in ("numpy", "jax"):
        np.testing.assert_array_equal(al.function(padded, autograph=False, backend=backend)(h).numpy(), expected)
    for backend in ("numpy", "jax"):  # on XLA: PadRowsGrad gives the rows below the stack's length, a stack
        grad = al.function(lambda h: al.gradients(al.reduce_sum(padded(h)), [h])[0], autograph=False,
                           backend=backend)(h)
        np.testing.assert_array_equal(grad.numpy(), [0.0, 3.0, 1.0])


def test_pad_rows_refuses_more_rows_and_searchsorted_takes_empty_values():
    from autoloop.ops.resize_ops import pad_rows
    with pytest.raises(ValueError, match="has 3 rows, more than the 2 to pad to"):
        pad_rows(al.zeros([3, 2]), 2)
    with pytest.raises(InvalidArgumentError, match="has 3 rows, more than the 2 to pad to"):
        al.function(lambda x: pad_rows(x, 2), input_signature=[al.TensorSpec([None, 2])])(np.zeros([3, 2], np.float32))
    found = al.searchsorted(al.constant([1, 3], al.int32), al.zeros([0], al.int32), side="right")
    assert found.shape == (0,) and found.dtype is al.int32  # no pair to number: a scan in which no entry ran


def _counted_loop(w):
    """A per-entry ``while`` with no bound known while compiling: ``k < n`` steps of ``tanh(v @ w)``."""
    def one(entry):
        v, n = entry
        k = al.constant(0)
        while k < n:
            v = al.tanh(al.expand_dims(v, 0) @ w)[0] * 1.1
            k += 1
        return v
    return one


@needs_jax
def test_an_unbounded_vectorized_map_loop_takes_the_compacted_backward_and_grows_its_capacity(monkeypatch):
    """No maximum_iterations: the frames the forward saves and the backward collects are held in a capacity the
    program grows (`growth`: 64, then 128 for trip counts up to 100, compiled again, never cut short)."""
    from autoloop.backends.jax import program, scan_form
    compiles = []
    original = program.JaxProgram._compile
    monkeypatch.setattr(program.JaxProgram, "_compile", lambda self: compiles.append(1) or original(self))
    rng = np.random.default_rng(5)  # 16 entries of 96 values: work enough for the cost rule to compact
    x, w = rng.normal(size=[16, 96]), np.eye(96) * 0.9 + rng.normal(size=[96, 96]) * 0.01
    counts = np.array([0, 1, 2, 3, 3, 4, 5, 6, 8, 9, 12, 15, 20, 30, 60, 100], np.int32)

    def loss(x, w, counts):
        return al.reduce_sum(al.sin(al.vectorized_map(_counted_loop(w), (x, counts), fallback_to_while_loop=False)))

    def gradient(backend):
        return al.function(lambda x, w, c: al.gradients(loss(x, w, c), [x, w]), autograph=False, backend=backend)
    compacted = gradient("jax")
    got = [g.numpy() for g in compacted(x, w, counts)]
    assert len(compiles) == 2  # the first capacity, 64 frames, then 128
    capacities = compacted.get_concrete_function(x, w, counts).compiled._capacities
    assert [(loop.name, n) for loop, n in capacities.items()] == [("while_forward", 128)]  # the backward: as many
    scans = _scans(compacted, (x, w, counts))
    assert set(scans) == {"while_forward", "while_backward"}, scans
    assert scan_form.jax_gradient_form(_scans(al.function(loss, autograph=False, backend="jax"),
                                              (x, w, counts))["while"]) == (
        "compacted", "compacted backward (a step is about 153,664 flops over the batch)")
    explained = format_batching(compacted.get_concrete_function(x, w, counts).graph, backend="jax")
    assert explained.count("on XLA compacted in stages of 16, 8, ..., 1 rows") == 2 and "'while_backward'" in explained
    looped = al.function(lambda x, w, c: al.gradients(al.reduce_sum(al.sin(al.map_fn(_counted_loop(w), (x, c),
                                                                                      fn_output_signature=al.float64))),
                                                      [x, w]), autograph=False)
    for g, e in zip(got, looped(x, w, counts), strict=True):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(scan_form, "MIN_GRADIENT_WORK", 1 << 40)  # the masked backward, on JAX too
    masked = gradient("jax")
    for g, e in zip(got, masked(x, w, counts), strict=True):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-10, atol=1e-12)
    assert not _scans(masked, (x, w, counts))
    # (the loss on numpy, which the JAX forward equals: one compile fewer; a loss of about 6,000)
    _check_directional_derivatives(loss, [x, w, counts], got, rtol=1e-5, backend="numpy")
