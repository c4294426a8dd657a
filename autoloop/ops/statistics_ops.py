"""Reductions built from other ops: `reduce_logsumexp`, `reduce_variance`, `reduce_std`.

They are compositions, not registrations: each is a few existing ops, so
they run eagerly and in graphs like those ops (and, once gradients exist,
differentiate through them). They take floating-point tensors only, as in
TensorFlow (cast integers first).

    >>> reduce_variance(constant([1., 2., 3., 4.])).numpy()
    np.float32(1.25)
"""

from __future__ import annotations

from autoloop.ops.creation_ops import stop_gradient, zeros_like
from autoloop.ops.dispatch import convert
from autoloop.ops.math_ops import exp, log, sqrt, square
from autoloop.ops.reduction_ops import reduce_max, reduce_mean, reduce_sum
from autoloop.ops.selection_ops import where
from autoloop.ops.shape_ops import reshape
from autoloop.ops.array_ops import shape
from autoloop.ops.unary_math_ops import is_finite
from autoloop.tensor import Tensor


def _floating(x, public_name: str):
    x = convert(x)
    if not x.dtype.is_floating:
        raise TypeError(f"{public_name} takes float16, float32 or float64 tensors, got a {x.dtype.name} "
                        f"tensor; use autoloop.cast(x, autoloop.float32)")
    return x


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """``log(reduce_sum(exp(input_tensor), axis))``, computed without overflow.

    The largest element is subtracted before ``exp`` and added back after
    ``log``; an all ``-inf`` slice gives ``-inf``.
    """
    x = _floating(input_tensor, "reduce_logsumexp")
    largest = reduce_max(x, axis, keepdims=True)
    shift = stop_gradient(where(is_finite(largest), largest, zeros_like(largest)))
    total = log(reduce_sum(exp(x - shift), axis, keepdims=keepdims))
    if not keepdims:
        shift = reshape(shift, total.shape.as_list() if total.shape.is_fully_defined() else shape(total))
    return total + shift


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The mean squared deviation from the mean over `axis` (the population variance)."""
    x = _floating(input_tensor, "reduce_variance")
    deviations = x - reduce_mean(x, axis, keepdims=True)
    return reduce_mean(square(deviations), axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The square root of `reduce_variance` (the population standard deviation)."""
    x = _floating(input_tensor, "reduce_std")
    return sqrt(reduce_variance(x, axis, keepdims=keepdims))
