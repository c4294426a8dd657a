"""backend="jax": a batched scan that may compact runs masked (like jax.vmap) or in stages of halving size, by
a cost rule; either way its results equal the numpy backend's and map_fn's exactly."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop import cli
from tests.conftest import needs_jax

pytestmark = needs_jax


def _collatz_step(n):
    return al.where(n % 2 == 0, n // 2, 3 * n + 1)


def _collatz_scan(compaction, before=True, rank=1):
    """Collatz trip counts per entry (long-tailed, exact in integers), with xs added into ys."""
    def run(start, xs):
        def body(x, state):
            n, total = state
            total = total + x * n
            return total, (_collatz_step(n), total)
        entries = start.shape.as_list()[:rank]
        return al.scan(body=body, initial=(start, al.zeros_like(start)), xs=xs, ys=al.TensorSpec(entries, al.int32),
                       cond=lambda x, s: s[0] != 1, cond_dims=entries, cond_before_body=before,
                       compaction=compaction)
    return run


START = np.array([1, 7, 2, 27, 3, 6, 9, 12], np.int32)
XS = (np.arange(115 * 8, dtype=np.int32).reshape(115, 8) % 5) - 2


@pytest.fixture
def stages(monkeypatch):
    """The row counts of the stage loops the JAX lowering builds (0: the first, on every row in place)."""
    from autoloop.backends.jax import scan
    sizes, original = [], scan._stage

    def recorded(lowering, node, groups, carry, size, *rest):
        sizes.append(size)
        return original(lowering, node, groups, carry, size, *rest)
    monkeypatch.setattr(scan, "_stage", recorded)
    return sizes


def _assert_same(got, expected):
    got, expected = al.nest.flatten(got), al.nest.flatten(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype and g.shape == e.shape, (g, e)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize("before", [True, False])
def test_stages_equal_numpy_and_the_masked_form_exactly(before, stages):
    expected = al.function(_collatz_scan(True, before), autograph=False)(START, XS)
    masked = al.function(_collatz_scan(False, before), autograph=False, backend="jax")(START, XS)
    assert stages == [0]
    staged = al.function(_collatz_scan(True, before), autograph=False, backend="jax")(START, XS)
    assert stages == [0, 0, 4, 2, 1]  # compaction=True: stages whatever the cost rule says
    _assert_same(masked, expected)
    _assert_same(staged, expected)
    assert int(expected[2].numpy().max()) == 111 and int(expected[2].numpy().min()) == (0 if before else 1)


def test_stages_with_two_entry_axes_compact_rows():
    start, xs = START.reshape(4, 2), XS.reshape(115, 4, 2)
    expected = al.function(_collatz_scan(True, rank=2), autograph=False)(start, xs)
    _assert_same(al.function(_collatz_scan(True, rank=2), autograph=False, backend="jax")(start, xs), expected)


def _matmul_entry(weights):
    def entry(elem):
        h, count = elem
        step = al.constant(0)
        while step < count:
            h = al.matmul(al.expand_dims(h, 0), weights)[0] % 97
            step += 1
        return h
    return entry


def _scan_node(function, *args):
    (node,) = [n for n in function.get_concrete_function(*args).graph.walk() if n.op == "Scan"]
    return node


def test_vectorized_map_with_a_product_runs_in_stages_and_equals_map_fn(stages):
    from autoloop.backends.jax.scan_form import jax_form
    rng = np.random.default_rng(0)
    weights = al.constant(rng.integers(0, 5, (6, 6)).astype(np.int32))
    h = rng.integers(0, 9, (16, 6)).astype(np.int32)
    counts = np.array([1, 2, 0, 40, 3, 1, 1, 9, 2, 1, 0, 5, 1, 2, 1, 17], np.int32)
    entry = _matmul_entry(weights)
    vectorized = al.function(lambda h, n: al.vectorized_map(entry, (h, n)), autograph=False, backend="jax")
    looped = al.function(lambda h, n: al.map_fn(entry, (h, n), fn_output_signature=al.int32), autograph=False)
    _assert_same(vectorized(h, counts), looped(h, counts))
    assert jax_form(_scan_node(vectorized, h, counts))[0] == "stages" and stages == [0, 8, 4, 2, 1]


def test_the_cost_rule_masks_small_bodies_and_small_batches():
    from autoloop.backends.jax.scan_form import jax_form

    def halve(x):
        while al.reduce_max(x) > 1.0:
            x = x / 2.0
        return x
    tiny = al.function(lambda x: al.vectorized_map(halve, x), autograph=False, backend="jax")
    x = np.geomspace(0.5, 1e6, 64).astype(np.float32)
    form, why = jax_form(_scan_node(tiny, x))
    assert form == "masked" and "like jax.vmap" in why and "flops" in why, why
    np.testing.assert_array_equal(tiny(x).numpy(), al.map_fn(halve, al.constant(x)).numpy())
    wide = np.repeat(x[:, None], 512, axis=1)
    assert jax_form(_scan_node(tiny, wide))[0] == "stages"  # 512 numbers per entry: work enough to drop rows
    few = al.function(lambda h, n: al.vectorized_map(_matmul_entry(al.ones([6, 6], al.int32)), (h, n)),
                      autograph=False, backend="jax")
    form, why = jax_form(_scan_node(few, np.ones((4, 6), np.int32), np.ones(4, np.int32)))
    assert form == "masked" and "fewer than 8" in why
    unproven = al.function(_collatz_scan(False), autograph=False, backend="jax")
    assert jax_form(_scan_node(unproven, START, XS))[0] == "masked"


def test_explain_on_jax_names_the_form(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(
        "import autoloop as al\n\nW = al.ones([4, 4])\n\n\ndef grow(h):\n    while al.reduce_sum(h) < 100.0:\n"
        "        h = al.matmul(al.expand_dims(h, 0), W)[0]\n    return h\n\n\n"
        "@al.function\ndef run(h):\n    return al.vectorized_map(grow, h)\n")
    rows = "[" + ", ".join(["[1.0, 0.5, 0.0, 2.0]"] * 8) + "]"
    assert cli.main(["run", "model.py::run", rows, "--explain", "--backend", "jax"]) == 0
    out = capsys.readouterr().out
    assert "finished entries compacted" in out and "on XLA compacted in stages of 8, 4, ..., 1 rows" in out, out
    assert cli.main(["run", "model.py::run", rows, "--explain"]) == 0
    assert "on XLA" not in capsys.readouterr().out


def _bounded_loss(h0, w, counts):
    def body(_, state):
        h, t, count = state
        return None, (al.tanh(h @ w), t + 1, count)
    h = al.scan(body=body, initial=(h0, al.zeros_like(counts), counts), cond=lambda _, s: s[1] < s[2],
                cond_dims=[8], max_seq_len=12)[1][0]
    return al.reduce_sum(h * h)


def test_a_static_shape_trace_keeps_the_masked_backward():
    """A JAX trace (and its copies) keeps static shapes; a body this small differentiates masked there (the cost
    rule, `jax_gradient_form`; tests/autodiff/test_scan_compacted_grad_jax.py has the compacted backward)."""
    from autoloop.ir import rewrite
    rng = np.random.default_rng(0)
    h0, w = rng.normal(size=[8, 4]).astype(np.float32), (rng.normal(size=[4, 4]) * 0.5).astype(np.float32)
    counts = np.array([0, 1, 5, 2, 9, 3, 1, 1], np.int32)
    grads = {backend: al.function(lambda a, b, c: al.gradients(_bounded_loss(a, b, c), [a, b]), autograph=False,
                                  backend=backend) for backend in ("numpy", "jax")}
    for got, expected in zip(grads["jax"](h0, w, counts), grads["numpy"](h0, w, counts)):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    graphs = {backend: fn.get_concrete_function(h0, w, counts).graph for backend, fn in grads.items()}
    names = {backend: [n.name for n in graph.walk() if n.op == "Scan"] for backend, graph in graphs.items()}
    assert "scan_backward" in names["numpy"] and not any(name.endswith("_backward") for name in names["jax"])
    assert graphs["jax"].static_shapes and rewrite.clone(graphs["jax"]).static_shapes
    assert not graphs["numpy"].static_shapes
