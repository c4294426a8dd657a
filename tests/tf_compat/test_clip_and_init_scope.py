"""`clip_by_norm` and `init_scope`, two names TensorFlow's guides reach for."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al


@pytest.mark.parametrize("traced", [False, True])
def test_clip_by_norm_scales_to_the_norm_and_leaves_small_and_zero_tensors(traced):
    def clip(t, axes=None):
        return al.clip_by_norm(t, 1.0, axes)
    run = al.function(clip) if traced else clip
    np.testing.assert_allclose(run(al.constant([3.0, 4.0])).numpy(), [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(run(al.constant([0.3, 0.4])).numpy(), [0.3, 0.4], rtol=1e-6)
    np.testing.assert_array_equal(run(al.constant([0.0, 0.0])).numpy(), [0.0, 0.0])
    rows = run(al.constant([[3.0, 4.0], [0.0, 0.5]]), [1]).numpy()
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.0, 0.5]], rtol=1e-6)


def test_clip_by_norm_has_a_gradient_also_at_zero():
    x = al.constant([0.0, 0.0])
    with al.GradientTape() as tape:
        tape.watch(x)
        y = al.reduce_sum(al.clip_by_norm(x, 1.0))
    assert np.all(np.isfinite(tape.gradient(y, x).numpy()))


def test_clip_by_norm_refuses_integers():
    with pytest.raises(TypeError, match="clip_by_norm takes float tensors, got a int32 tensor"):
        al.clip_by_norm(al.constant([3, 4]), 1)


def test_init_scope_runs_its_block_outside_the_trace():
    seen = []

    @al.function
    def f(x):
        with al.init_scope():
            seen.append(al.executing_eagerly())
            made = al.constant(2.0) * 3.0  # an eager value: computed once, captured as a constant
        seen.append(al.executing_eagerly())
        return x * made

    assert f(al.constant(1.0)).numpy() == 6.0
    assert seen == [True, False]


def test_init_scope_in_a_tf1_graph_adds_to_that_graph():
    import autoloop.compat.v1 as v1
    graph = v1.Graph()
    with graph.as_default():
        @al.function
        def f(x):
            with al.init_scope():
                outer = al.constant(5.0, name="made_outside")
            return x + outer
        x = v1.placeholder(al.float32, [])
        y = f(x)
        with v1.Session() as session:
            assert session.run(y, {x: 1.0}) == 6.0
    assert any(op.name == "made_outside" for op in graph.get_operations())
