"""Shared dtype/shape rules for op registrations.

Each rule takes input `Spec`s and returns output `Spec`s, raising TypeError
for a dtype the op cannot take and ValueError for incompatible shapes.
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.ops.registry import Spec
from autoloop.shapes import TensorShape

NUMERIC = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)
FLOATS = (dtypes.float32, dtypes.float64)
INTEGERS = (dtypes.int32, dtypes.int64)
INTEGERS_AND_BOOL = (dtypes.bool_, dtypes.int32, dtypes.int64)
ALL = (dtypes.bool_, dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


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
        return infer
    return rule


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
