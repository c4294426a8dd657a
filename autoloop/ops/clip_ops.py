"""`clip_by_value`: every element limited to ``[clip_value_min, clip_value_max]``; `clip_by_norm`.

As in TensorFlow the result is ``maximum(minimum(t, clip_value_max),
clip_value_min)``: the bounds broadcast to `t`'s shape (never the other way
round), share its dtype (Python numbers take it), and where
``clip_value_min > clip_value_max`` the result is ``clip_value_min``.

    >>> clip_by_value(constant([-2, 0, 5]), -1, 3).numpy()
    array([-1,  0,  3], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import binary_inputs
from autoloop.ops.gradient_support import reduce_to_input
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.tensor import Tensor


def _clip_infer(t, clip_value_min, clip_value_max):
    infer.check_same_dtype("ClipByValue", t, clip_value_min, clip_value_max)
    infer.check_dtype("ClipByValue", t, infer.NUMERIC)
    for what, bound in (("clip_value_min", clip_value_min), ("clip_value_max", clip_value_max)):
        broadcast = infer.broadcast_shapes("ClipByValue", t.shape, bound.shape)
        if t.shape.rank is not None and broadcast.rank is not None and (
                broadcast.rank != t.shape.rank or not t.shape.is_compatible_with(broadcast)):
            raise ValueError(f"ClipByValue: {what} of shape {bound.shape} does not broadcast to the "
                             f"shape {t.shape} of the clipped tensor")
    return Spec(t.dtype, t.shape)


def _clip_kernel(t, clip_value_min, clip_value_max):
    return np.maximum(np.minimum(t, clip_value_max), clip_value_min)


def _clip_gradient(op, grad):
    """The kernel is ``maximum(minimum(t, hi), lo)``: the gradient goes where that picks from (ties
    pick the first operand, as Minimum's and Maximum's gradients do)."""
    if not op.input_specs[0].dtype.is_floating:
        return [None, None, None]
    t, low, high = op.inputs[0], op.inputs[1], op.inputs[2]
    below_high = apply("LessEqual", [t, high])
    limited = apply("Minimum", [t, high])
    above_low = apply("GreaterEqual", [limited, low])
    zeros = apply("ZerosLike", [grad])
    kept = apply("SelectV2", [above_low, grad, zeros])
    return [apply("SelectV2", [below_high, kept, zeros]),
            reduce_to_input(op, 1, apply("SelectV2", [above_low, zeros, grad])),
            reduce_to_input(op, 2, apply("SelectV2", [below_high, zeros, kept]))]


register(OpDef("ClipByValue", kernel=_clip_kernel, infer=_clip_infer, gradient=_clip_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.math:clip"}))


def clip_by_value(t, clip_value_min, clip_value_max, name=None) -> Tensor:
    """`t` with each element limited to ``[clip_value_min, clip_value_max]``; see the module docstring."""
    t = convert(t)
    bounds = [binary_inputs(t, bound)[1] for bound in (clip_value_min, clip_value_max)]
    return apply("ClipByValue", [t, *bounds], name=name or "clip_by_value")


def clip_by_norm(t, clip_norm, axes=None, name=None) -> Tensor:
    """`t` scaled so that its L2 norm (over `axes`, all by default) is at most `clip_norm`, as TensorFlow's:
    ``t * clip_norm / maximum(norm, clip_norm)``, a zero norm giving `t` back (and a gradient, not NaN).
    Composed of autoloop ops, so its gradient is theirs.

        >>> clip_by_norm(constant([3.0, 4.0]), 1.0).numpy()
        array([0.6, 0.8], dtype=float32)
    """
    from autoloop.ops.math_ops import divide, greater, maximum, multiply, sqrt
    from autoloop.ops.creation_ops import ones_like
    from autoloop.ops.reduction_ops import reduce_sum
    from autoloop.ops.selection_ops import where
    t = convert(t)
    if not t.dtype.is_floating:
        raise TypeError(f"clip_by_norm takes float tensors, got a {t.dtype.name} tensor")
    clip_norm = binary_inputs(t, clip_norm)[1]
    squares = reduce_sum(t * t, axes, keepdims=True)
    nonzero = greater(squares, 0)
    norm = where(nonzero, sqrt(where(nonzero, squares, ones_like(squares))), squares)
    return divide(multiply(t, clip_norm), maximum(norm, clip_norm), name=name or "clip_by_norm")
