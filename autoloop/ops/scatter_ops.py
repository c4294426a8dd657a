"""Indexing by coordinates: `gather_nd`, `scatter_nd`, `tensor_scatter_nd_update`, `boolean_mask`.

An `indices` tensor of shape ``[..., K]`` holds coordinates into the first K
axes of a tensor: ``indices[i, j]`` names the slice ``params[i0, ..., iK-1]``.
An index out of range is an error (``InvalidArgumentError``), never a wrong
answer.

    >>> gather_nd(constant([[1, 2], [3, 4]]), [[1, 0], [0, 1]]).numpy()
    array([3, 2], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.errors import InvalidArgumentError
from autoloop.ops import infer
from autoloop.ops.array_ops import concat, shape
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import binary_inputs
from autoloop.ops.reduction_ops import reduce_prod
from autoloop.ops.gradient_support import shape_int32, zeros_for_input
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.ops.selection_ops import gather, where
from autoloop.ops.shape_ops import reshape, shape_operand
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


def _depth(op_name: str, indices: Spec, rank):
    """K, the length of each coordinate (None when unknown); checks it fits `rank`."""
    infer.check_dtype(op_name, indices, infer.INTEGERS)
    if indices.shape.rank is None:
        return None
    if indices.shape.rank == 0:
        raise ValueError(f"{op_name}: indices must have rank >= 1 (coordinates along the last axis), "
                         f"got a scalar")
    depth = indices.shape[-1]
    if depth is not None and rank is not None and depth > rank:
        raise ValueError(f"{op_name}: coordinates of length {depth} do not fit a tensor of rank {rank}")
    return depth


def _coordinates(op_name: str, indices, dims) -> tuple:
    """`indices` as a numpy index tuple into an array of shape `dims`, range-checked."""
    indices = np.asarray(indices)
    depth = indices.shape[-1]
    for axis in range(depth):
        column = indices[..., axis]
        if column.size and (column.min() < 0 or column.max() >= dims[axis]):
            bad = column[(column < 0) | (column >= dims[axis])].flat[0]
            raise InvalidArgumentError(f"{op_name}: index {bad} is out of range [0, {dims[axis]}) for "
                                       f"axis {axis} of a tensor of shape {tuple(dims)}")
    return tuple(np.moveaxis(indices, -1, 0))


def _slices_shape(indices: Spec, target: TensorShape, depth):
    """The shape ``indices.shape[:-1] + target[depth:]`` of the slices `indices` name."""
    if indices.shape.rank is None or target.rank is None or depth is None:
        return TensorShape(None)
    return indices.shape[:-1].concatenate(target[depth:])


# -- GatherNd ---------------------------------------------------------------------------------
def _gather_nd_infer(params, indices):
    infer.check_dtype("GatherNd", params, infer.ALL)
    depth = _depth("GatherNd", indices, params.shape.rank)
    return Spec(params.dtype, _slices_shape(indices, params.shape, depth))


def _gather_nd_kernel(params, indices):
    params = np.asarray(params)
    return params[_coordinates("GatherNd", indices, params.shape)]


def _gather_nd_gradient(op, grad):
    """The slices' gradients added back at their coordinates (repeated coordinates add up)."""
    if not op.input_specs[0].dtype.is_floating:
        return [None, None]
    shape = apply("Cast", [shape_int32(op.input_specs[0], lambda: op.input_shape(0))],
                  {"dtype": op.input_specs[1].dtype})
    return [apply("ScatterNd", [op.inputs[1], grad, shape]), None]


register(OpDef("GatherNd", kernel=_gather_nd_kernel, infer=_gather_nd_infer, gradient=_gather_nd_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:gather_nd"}))


def gather_nd(params, indices, batch_dims=0, name=None) -> Tensor:
    """The slices of `params` at the coordinates `indices` (shape ``[..., K]``).

    The result has shape ``indices.shape[:-1] + params.shape[K:]``.
    """
    if batch_dims != 0:
        raise NotImplementedError("gather_nd: batch_dims other than 0 is not supported; add the batch "
                                  "coordinates to indices instead")
    params = convert(params)
    indices = convert(indices, dtypes.int32 if isinstance(indices, list | tuple) else None)
    return apply("GatherNd", [params, indices], name=name)


# -- ScatterNd / TensorScatterUpdate ------------------------------------------------------------
def _check_updates(op_name: str, indices, updates, target: TensorShape, depth) -> None:
    expected = _slices_shape(indices, target, depth)
    if not updates.shape.is_compatible_with(expected):
        raise ValueError(f"{op_name}: updates must have shape indices.shape[:-1] + shape[K:] = {expected}, "
                         f"got {updates.shape}")


def _scatter_nd_infer(indices, updates, dims):
    infer.check_dtype("ScatterNd", updates, infer.NUMERIC, 1)
    infer.check_dtype("ScatterNd", dims, infer.INTEGERS, 2)
    if dims.value is not None:
        target = TensorShape([int(d) for d in np.ravel(dims.value)])
    else:
        length = dims.shape[0] if dims.shape.rank == 1 else None
        target = TensorShape(None if length is None else [None] * length)
    depth = _depth("ScatterNd", indices, target.rank)
    _check_updates("ScatterNd", indices, updates, target, depth)
    return Spec(updates.dtype, target)


def _scatter_nd_kernel(indices, updates, dims):
    result = np.zeros(tuple(int(d) for d in np.ravel(dims)), dtype=np.asarray(updates).dtype)
    np.add.at(result, _coordinates("ScatterNd", indices, result.shape), updates)
    return result


register(OpDef("ScatterNd", kernel=_scatter_nd_kernel, infer=_scatter_nd_infer,
               gradient=lambda op, grad: [None, apply("GatherNd", [grad, op.inputs[0]])
                                          if op.input_specs[1].dtype.is_floating else None, None],
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:scatter_nd"}))


def scatter_nd(indices, updates, shape, name=None) -> Tensor:
    """A tensor of `shape` holding zeros, plus each slice of `updates` at its coordinates.

    Updates to the same coordinates are summed, as in TensorFlow.

        >>> scatter_nd([[1], [1], [3]], constant([5, 6, 7]), [4]).numpy()
        array([ 0, 11,  0,  7], dtype=int32)
    """
    indices = convert(indices, dtypes.int32 if isinstance(indices, list | tuple) else None)
    dims = shape_operand(shape, "scatter_nd")
    if isinstance(dims, tuple):
        dims = convert(np.array(dims, dtype=indices.dtype.as_numpy_dtype))
    return apply("ScatterNd", [indices, convert(updates), dims], name=name)


def _tensor_scatter_infer(tensor, indices, updates):
    infer.check_dtype("TensorScatterUpdate", tensor, infer.ALL)
    infer.check_same_dtype("TensorScatterUpdate", tensor, updates)
    depth = _depth("TensorScatterUpdate", indices, tensor.shape.rank)
    _check_updates("TensorScatterUpdate", indices, updates, tensor.shape, depth)
    return Spec(tensor.dtype, tensor.shape)


def _tensor_scatter_kernel(tensor, indices, updates):
    result = np.array(tensor)  # a copy: the input is never changed
    result[_coordinates("TensorScatterUpdate", indices, result.shape)] = updates
    return result


def _tensor_scatter_gradient(op, grad):
    """Replaced slices get no gradient; each update gets its slice's (coordinates are assumed distinct:
    of repeated ones only the last update is used, as the kernel does)."""
    if not op.input_specs[0].dtype.is_floating:
        return [None, None, None]
    indices = op.inputs[1]
    kept = apply("TensorScatterUpdate", [grad, indices, zeros_for_input(op, 2)])
    return [kept, None, apply("GatherNd", [grad, indices])]


register(OpDef("TensorScatterUpdate", kernel=_tensor_scatter_kernel, infer=_tensor_scatter_infer,
               gradient=_tensor_scatter_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:tensor_scatter_update"}))


def tensor_scatter_nd_update(tensor, indices, updates, name=None) -> Tensor:
    """A copy of `tensor` with the slices at the coordinates `indices` replaced by `updates`.

    Where coordinates repeat, the last update wins (TensorFlow leaves the
    order unspecified).

        >>> tensor_scatter_nd_update(constant([1, 2, 3]), [[0], [2]], [9, 8]).numpy()
        array([9, 2, 8], dtype=int32)
    """
    tensor = convert(tensor)
    indices = convert(indices, dtypes.int32 if isinstance(indices, list | tuple) else None)
    updates = binary_inputs(tensor, updates)[1]
    return apply("TensorScatterUpdate", [tensor, indices, updates], name=name)


# -- boolean_mask ----------------------------------------------------------------------------
def boolean_mask(tensor, mask, axis=None, name=None) -> Tensor:
    """The slices of `tensor` where the bool `mask` is true, in row-major order.

    `mask` (rank K) covers axes ``axis .. axis+K-1`` of `tensor` (axis
    defaults to 0); those axes become one axis of length ``count(mask)``.
    Built from `where` and `gather`.

        >>> boolean_mask(constant([[1, 2], [3, 4], [5, 6]]), [True, False, True]).numpy()
        array([[1, 2],
               [5, 6]], dtype=int32)
    """
    tensor = convert(tensor)
    mask = convert(mask)
    if mask.dtype is not dtypes.bool_:
        raise TypeError(f"boolean_mask: mask must be a bool tensor, got {mask.dtype.name}")
    depth = mask.shape.rank
    if depth is None or tensor.shape.rank is None:
        raise ValueError("boolean_mask: the ranks of tensor and mask must be known while tracing")
    if depth == 0:
        raise ValueError("boolean_mask: mask must have rank >= 1, got a scalar")
    axis = 0 if axis is None else infer.normalize_axis("boolean_mask", int(axis), tensor.shape.rank)
    covered = tensor.shape[axis:axis + depth]
    if axis + depth > tensor.shape.rank or not covered.is_compatible_with(mask.shape):
        raise ValueError(f"boolean_mask: mask of shape {mask.shape} does not match axes {axis}.."
                         f"{axis + depth - 1} of tensor of shape {tensor.shape}")
    positions = reshape(where(reshape(mask, [-1])), [-1])
    dims = shape(tensor, dtypes.int64)
    covered_size = reduce_prod(dims[axis:axis + depth], keepdims=True)  # not -1: that is ambiguous for 0 elements
    flat = reshape(tensor, concat([dims[:axis], covered_size, dims[axis + depth:]], 0))
    return gather(flat, positions, axis=axis, name=name)
