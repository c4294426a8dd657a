"""Tensors made from a shape or a range, and facts about a tensor's shape.

``zeros``, ``ones`` and ``fill`` take a shape as a Python list, an int, a
fully defined `TensorShape` or a 1-D integer tensor (then the result's shape
is known only when that tensor's value is). ``range`` follows
``tf.range``: ``range(limit)`` or ``range(start, limit, delta)``, its dtype
the widest of its arguments' (int32 < int64 < float32 < float64).

    >>> range(1, 7, 2).numpy()
    array([1, 3, 5], dtype=int32)
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from autoloop import dtypes
from autoloop.errors import InvalidArgumentError
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import cast
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.ops.shape_ops import shape_operand
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


def _check_rank(op_name: str, spec: Spec, rank: int, what: str) -> None:
    if spec.shape.rank is not None and spec.shape.rank != rank:
        raise ValueError(f"{op_name}: {what} must have rank {rank}, but has shape {spec.shape}")


# -- Fill ------------------------------------------------------------------------
def _fill_infer(dims, value):
    infer.check_dtype("Fill", dims, infer.INTEGERS, 0)
    infer.check_dtype("Fill", value, infer.ALL, 1)
    _check_rank("Fill", dims, 1, "the shape (dims)")
    _check_rank("Fill", value, 0, "the fill value")
    if dims.value is not None:
        sizes = [int(d) for d in np.atleast_1d(dims.value)]
        if any(d < 0 for d in sizes):
            raise ValueError(f"Fill: dimensions must be >= 0, got shape {sizes}")
        return Spec(value.dtype, TensorShape(sizes))
    length = dims.shape[0] if dims.shape.rank is not None else None
    return Spec(value.dtype, TensorShape(None if length is None else [None] * length))


def _fill_kernel(dims, value):
    return np.full(tuple(int(d) for d in dims), value, dtype=np.asarray(value).dtype)


def _fill_gradient(op, grad):
    """Every element is the fill value: its gradient is the sum."""
    return [None, apply("Sum", [grad], {"axis": None, "keepdims": False}) if op.input_specs[1].dtype.is_floating else None]


register(OpDef("Fill", kernel=_fill_kernel, infer=_fill_infer, gradient=_fill_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:fill"}))


def fill(dims, value, name=None) -> Tensor:
    """A tensor of shape `dims` whose every element is the scalar `value`.

        >>> fill([2, 3], 9).numpy()
        array([[9, 9, 9], [9, 9, 9]], dtype=int32)
    """
    return apply("Fill", [_dims_tensor(dims, "fill"), convert(value)], name=name)


def _dims_tensor(shape, op_name: str) -> Tensor:
    dims = shape_operand(shape, op_name)
    return convert(np.array(dims, dtype=np.int32)) if isinstance(dims, tuple) else dims


def zeros(shape, dtype=dtypes.float32, name=None) -> Tensor:
    """A tensor of `shape` filled with zeros of `dtype` (float32 by default)."""
    dtype = dtypes.as_dtype(dtype)
    return apply("Fill", [_dims_tensor(shape, "zeros"), _scalar(0, dtype)], name=name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None) -> Tensor:
    """A tensor of `shape` filled with ones of `dtype` (float32 by default)."""
    dtype = dtypes.as_dtype(dtype)
    return apply("Fill", [_dims_tensor(shape, "ones"), _scalar(1, dtype)], name=name or "ones")


def _scalar(number, dtype) -> Tensor:
    return convert(np.array(number).astype(dtype.as_numpy_dtype)[()])


# -- ZerosLike / OnesLike ------------------------------------------------------------
def _like_infer(op_name):
    def rule(x):
        infer.check_dtype(op_name, x, infer.ALL)
        return Spec(x.dtype, x.shape)
    return rule


# The results do not depend on the input's values.
register(OpDef("ZerosLike", kernel=np.zeros_like, infer=_like_infer("ZerosLike"), gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "jax.numpy:zeros_like"}))
register(OpDef("OnesLike", kernel=np.ones_like, infer=_like_infer("OnesLike"), gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "jax.numpy:ones_like"}))


def zeros_like(input, dtype=None, name=None) -> Tensor:
    """Zeros with the shape of `input`, of `dtype` (default: `input`'s dtype)."""
    input = convert(input)
    dtype = dtypes.as_dtype(dtype) if dtype is not None else input.dtype
    if dtype is not input.dtype:
        return zeros(_shape_of(input), dtype, name=name)
    return apply("ZerosLike", [input], name=name or "zeros_like")


def ones_like(input, dtype=None, name=None) -> Tensor:
    """Ones with the shape of `input`, of `dtype` (default: `input`'s dtype)."""
    input = convert(input)
    dtype = dtypes.as_dtype(dtype) if dtype is not None else input.dtype
    if dtype is not input.dtype:
        return ones(_shape_of(input), dtype, name=name)
    return apply("OnesLike", [input], name=name or "ones_like")


def _shape_of(tensor: Tensor):
    if tensor.shape.is_fully_defined():
        return tensor.shape.as_list()
    from autoloop.ops.array_ops import shape
    return shape(tensor)


# -- Range -----------------------------------------------------------------------
_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _range_length(start, limit, delta) -> int:
    """The number of elements of ``range(start, limit, delta)``, checked as tf.range does."""
    if delta == 0:
        raise InvalidArgumentError("range: delta must not be 0")
    if delta > 0 and start > limit:
        raise InvalidArgumentError(f"range: start ({start}) must be <= limit ({limit}) when delta "
                                   f"({delta}) is positive; use a negative delta to count down")
    if delta < 0 and start < limit:
        raise InvalidArgumentError(f"range: start ({start}) must be >= limit ({limit}) when delta "
                                   f"({delta}) is negative; use a positive delta to count up")
    if np.asarray(start).dtype.kind == "i":
        start, limit, delta = int(start), int(limit), int(delta)
        return (builtins.abs(limit - start) + builtins.abs(delta) - 1) // builtins.abs(delta)
    return math.ceil((float(limit) - float(start)) / float(delta))


def _range_infer(start, limit, delta):
    infer.check_same_dtype("Range", start, limit, delta)
    infer.check_dtype("Range", start, _RANGE_DTYPES)
    for position, spec in enumerate((start, limit, delta)):
        _check_rank("Range", spec, 0, f"input #{position} ({('start', 'limit', 'delta')[position]})")
    if start.value is None or limit.value is None or delta.value is None:
        return Spec(start.dtype, TensorShape([None]))
    return Spec(start.dtype, TensorShape([_range_length(start.value, limit.value, delta.value)]))


def _range_kernel(start, limit, delta):
    length = _range_length(start, limit, delta)
    dtype = np.asarray(start).dtype
    return (np.arange(length, dtype=dtype) * delta + start).astype(dtype, copy=False)


register(OpDef("Range", kernel=_range_kernel, infer=_range_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:range_"}))


def _argument_dtype(value) -> dtypes.DType:
    dtype = value.dtype if isinstance(value, Tensor) else dtypes.infer_dtype(value)
    if dtype not in _RANGE_DTYPES:
        raise TypeError(f"range: arguments must be numbers, got {dtype.name} value {value!r}")
    return dtype


def _as_range_argument(value, dtype) -> Tensor:
    if not isinstance(value, Tensor):
        return convert(value, dtype)
    return value if value.dtype is dtype else cast(value, dtype)


def range(start, limit=None, delta=1, dtype=None, name=None) -> Tensor:  # noqa: A001 - the TF name
    """The numbers ``start, start + delta, ...`` before `limit`, as a 1-D tensor.

    ``range(5)`` is ``[0 1 2 3 4]`` (int32). Arguments may be scalar tensors;
    then the length is known only when their values are. ``start > limit``
    with a positive `delta` is an error, as in ``tf.range``.
    """
    if limit is None:
        start, limit = 0, start
    arguments = (start, limit, delta)
    if dtype is None:
        dtype = max((_argument_dtype(a) for a in arguments), key=_RANGE_DTYPES.index)
    else:
        dtype = dtypes.as_dtype(dtype)
    tensors = [_as_range_argument(a, dtype) for a in arguments]
    return apply("Range", tensors, name=name or "range")


# -- Size / Rank -----------------------------------------------------------------
def _size_infer(x, out_type):
    count = x.shape.num_elements()
    value = None if count is None else np.array(count, dtype=out_type.as_numpy_dtype)[()]
    return Spec(out_type, TensorShape([]), value)


def _size_kernel(x, out_type):
    return np.array(np.size(x), dtype=out_type.as_numpy_dtype)[()]


register(OpDef("Size", kernel=_size_kernel, infer=_size_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:size"}))


def size(input, out_type=dtypes.int32, name=None) -> Tensor:
    """The number of elements of `input`, as a scalar integer tensor."""
    out_type = dtypes.as_dtype(out_type)
    if out_type not in infer.INTEGERS:
        raise TypeError(f"size: out_type must be int32 or int64, got {out_type.name}")
    return apply("Size", [convert(input)], {"out_type": out_type}, name=name)


def _rank_infer(x):
    rank = x.shape.rank
    return Spec(dtypes.int32, TensorShape([]), None if rank is None else np.int32(rank))


register(OpDef("Rank", kernel=lambda x: np.int32(np.ndim(x)), infer=_rank_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:rank"}))


def rank(input, name=None) -> Tensor:
    """The number of dimensions of `input`, as a scalar int32 tensor."""
    return apply("Rank", [convert(input)], name=name)


# -- StopGradient ----------------------------------------------------------------
register(OpDef("StopGradient", kernel=lambda x: x, infer=_like_infer("StopGradient"), expr="{0}",
               gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.math:identity"}))


def stop_gradient(input, name=None) -> Tensor:
    """`input` unchanged; gradients do not flow back through it."""
    return apply("StopGradient", [convert(input)], name=name)
