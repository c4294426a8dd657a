"""Segment reductions (``autoloop.math``): ``segment_sum``/``mean``/``max``/``min``/``prod`` and their
``unsorted_segment_*`` forms.

Entry ``k`` of the result reduces the rows ``data[i]`` whose ``segment_ids[i]``
is ``k`` (``segment_ids`` indexes the leading axes of ``data``):

    result[k] = reduce(data[i] for i where segment_ids[i] == k)

- ``unsorted_segment_*(data, segment_ids, num_segments)``: ids in any order;
  negative ids are dropped; an id ``>= num_segments`` is an error. An empty
  segment holds the reduction's identity: 0 (sum, mean), 1 (prod), the
  dtype's lowest value (max) or highest (min).
- ``segment_*(data, segment_ids)``: ids sorted, non-negative (else an
  error); there are ``max(segment_ids) + 1`` segments, and an empty one
  holds 0 (1 for prod), as in TensorFlow.

One op, ``SegmentReduce`` (attrs ``reduce`` and ``sorted``), does both; the
means are sums divided by counts.

    >>> unsorted_segment_sum(constant([1, 2, 3, 4]), constant([1, 0, 1, 3]), 4).numpy()
    array([2, 4, 0, 4], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from autoloop.errors import InvalidArgumentError
from autoloop.ops import infer
from autoloop.ops.creation_ops import ones_like, zeros_like
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import cast, divide, equal, greater, greater_equal, maximum, multiply
from autoloop.ops.reduction_ops import reduce_max
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.ops.selection_ops import gather, where
from autoloop.ops.shape_ops import reshape
from autoloop.shapes import TensorShape

_UFUNCS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def _identity(reduce: str, dtype):
    numpy_type = np.dtype(dtype)
    if reduce in ("max", "min"):
        info = np.finfo(numpy_type) if numpy_type.kind == "f" else np.iinfo(numpy_type)
        return info.min if reduce == "max" else info.max
    return 1 if reduce == "prod" else 0


# -- SegmentReduce -------------------------------------------------------------------------------
def _segment_infer(data, segment_ids, num_segments, reduce, sorted):
    op_name = f"segment_{reduce}" if sorted else f"unsorted_segment_{reduce}"
    infer.check_dtype(op_name, data, infer.NUMERIC if reduce in ("max", "min") else infer.FLOATS + infer.INTEGERS)
    infer.check_dtype(op_name, segment_ids, infer.INTEGERS, 1)
    infer.check_dtype(op_name, num_segments, infer.INTEGERS, 2)
    if num_segments.shape.rank not in (None, 0):
        raise ValueError(f"{op_name}: num_segments must be a scalar, got shape {num_segments.shape}")
    if sorted and segment_ids.shape.rank not in (None, 1):
        raise ValueError(f"{op_name}: segment_ids must be a vector, got shape {segment_ids.shape}")
    count = None if num_segments.value is None else int(num_segments.value)
    if data.shape.rank is None or segment_ids.shape.rank is None:
        return Spec(data.dtype, TensorShape(None))
    rank = segment_ids.shape.rank
    if not data.shape[:rank].is_compatible_with(segment_ids.shape):
        raise ValueError(f"{op_name}: segment_ids of shape {segment_ids.shape} must match the leading axes of "
                         f"data, of shape {data.shape}")
    return Spec(data.dtype, TensorShape([count] + list(data.shape)[rank:]))


def _segment_kernel(data, segment_ids, num_segments, reduce, sorted):
    data, ids = np.asarray(data), np.asarray(segment_ids)
    count = int(num_segments)
    name = f"segment_{reduce}" if sorted else f"unsorted_segment_{reduce}"
    if sorted and ids.size and (ids[0] < 0 or np.any(np.diff(ids) < 0)):
        raise InvalidArgumentError(f"{name}: segment ids must be sorted and non-negative, got {ids.tolist()}")
    if ids.size and ids.max() >= count:
        position = int(np.argmax(ids.ravel() >= count))
        raise InvalidArgumentError(f"{name}: segment_ids[{position}] = {ids.ravel()[position]} is out of range "
                                   f"[0, {count})")
    rows = data.reshape((ids.size,) + data.shape[ids.ndim:])
    flat = ids.ravel()
    kept = flat >= 0
    result = np.full((count,) + rows.shape[1:], _identity(reduce, data.dtype), data.dtype)
    _UFUNCS[reduce].at(result, flat[kept], rows[kept])
    if sorted and reduce in ("max", "min"):  # TensorFlow's sorted forms leave an empty segment 0
        result[np.bincount(flat[kept], minlength=count) == 0] = 0
    return result


def _gather_segments(values, segment_ids):
    """``values[segment_ids]``, zeros where an id is negative (a dropped row)."""
    kept = greater_equal(segment_ids, 0)
    gathered = gather(values, maximum(segment_ids, 0))
    extra = gathered.shape.rank - kept.shape.rank if gathered.shape.rank is not None else 0
    mask = reshape(kept, list(kept.shape) + [1] * extra) if extra and kept.shape.is_fully_defined() else kept
    return where(mask, gathered, zeros_like(gathered))


def _segment_gradient(op, grad):
    if not op.input_specs[0].dtype.is_floating:
        return [None, None, None]
    data, ids, num_segments = op.inputs
    reduce = op.attrs["reduce"]
    if reduce == "sum":
        return [_gather_segments(grad, ids), None, None]
    output = op.outputs[0]
    if reduce in ("max", "min"):  # ties share the gradient equally, as in TensorFlow
        chosen = cast(equal(data, _gather_segments(output, ids)), data.dtype)
        ties = _segment("sum", chosen, ids, num_segments, False)
        return [multiply(chosen, _gather_segments(divide(grad, maximum(ties, ones_like(ties))), ids)), None, None]
    # prod: the product of the other rows, without dividing by a zero.
    is_zero = equal(data, zeros_like(data))
    zeros = _segment("sum", cast(is_zero, data.dtype), ids, num_segments, False)
    safe = where(is_zero, ones_like(data), data)
    others_of_zero = _segment("prod", safe, ids, num_segments, False)
    others_of_zero = where(greater(zeros, ones_like(zeros)), zeros_like(others_of_zero), others_of_zero)
    others = where(is_zero, _gather_segments(others_of_zero, ids), divide(_gather_segments(output, ids), safe))
    return [multiply(others, _gather_segments(grad, ids)), None, None]


register(OpDef("SegmentReduce", kernel=_segment_kernel, infer=_segment_infer, gradient=_segment_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.segments:segment_reduce"}))


def _segment(reduce, data, segment_ids, num_segments, sorted, name=None):
    attrs = {"reduce": reduce, "sorted": sorted}
    default = f"{'' if sorted else 'Unsorted'}Segment{reduce.capitalize()}"  # TensorFlow's op name
    return apply("SegmentReduce", [data, segment_ids, num_segments], attrs, name=name or default)


def _segment_fn(reduce, sorted):
    def fn(data, segment_ids, num_segments=None, name=None):
        data, ids = convert(data), convert(segment_ids)
        if sorted:
            count = maximum(reduce_max(ids) + 1, 0)  # the max of no ids is the lowest int: no segments
        else:
            count = convert(num_segments, ids.dtype) if not hasattr(num_segments, "dtype") else convert(num_segments)
        if reduce == "mean":
            return _mean(data, ids, count, sorted, name)
        return _segment(reduce, data, ids, count, sorted, name)
    if sorted:  # TensorFlow's signature: no num_segments
        def public(data, segment_ids, name=None):
            return fn(data, segment_ids, name=name)
    else:
        public = fn
    public.__name__ = f"segment_{reduce}" if sorted else f"unsorted_segment_{reduce}"
    public.__doc__ = (f"The {reduce} of the rows of `data` in each segment, "
                      f"{'`segment_ids` sorted' if sorted else 'ids in any order (negative ids dropped)'}; see the "
                      f"module docstring.")
    return public


def _mean(data, ids, count, sorted, name):
    if not data.dtype.is_floating:
        raise TypeError(f"segment mean: data must be a float tensor, got {data.dtype.name}")
    total = _segment("sum", data, ids, count, sorted)
    sizes = _segment("sum", ones_like(data), ids, count, sorted)
    return divide(total, maximum(sizes, ones_like(sizes)), name=name)


segment_sum, segment_prod, segment_max, segment_min, segment_mean = (
    _segment_fn(reduce, True) for reduce in ("sum", "prod", "max", "min", "mean"))
unsorted_segment_sum, unsorted_segment_prod, unsorted_segment_max, unsorted_segment_min, unsorted_segment_mean = (
    _segment_fn(reduce, False) for reduce in ("sum", "prod", "max", "min", "mean"))
