"""Ops on `SparseTensor`s (``autoloop.sparse``): `expand_dims`, `to_dense`.

    >>> st = SparseTensor([[0], [2]], [1, 2], [3])
    >>> expand_dims(st, 0).dense_shape.numpy()
    array([1, 3])
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.control_flow.sparse import SparseTensor
from autoloop.ops import infer
from autoloop.ops.array_ops import concat, shape
from autoloop.ops.creation_ops import fill, zeros
from autoloop.ops.dispatch import convert
from autoloop.ops.logging_ops import Assert
from autoloop.ops.math_ops import greater_equal, less_equal, logical_and
from autoloop.ops.scatter_ops import tensor_scatter_nd_update
from autoloop.ops.shape_ops import stack
from autoloop.ops.static_args import static_int


def expand_dims(sp_input, axis=None, name=None):
    """`sp_input` with a new axis of size 1 at `axis` (None or -1: at the end).

    Every index gets a 0 at position `axis`; the dense shape gets a 1 there.
    `axis` must lie in ``[-rank - 1, rank]``. The rank may be unknown while
    tracing (a SparseTensor loop variable whose shape invariant is
    ``TensorShape(None)``): then a negative `axis` counts from the end at run
    time, and an `axis` beyond the rank is an `InvalidArgumentError` there.
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"sparse.expand_dims takes a SparseTensor, got {type(sp_input).__name__}; use "
                        f"autoloop.expand_dims for dense tensors")
    axis = -1 if axis is None else static_int(axis, "sparse.expand_dims", "axis")
    indices, dense_shape = sp_input.indices, sp_input.dense_shape
    rank = sp_input.shape.rank
    if rank is not None:
        position = infer.normalize_axis("sparse.expand_dims", axis, rank, allow_end=True)
    else:
        rank = shape(dense_shape, dtypes.int32)[0]
        position = axis if axis >= 0 else rank + (axis + 1)
        Assert(logical_and(greater_equal(position, 0), less_equal(position, rank)),
               [f"sparse.expand_dims: axis {axis} is out of range for a SparseTensor of rank", rank])
    count = shape(indices, dtypes.int64)[0]
    new_column = zeros(stack([count, convert(np.int64(1))]), dtypes.int64)
    indices = concat([indices[:, :position], new_column, indices[:, position:]], 1)
    dense_shape = concat([dense_shape[:position], convert(np.array([1], np.int64)), dense_shape[position:]], 0)
    return SparseTensor(indices, sp_input.values, dense_shape)


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor `sp_input` stands for: its values at its indices, `default_value` (0 when
    None) elsewhere. `validate_indices` is accepted for TensorFlow's signature; indices out of the
    dense shape raise as `tensor_scatter_nd_update` does."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"sparse.to_dense takes a SparseTensor, got {type(sp_input).__name__}")
    dtype = sp_input.values.dtype
    default = zeros([], dtype) if default_value is None else convert(default_value, dtype)
    return tensor_scatter_nd_update(fill(sp_input.dense_shape, default), sp_input.indices, sp_input.values)
