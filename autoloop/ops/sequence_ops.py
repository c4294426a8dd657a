"""Sequences: `linspace`, `sequence_mask` (compositions), `searchsorted` and `unique` (ops).

    >>> linspace(0., 1., 5).numpy()
    array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    >>> sequence_mask([1, 3], 4).numpy()
    array([[ True, False, False, False], [ True,  True,  True, False]])
    >>> searchsorted([1, 2, 3, 4], [2, 5, 0]).numpy()
    array([1, 4, 0], dtype=int32)
    >>> y, idx = unique([1, 1, 4, 2, 2]); y.numpy(), idx.numpy()
    (array([1, 4, 2], dtype=int32), array([0, 0, 1, 2, 2], dtype=int32))
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from autoloop import dtypes
from autoloop.ops import infer
from autoloop.ops.creation_ops import range as range_
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import cast, equal, greater, less, logical_and, maximum
from autoloop.ops.reduction_ops import reduce_max
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.ops.selection_ops import where
from autoloop.ops.shape_ops import expand_dims, reshape, transpose
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


# -- linspace ---------------------------------------------------------------------------------------
def linspace(start, stop, num, name=None, axis=0) -> Tensor:
    """`num` evenly spaced numbers from `start` to `stop`, both included, along a new `axis`.

    `start` and `stop` may be tensors of one shape (each element gets its
    own sequence); integers give float64, as in TensorFlow. The last number
    is `stop` exactly. Differentiable with respect to `start` and `stop`.
    """
    start, stop = convert(start), convert(stop)
    if not start.dtype.is_floating:
        start = cast(start, dtypes.float64)
    stop = cast(stop, start.dtype)
    num = convert(num)
    if not num.dtype.is_integer or num.shape.rank not in (None, 0):
        raise TypeError(f"linspace: num must be an integer scalar, got a {num.dtype.name} of shape {num.shape}")
    rank = start.shape.rank if start.shape.rank is not None else stop.shape.rank
    if rank is None:
        raise ValueError("linspace: start and stop need a known rank")
    position = axis % (rank + 1) if -(rank + 1) <= axis <= rank else None
    if position is None:
        raise ValueError(f"linspace: axis {axis} is out of range for start of rank {rank}")
    steps = reshape(cast(range_(num), start.dtype), [-1] + [1] * rank)
    last = cast(num - 1, start.dtype)
    values = expand_dims(start, 0) + steps / maximum(last, 1) * expand_dims(stop - start, 0)
    at_stop = logical_and(equal(steps, last), greater(last, 0))  # the last number is `stop` (num 1: `start`)
    values = where(at_stop, expand_dims(stop, 0), values)
    if position:
        values = transpose(values, list(range(1, position + 1)) + [0] + list(range(position + 1, rank + 1)))
    return apply("Identity", [values], name=name) if name else values


# -- sequence_mask ------------------------------------------------------------------------------------
def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool_, name=None) -> Tensor:
    """``mask[..., j] = j < lengths[...]``, with a new last axis of `maxlen` (default ``max(lengths)``).

        >>> sequence_mask([1, 3, 2], dtype=float32)   # [[1, 0, 0], [1, 1, 1], [1, 1, 0]]
    """
    lengths = convert(lengths)
    if not lengths.dtype.is_integer:
        raise TypeError(f"sequence_mask: lengths must be integers, got {lengths.dtype.name}")
    if maxlen is None:
        maxlen = reduce_max(lengths)
    maxlen = convert(maxlen, lengths.dtype) if not hasattr(maxlen, "dtype") else cast(maxlen, lengths.dtype)
    mask = less(range_(maxlen), expand_dims(lengths, -1))
    dtype = dtypes.as_dtype(dtype)
    return cast(mask, dtype, name=name) if dtype is not dtypes.bool_ or name else mask


# -- SearchSorted -----------------------------------------------------------------------------------
def _search_infer(sorted_sequence, values, side, out_type):
    infer.check_same_dtype("searchsorted", sorted_sequence, values)
    infer.check_dtype("searchsorted", sorted_sequence, infer.NUMERIC)
    if sorted_sequence.shape.rank == 0 or values.shape.rank == 0:
        raise ValueError("searchsorted: sorted_sequence and values need rank >= 1")
    if sorted_sequence.shape.rank is not None and values.shape.rank is not None:
        if (sorted_sequence.shape.rank != values.shape.rank
                or not sorted_sequence.shape[:-1].is_compatible_with(values.shape[:-1])):
            raise ValueError(f"searchsorted: sorted_sequence of shape {sorted_sequence.shape} and values of shape "
                             f"{values.shape} must agree on all axes but the last")
    return Spec(out_type, values.shape)


def _search_kernel(sorted_sequence, values, side, out_type):
    sequence, values = np.asarray(sorted_sequence), np.asarray(values)
    rows = sequence.reshape(-1, sequence.shape[-1])
    queries = values.reshape(rows.shape[0], values.shape[-1])  # not -1: values may be empty
    found = [np.searchsorted(row, query, side=side) for row, query in zip(rows, queries)]
    return np.asarray(found, out_type.as_numpy_dtype).reshape(values.shape)


register(OpDef("SearchSorted", kernel=_search_kernel, infer=_search_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.sequences:searchsorted"}))


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None) -> Tensor:
    """Where each of `values` would go in `sorted_sequence` (searched along the last axis) to keep it sorted.

    ``side="left"`` gives the first such place, ``"right"`` the last. Leading
    axes are a batch: row ``i`` of `values` searches row ``i`` of the sequence.
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    sequence = convert(sorted_sequence)
    values = convert(values, sequence.dtype) if not hasattr(values, "dtype") else convert(values)
    out_type = dtypes.as_dtype(out_type)
    if out_type not in infer.INTEGERS:
        raise TypeError(f"searchsorted: out_type must be int32 or int64, got {out_type.name}")
    return apply("SearchSorted", [sequence, values], {"side": side, "out_type": out_type}, name=name)


# -- Unique -------------------------------------------------------------------------------------------
class Unique(NamedTuple):
    """`unique`'s result: the distinct values `y` in order of first appearance, and `idx` with ``x == y[idx]``."""

    y: object
    idx: object


def _unique_infer(x, out_idx):
    infer.check_dtype("unique", x, infer.ALL)
    if x.shape.rank not in (None, 1):
        raise ValueError(f"unique: x must be a vector, got shape {x.shape}")
    return [Spec(x.dtype, TensorShape([None])), Spec(out_idx, x.shape if x.shape.rank == 1 else TensorShape([None]))]


def _unique_kernel(x, out_idx):
    values, first, inverse = np.unique(np.asarray(x), return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # numpy sorts the values; TensorFlow keeps first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return values[order], rank[inverse.ravel()].astype(out_idx.as_numpy_dtype)


register(OpDef("Unique", kernel=_unique_kernel, infer=_unique_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.sequences:unique"}))


def unique(x, out_idx=dtypes.int32, name=None) -> Unique:
    """The distinct elements of the vector `x` in order of first appearance, and each element's index in them.

    Returns ``Unique(y, idx)`` with ``x == gather(y, idx)``; `y`'s length is
    known only when the values are (so not on ``backend="jax"``).
    """
    out_idx = dtypes.as_dtype(out_idx)
    if out_idx not in infer.INTEGERS:
        raise TypeError(f"unique: out_idx must be int32 or int64, got {out_idx.name}")
    y, idx = apply("Unique", [convert(x)], {"out_idx": out_idx}, name=name)
    return Unique(y, idx)

