"""``compat.v1.nn``: `autoloop.nn`, with TF1's `dropout` (``keep_prob``)."""

from autoloop.nn import *  # noqa: F401,F403
from autoloop.ops import nn_ops


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1's ``dropout``: give `keep_prob` (the chance an element is kept) or `rate` (``1 - keep_prob``)."""
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout: give exactly one of keep_prob and rate")
    return nn_ops.dropout(x, rate if rate is not None else 1 - keep_prob, noise_shape, seed, name)
