"""Shared dtype/shape rules for op registrations.

Each rule takes input `Spec`s and returns output `Spec`s, raising TypeError
for a dtype the op cannot take and ValueError for incompatible shapes.
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.ops.registry import Spec
from autoloop.shapes import TensorShape

# The dtype groups of TensorFlow's op definitions.
FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
INTEGERS = (dtypes.int32, dtypes.int64)  # index, shape and axis dtypes
ALL_INTEGERS = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8)
NUMERIC = ALL_INTEGERS + FLOATS
SIGNED = tuple(d for d in NUMERIC if d is not dtypes.uint8)  # negation, abs, sign
INTEGERS_AND_BOOL = (dtypes.bool_,) + ALL_INTEGERS
ALL = (dtypes.bool_,) + NUMERIC


def check_dtype(op_name: str, spec: Spec, allowed, position: int = 0) -> None:
    if spec.dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(f"{op_name} does not take {spec.dtype.name} tensors (input #{position}); "
                        f"it takes {names}. Use autoloop.cast to convert.")


def check_same_dtype(op_name: str, *specs: Spec) -> None:
    first = specs[0].dtype
    for position, spec in enumerate(specs[1:], start=1):
        if spec.dtype is not first:
            raise TypeError(
                f"cannot compute {op_name}: input #{position} (zero-based) was expected to be a "
                f"{first.name} tensor but is a {spec.dtype.name} tensor. Use autoloop.cast to "
                f"give both inputs the same dtype.")


def broadcast_shapes(op_name: str, a: TensorShape, b: TensorShape) -> TensorShape:
    """numpy broadcasting over partial shapes."""
    if a == b or b.as_tuple() == ():  # the common cases, and what the general rule gives for them
        return a
    if a.as_tuple() == ():
        return b
    return broadcast_partial_shapes(op_name, a, b)


def broadcast_partial_shapes(op_name: str, a: TensorShape, b: TensorShape) -> TensorShape:
    """`broadcast_shapes` without its shortcuts for equal shapes and scalars."""
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    da, db = list(a), list(b)
    rank = max(len(da), len(db))
    da = [1] * (rank - len(da)) + da
    db = [1] * (rank - len(db)) + db
    dims = []
    for x, y in zip(da, db):
        if x == 1:
            dims.append(y)
        elif y == 1:
            dims.append(x)
        elif x is None:
            dims.append(y)
        elif y is None or x == y:
            dims.append(x)
        else:
            raise ValueError(f"{op_name}: incompatible shapes {a} and {b} for broadcasting")
    return TensorShape(dims)


def elementwise(allowed, result_dtype=None):
    """Rule for an element-wise op over same-dtype inputs with broadcasting."""
    def rule(op_name):
        def infer(*specs, **_):
            check_same_dtype(op_name, *specs)
            check_dtype(op_name, specs[0], allowed)
            shape = specs[0].shape
            for spec in specs[1:]:
                shape = broadcast_shapes(op_name, shape, spec.shape)
            return Spec(result_dtype or specs[0].dtype, shape)
        # On inputs of one allowed dtype and one shape this rule says what numpy's kernel gives.
        infer.same_dtype_numpy = frozenset(np.dtype(d.as_numpy_dtype) for d in allowed if d is not dtypes.variant)
        return infer
    return rule


def merge_shapes(op_name: str, specs) -> TensorShape:
    """The most specific shape compatible with every spec's shape (inputs of one shape)."""
    merged = TensorShape(None)
    for spec in specs:
        if not merged.is_compatible_with(spec.shape):
            raise ValueError(f"{op_name}: all inputs must have one shape, got "
                             f"{', '.join(str(s.shape) for s in specs)}")
        merged = merged.merge_with(spec.shape)
    return merged


def check_axis_along(op_name: str, spec: Spec, axis: int) -> None:
    """For ops working along one axis: `spec` is not a scalar and `axis` is one of its axes."""
    if spec.shape.rank is None:
        return
    if spec.shape.rank == 0:
        raise ValueError(f"{op_name} needs a tensor of rank >= 1, got a scalar")
    normalize_axis(op_name, axis, spec.shape.rank)


def normalize_axis(op_name: str, axis: int, rank, allow_end: bool = False) -> int:
    """`axis` in ``[0, rank)`` (or ``[0, rank]`` with `allow_end`)."""
    if rank is None:
        if axis < 0:
            raise ValueError(f"{op_name}: a negative axis ({axis}) needs a known rank")
        return axis
    limit = rank + 1 if allow_end else rank
    if not -limit <= axis < limit:
        raise ValueError(f"{op_name}: axis {axis} is out of range for a tensor of rank {rank}")
    return axis + limit if axis < 0 else axis
