"""Gradients through `scan`: over xs, with a cond, a do-while, a batched cond, TensorArray results."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al

from .checks import check_gradient

RNG = np.random.default_rng(5)


def over_xs(xs, w):
    ys, state, lengths = al.scan(body=lambda x, s: (al.sin(s) * x, s * w + x), initial=xs[0] * 0.0, xs=xs,
                                 ys=al.TensorSpec([3], al.float64))
    return ys, state


def with_cond(start, w, cond_before_body):
    def body(x, state):
        value, total = state
        value = value * w + 0.3
        return value * value, (value, total + al.sin(value))
    ys, (value, total), lengths = al.scan(body=body, cond=lambda x, s: s[0] < 4.0, initial=(start, start * 0.0),
                                         ys=al.TensorSpec([], al.float64), cond_before_body=cond_before_body,
                                         max_seq_len=8)
    return ys, value, total


def batched(values, w):
    """Each entry runs until its value drops below 1 (at most 6 frames): a batched cond, masked."""
    def body(x, value):
        value = value * w
        return al.sin(value), value
    ys, final, lengths = al.scan(body=body, cond=lambda x, v: v >= 1.0, initial=values, cond_dims=[4],
                                 ys=al.TensorSpec([4], al.float64), max_seq_len=6)
    return ys, final


def tensor_arrays(xs):
    ys, state, _ = al.scan(body=lambda x, s: (x * s, s + al.reduce_sum(x)), initial=xs[0, 0] * 0.0 + 1.0, xs=xs,
                           ys=al.TensorSpec([2], al.float64), return_tensor_arrays=True)
    return ys.stack() * 2.0, state


def test_scan_over_xs():
    check_gradient(over_xs, [RNG.standard_normal((5, 3)), np.array(0.7)])


@pytest.mark.parametrize("cond_before_body", [True, False])
@pytest.mark.parametrize("start", [0.4, 1.7, 5.0])
def test_scan_with_a_cond_and_a_do_while(start, cond_before_body):
    check_gradient(lambda s, w: with_cond(s, w, cond_before_body), [np.array(start), np.array(1.3)])


def test_a_batched_scan():
    check_gradient(batched, [np.array([8.0, 0.5, 3.0, 1.5]), np.array(0.6)])


def test_scan_returning_tensor_arrays():
    check_gradient(tensor_arrays, [RNG.standard_normal((4, 2))])


def test_the_differentiated_scan_gives_the_scans_results():
    values, w = np.array([8.0, 0.5, 3.0, 1.5]), np.array(0.6)
    plain = al.function(batched, autograph=False)(values, w)

    @al.function(autograph=False)
    def both(values, w):
        ys, final = batched(values, w)
        return ys, final, al.gradients(al.reduce_sum(ys) + al.reduce_sum(final), [values, w])

    ys, final, _ = both(values, w)
    np.testing.assert_array_equal(ys.numpy(), plain[0].numpy())
    np.testing.assert_array_equal(final.numpy(), plain[1].numpy())
