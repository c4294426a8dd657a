"""Activation functions: `relu`, `softmax`, `log_softmax`, `softplus`, and `dropout` (``autoloop.nn``).

`softmax` and `log_softmax` normalize along `axis` (default -1, the last)
and subtract the largest element first, so large logits do not overflow.

    >>> softmax(constant([1., 1.])).numpy()
    array([0.5, 0.5], dtype=float32)
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from autoloop.ops import infer
from autoloop.ops.array_ops import shape
from autoloop.ops.math_ops import cast, greater_equal, multiply
from autoloop.ops.random_ops import uniform
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.ops.static_args import static_axis
from autoloop.tensor import Tensor

# -- Relu ----------------------------------------------------------------------------
def _relu_gradient(op, grad):
    if not op.input_specs[0].dtype.is_floating:
        return [None]
    positive = apply("Greater", [op.outputs[0], apply("ZerosLike", [op.outputs[0]])])
    return [apply("SelectV2", [positive, grad, apply("ZerosLike", [grad])])]


register(OpDef("Relu", kernel=lambda x: np.maximum(x, np.zeros((), np.asarray(x).dtype)),
               infer=infer.elementwise(infer.NUMERIC)("Relu"), gradient=_relu_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.math:relu"}))


def relu(features, name=None):
    """``maximum(features, 0)``, element-wise, in `features`' dtype."""
    return apply("Relu", [convert(features)], name=name)


# -- Softmax / LogSoftmax ------------------------------------------------------------------
def _normalize_infer(op_name):
    def rule(logits, axis):
        infer.check_dtype(op_name, logits, infer.FLOATS)
        infer.check_axis_along(op_name, logits, axis)
        return Spec(logits.dtype, logits.shape)
    return rule


def _shifted(logits, axis):
    logits = np.asarray(logits)
    return logits - np.max(logits, axis=axis, keepdims=True)


def _softmax_kernel(logits, axis):
    exponentials = np.exp(_shifted(logits, axis))
    return exponentials / np.sum(exponentials, axis=axis, keepdims=True)


def _log_softmax_kernel(logits, axis):
    shifted = _shifted(logits, axis)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _along(op, x):
    return apply("Sum", [x], {"axis": (op.attrs["axis"],), "keepdims": True})


def _softmax_gradient(op, grad):
    """``s * (grad - sum(grad * s))`` along the axis."""
    softmax = op.outputs[0]
    return [softmax * (grad - _along(op, grad * softmax))]


def _log_softmax_gradient(op, grad):
    """``grad - softmax * sum(grad)`` along the axis."""
    return [grad - apply("Exp", [op.outputs[0]]) * _along(op, grad)]


register(OpDef("Softmax", kernel=_softmax_kernel, infer=_normalize_infer("Softmax"), gradient=_softmax_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.math:softmax"}))
register(OpDef("LogSoftmax", kernel=_log_softmax_kernel, infer=_normalize_infer("LogSoftmax"),
               gradient=_log_softmax_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.math:log_softmax"}))


def _normalize_fn(op_name, public_name, what) -> Callable[..., Tensor]:
    def fn(logits, axis=None, name=None):
        logits = convert(logits)
        axis = static_axis(-1 if axis is None else axis, logits, op_name)
        return apply(op_name, [logits], {"axis": axis}, name=name)
    fn.__name__ = public_name
    fn.__doc__ = f"{what} of `logits` along `axis` (default -1); floats only."
    return fn


softmax = _normalize_fn("Softmax", "softmax", "``exp(logits) / reduce_sum(exp(logits), axis)``")
log_softmax = _normalize_fn("LogSoftmax", "log_softmax", "``logits - log(reduce_sum(exp(logits), axis))``")


# -- dropout: a composition of uniform numbers, a comparison and a product ------------------------
def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """`x` with each element set to 0 with probability `rate`, the rest scaled by ``1 / (1 - rate)``.

    The mask is ``uniform(noise_shape) >= rate``, drawn by `autoloop.random.uniform`
    with `seed` (its seeding rule; `noise_shape`, default `x`'s shape, broadcasts
    against `x`, so ``[batch, 1]`` drops whole rows). A `rate` of 0 returns `x`
    itself. The gradient is the mask times the scale.

        >>> dropout(ones([4]), rate=0.5, seed=1)     # two or so elements 0., the others 2.
    """
    x = convert(x)
    if not x.dtype.is_floating:
        raise TypeError(f"dropout: x must be a float tensor, got {x.dtype.name}")
    if isinstance(rate, int | float) and not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
    if isinstance(rate, int | float) and rate == 0:
        return x
    rate = convert(rate, x.dtype) if not hasattr(rate, "dtype") else cast(rate, x.dtype)
    random = uniform(shape(x) if noise_shape is None else noise_shape, dtype=x.dtype, seed=seed)
    keep = cast(greater_equal(random, rate), x.dtype)
    return multiply(x * (1 / (1 - rate)), keep, name=name)


# -- Softplus (composed) -------------------------------------------------------------------
def softplus(features, name=None):
    """``log(exp(features) + 1)``, floats only; composed of autoloop ops, so its gradient is theirs
    (``sigmoid(features)``).

    As TensorFlow's kernel: ``features`` itself above ``-log(eps) - 2`` and
    ``exp(features)`` below ``log(eps) + 2`` (where ``log1p(exp(x))`` would
    overflow or round away), ``log1p(exp(x))`` between; each branch sees the
    value clipped to its range, so an unused branch never makes an inf (or a NaN
    gradient).
    """
    from autoloop.ops.clip_ops import clip_by_value  # these modules build on this one
    from autoloop.ops.math_ops import exp, greater, less, minimum
    from autoloop.ops.selection_ops import where
    from autoloop.ops.unary_math_ops import log1p
    x = convert(features)
    if not x.dtype.is_floating:
        raise TypeError(f"softplus takes float16, float32 or float64 tensors, got a {x.dtype.name} tensor")
    threshold = float(np.log(np.finfo(x.dtype.as_numpy_dtype).eps)) + 2.0
    middle = log1p(exp(clip_by_value(x, threshold, -threshold)))
    small = exp(minimum(x, threshold))
    return where(greater(x, -threshold), x, where(less(x, threshold), small, middle))
