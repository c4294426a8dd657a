"""Ops that select elements: gather, one_hot and where.

    >>> gather(constant([10, 20, 30]), [2, 0]).numpy()
    array([30, 10], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.errors import InvalidArgumentError
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import binary_inputs
from autoloop.ops.gradient_support import reduce_to_input, shape_int32
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.ops.static_args import static_int
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor

# -- GatherV2 --------------------------------------------------------------------------
def _gather_infer(params, indices, axis):
    infer.check_dtype("GatherV2", params, infer.ALL)
    infer.check_dtype("GatherV2", indices, infer.INTEGERS, 1)
    if params.shape.rank is None or indices.shape.rank is None:
        return Spec(params.dtype, TensorShape(None))
    if params.shape.rank == 0:
        raise ValueError("GatherV2: params must have rank >= 1, got a scalar")
    axis = infer.normalize_axis("GatherV2", axis, params.shape.rank)
    if indices.value is not None and params.shape[axis] is not None:
        _check_indices(np.asarray(indices.value), params.shape[axis])
    return Spec(params.dtype, params.shape[:axis].concatenate(indices.shape).concatenate(params.shape[axis + 1:]))


def _check_indices(indices, limit: int) -> None:
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        bad = indices[(indices < 0) | (indices >= limit)].flat[0]
        raise InvalidArgumentError(f"GatherV2: index {bad} is out of range [0, {limit}) for the "
                                   f"gathered axis")


def _gather_kernel(params, indices, axis):
    _check_indices(np.asarray(indices), np.shape(params)[axis])
    return np.take(params, indices, axis=axis)


def _gather_gradient(op, grad):
    """Rows of the gradient added back where they were taken from (repeated indices add up): a
    ScatterNd over the gathered axis, moved to the front and back again."""
    if not op.input_specs[0].dtype.is_floating:
        return [None, None]
    params, indices = op.input_specs[0], op.input_specs[1]
    axis, rank, index_rank = op.attrs["axis"], params.shape.rank, indices.shape.rank
    if rank is None or index_rank is None:
        raise NotImplementedError("the gradient of gather needs params and indices of known rank")
    # grad has shape params[:axis] + indices.shape + params[axis + 1:]: bring the indices' axes first.
    front = tuple(range(axis, axis + index_rank)) + tuple(range(axis)) + tuple(
        range(axis + index_rank, rank - 1 + index_rank))
    moved = apply("Transpose", [grad], {"perm": front}) if front != tuple(range(len(front))) else grad
    shape = shape_int32(params, lambda: op.input_shape(0))
    moved_shape = apply("ConcatV2", [shape[axis:axis + 1], shape[:axis], shape[axis + 1:]], {"axis": 0}) \
        if axis else shape
    coordinates = apply("ExpandDims", [op.inputs[1]], {"axis": index_rank})
    scattered = apply("ScatterNd", [coordinates, moved, apply("Cast", [moved_shape], {"dtype": indices.dtype})])
    back = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, rank))
    return [apply("Transpose", [scattered], {"perm": back}) if axis else scattered, None]


register(OpDef("GatherV2", kernel=_gather_kernel, infer=_gather_infer, gradient=_gather_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:gather"}))


def gather(params, indices, axis=None, batch_dims=0, name=None) -> Tensor:
    """Slices of `params` along `axis` (default 0) at `indices`.

    The result has shape ``params.shape[:axis] + indices.shape +
    params.shape[axis + 1:]``; an index out of range is an error.
    """
    if batch_dims != 0:
        raise NotImplementedError("gather: batch_dims other than 0 is not supported")
    params, indices = convert(params), convert(indices)
    axis = 0 if axis is None else static_int(axis, "GatherV2", "axis")
    if params.shape.rank:
        axis = infer.normalize_axis("GatherV2", axis, params.shape.rank)
    return apply("GatherV2", [params, indices], {"axis": axis}, name=name)


# -- OneHot ------------------------------------------------------------------------------
def _one_hot_infer(indices, on_value, off_value, depth, axis):
    infer.check_dtype("OneHot", indices, infer.INTEGERS, 0)
    infer.check_same_dtype("OneHot", on_value, off_value)
    infer.check_dtype("OneHot", on_value, infer.ALL, 1)
    for what, spec in (("on_value", on_value), ("off_value", off_value)):
        if spec.shape.rank not in (0, None):
            raise ValueError(f"OneHot: {what} must be a scalar, got shape {spec.shape}")
    if depth < 0:
        raise ValueError(f"OneHot: depth must be >= 0, got {depth}")
    if indices.shape.rank is None:
        return Spec(on_value.dtype, TensorShape(None))
    dims = list(indices.shape)
    position = len(dims) if axis == -1 else infer.normalize_axis("OneHot", axis, len(dims), allow_end=True)
    dims.insert(position, depth)
    return Spec(on_value.dtype, TensorShape(dims))


def _one_hot_kernel(indices, on_value, off_value, depth, axis):
    indices = np.asarray(indices)
    position = indices.ndim if axis == -1 else axis % (indices.ndim + 1)
    classes = np.arange(depth).reshape([depth if i == position else 1 for i in range(indices.ndim + 1)])
    hot = np.expand_dims(indices, position) == classes
    return np.where(hot, on_value, off_value).astype(np.asarray(on_value).dtype, copy=False)


def _one_hot_gradient(op, grad):
    """on_value is wherever an index points, off_value everywhere else."""
    if not op.input_specs[1].dtype.is_floating:
        return [None, None, None]
    dtype = op.input_specs[1].dtype.as_numpy_dtype
    hot = apply("OneHot", [op.inputs[0], convert(dtype(1)), convert(dtype(0))], op.attrs)
    total = {"axis": None, "keepdims": False}
    on = apply("Sum", [grad * hot], total)
    return [None, on, apply("Sum", [grad], total) - on]


register(OpDef("OneHot", kernel=_one_hot_kernel, infer=_one_hot_infer, gradient=_one_hot_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:one_hot"}))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None) -> Tensor:
    """A tensor with `on_value` where an index points and `off_value` elsewhere.

    The new axis of size `depth` goes at `axis` (default -1, the end). An
    index outside ``[0, depth)`` gives a row of `off_value`. The dtype comes
    from `on_value`/`off_value`, else `dtype`, else float32.

        >>> one_hot([0, 2], 3).numpy()
        array([[1., 0., 0.], [0., 0., 1.]], dtype=float32)
    """
    indices = convert(indices)
    depth = static_int(depth, "OneHot", "depth")
    axis = -1 if axis is None else static_int(axis, "OneHot", "axis")
    given = on_value if on_value is not None else off_value
    if dtype is None and given is not None:
        dtype = given.dtype if isinstance(given, Tensor) else dtypes.infer_dtype(given)
    dtype = dtypes.as_dtype(dtype if dtype is not None else dtypes.float32)
    numpy_type = dtype.as_numpy_dtype
    on_value = _scalar_operand(numpy_type(1) if on_value is None else on_value, dtype, "on_value")
    off_value = _scalar_operand(numpy_type(0) if off_value is None else off_value, dtype, "off_value")
    return apply("OneHot", [indices, on_value, off_value], {"depth": depth, "axis": axis}, name=name or "one_hot")


def _scalar_operand(value, dtype, what: str) -> Tensor:
    if isinstance(value, Tensor):
        if value.dtype is not dtype:
            raise TypeError(f"one_hot: {what} is a {value.dtype.name} tensor, but the result dtype is "
                            f"{dtype.name}; give on_value and off_value one dtype")
        return value
    return convert(value, dtype)


# -- SelectV2 / Where -----------------------------------------------------------------
def _select_infer(condition, x, y):
    infer.check_dtype("SelectV2", condition, (dtypes.bool_,), 0)
    infer.check_same_dtype("SelectV2", x, y)
    infer.check_dtype("SelectV2", x, infer.ALL, 1)
    shape = infer.broadcast_shapes("SelectV2", condition.shape, x.shape)
    return Spec(x.dtype, infer.broadcast_shapes("SelectV2", shape, y.shape))


def _select_gradient(op, grad):
    if not op.input_specs[1].dtype.is_floating:
        return [None, None, None]
    condition, zeros = op.inputs[0], apply("ZerosLike", [grad])
    return [None, reduce_to_input(op, 1, apply("SelectV2", [condition, grad, zeros])),
            reduce_to_input(op, 2, apply("SelectV2", [condition, zeros, grad]))]


register(OpDef("SelectV2", kernel=np.where, infer=_select_infer, scalar_expr="({1} if {0} else {2})",
               gradient=_select_gradient,
               kernels={"jax": "jax.numpy:where"}))


def _where_infer(condition):
    infer.check_dtype("Where", condition, infer.ALL)
    rank = condition.shape.rank
    count = None if condition.value is None else int(np.count_nonzero(condition.value))
    return Spec(dtypes.int64, TensorShape([count, rank]))


register(OpDef("Where", kernel=lambda condition: np.argwhere(condition).astype(np.int64, copy=False),
               infer=_where_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:where"}))


def where(condition, x=None, y=None, name=None) -> Tensor:
    """Element-wise ``x if condition else y`` (with broadcasting), or with only
    `condition`, the int64 coordinates ``[N, rank]`` of its true (non-zero) elements.

        >>> where(constant([True, False]), 1, 2).numpy()
        array([1, 2], dtype=int32)
    """
    condition = convert(condition)
    if x is None and y is None:
        return apply("Where", [condition], name=name)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    x, y = binary_inputs(x, y)
    return apply("SelectV2", [condition, x, y], name=name)
