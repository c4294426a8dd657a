"""Run-time checks: `ensure_shape` and the ``autoloop.debugging`` assertions.

`ensure_shape(x, shape)` is `x` with a more specific static shape; an
incompatible static shape is a `ValueError` while tracing, an incompatible
run-time shape an `InvalidArgumentError` when the graph runs.

`assert_equal`, `assert_less` and `assert_greater` check a comparison
element-wise (with broadcasting) through `Assert`: eagerly at once, in a
graph each time it runs, and while tracing already when both operands are
known constants (as TensorFlow's static check does). A failure raises
`InvalidArgumentError` with the message and both values.

    >>> assert_less(constant([1, 2]), 3)       # passes: returns None
"""

from __future__ import annotations

import numpy as np

from autoloop.errors import InvalidArgumentError
from autoloop.ir import context
from autoloop.ops.dispatch import apply, constant_value, convert
from autoloop.ops.logging_ops import Assert
from autoloop.ops.math_ops import binary_inputs, equal, greater, less
from autoloop.ops.reduction_ops import reduce_all
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.shapes import TensorShape, as_shape
from autoloop.tensor import Tensor


# -- EnsureShape --------------------------------------------------------------------------
def _ensure_shape_infer(x, shape):
    if not x.shape.is_compatible_with(shape):
        raise ValueError(f"ensure_shape: the tensor's shape {x.shape} is not compatible with the "
                         f"expected shape {shape}")
    return Spec(x.dtype, x.shape.merge_with(shape))


def _ensure_shape_kernel(x, shape):
    if not TensorShape(np.shape(x)).is_compatible_with(shape):
        raise InvalidArgumentError(f"ensure_shape: the tensor's shape {TensorShape(np.shape(x))} is not "
                                   f"compatible with the expected shape {shape}")
    return x


register(OpDef("EnsureShape", kernel=_ensure_shape_kernel, infer=_ensure_shape_infer,
               gradient=lambda op, grad: [grad],
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:ensure_shape"}))


def ensure_shape(x, shape, name=None) -> Tensor:
    """`x`, checked to have a shape compatible with `shape` (None for an unknown dimension).

        >>> ensure_shape(constant([1, 2]), [None]).shape
        TensorShape([2])
    """
    return apply("EnsureShape", [convert(x)], {"shape": as_shape(shape)}, name=name)


# -- debugging assertions -------------------------------------------------------------------
def _assert_comparison(compare, symbol: str, x, y, message, summarize, name):
    x, y = binary_inputs(x, y)
    holds = reduce_all(compare(x, y))
    data = ([message] if message else []) + [
        f"Condition x {symbol} y did not hold element-wise:", f"x (shape {x.shape}) =", x,
        f"y (shape {y.shape}) =", y]
    known = constant_value(holds)
    if holds.is_symbolic and known is not None:
        if not known:  # decided while tracing: fail now, as TensorFlow's static check does
            with context.eager():
                Assert(False, [item if isinstance(item, str) else convert(constant_value(item))
                               for item in data], summarize=summarize)
        return None
    Assert(holds, data, summarize=summarize, name=name)  # eagerly: checked at once
    return None


def assert_equal(x, y, message=None, summarize=None, name=None):
    """Raise `InvalidArgumentError` unless ``x == y`` everywhere; see the module docstring."""
    return _assert_comparison(equal, "==", x, y, message, summarize, name)


def assert_less(x, y, message=None, summarize=None, name=None):
    """Raise `InvalidArgumentError` unless ``x < y`` everywhere; see the module docstring."""
    return _assert_comparison(less, "<", x, y, message, summarize, name)


def assert_greater(x, y, message=None, summarize=None, name=None):
    """Raise `InvalidArgumentError` unless ``x > y`` everywhere; see the module docstring."""
    return _assert_comparison(greater, ">", x, y, message, summarize, name)
