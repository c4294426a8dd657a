"""Element-wise functions of one tensor beyond `math_ops`: rounding, sign, log1p, rsqrt, is_finite.

Each keeps its input's dtype, except `is_finite`, which gives bool. The
dtypes each takes are TensorFlow's: `floor`, `ceil`, `log1p` and `rsqrt`
take floats; `round` also takes integers (where it changes nothing); `sign`
takes signed numbers.

    >>> round(constant([0.5, 1.5, -2.5])).numpy()   # half to even, as tf.round
    array([ 0.,  2., -2.], dtype=float32)
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from autoloop import dtypes
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, register
from autoloop.tensor import Tensor


def _reciprocal_sqrt(x):
    return np.reciprocal(np.sqrt(x))


_UNARY = {
    # op name: (public name, kernel, dtypes it takes, result dtype or None for the input's, what it computes)
    "Floor": ("floor", np.floor, infer.FLOATS, None, "the largest integer <= x"),
    "Ceil": ("ceil", np.ceil, infer.FLOATS, None, "the smallest integer >= x"),
    # numpy rounds half to even, as TensorFlow does
    "Round": ("round", np.round, infer.NUMERIC, None, "x rounded to the nearest integer, half to even"),
    "Sign": ("sign", np.sign, infer.SIGNED, None, "-1, 0 or 1 by the sign of x"),
    "Log1p": ("log1p", np.log1p, infer.FLOATS, None, "log(1 + x), accurate for small x"),
    "Rsqrt": ("rsqrt", _reciprocal_sqrt, infer.FLOATS, None, "1 / sqrt(x)"),
    "IsFinite": ("is_finite", np.isfinite, infer.FLOATS, dtypes.bool_, "whether x is neither inf nor nan"),
}

# Gradients: rounding and sign are piecewise constant (zero wherever the derivative exists).
_GRADIENTS = {
    "Floor": NOT_DIFFERENTIABLE, "Ceil": NOT_DIFFERENTIABLE, "Round": NOT_DIFFERENTIABLE, "Sign": NOT_DIFFERENTIABLE,
    "IsFinite": NOT_DIFFERENTIABLE,
    "Log1p": lambda op, grad: [grad / (op.inputs[0] + 1)],
    "Rsqrt": lambda op, grad: [grad * -0.5 * op.outputs[0] * op.outputs[0] * op.outputs[0]],
}

for _op_name, (_public, _kernel, _allowed, _result, _what) in _UNARY.items():
    _jax = "autoloop.backends.jax.kernels.math:rsqrt" if _op_name == "Rsqrt" else f"jax.numpy:{_kernel.__name__}"
    register(OpDef(_op_name, kernel=_kernel, infer=infer.elementwise(_allowed, _result)(_op_name),
                   gradient=_GRADIENTS[_op_name], kernels={"jax": _jax}))


def _unary_fn(op_name: str) -> Callable[..., Tensor]:
    public_name, _, allowed, _, what = _UNARY[op_name]

    def fn(x, name=None):
        return apply(op_name, [convert(x)], name=name)
    fn.__name__ = public_name
    fn.__doc__ = f"Element-wise {what}; `x` is {', '.join(d.name for d in allowed)}."
    return fn


floor = _unary_fn("Floor")
ceil = _unary_fn("Ceil")
round = _unary_fn("Round")  # noqa: A001 - the TensorFlow name
sign = _unary_fn("Sign")
log1p = _unary_fn("Log1p")
rsqrt = _unary_fn("Rsqrt")
is_finite = _unary_fn("IsFinite")
