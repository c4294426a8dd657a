"""Static op arguments: axes, permutations, depths... given as Python values.

Such arguments become node attributes, so they must be known while tracing:
a Python int (or list of them) or a tensor whose value is known (eager, or a
graph constant). A tensor computed in the graph is refused with a TypeError
that says so.

    >>> static_int(constant(2), "ExpandDims", "axis")
    2
"""

from __future__ import annotations

import numpy as np

from autoloop.errors import InvalidArgumentError
from autoloop.ops.dispatch import constant_value
from autoloop.tensor import Tensor


def _known_value(value, op_name: str, what: str):
    if not isinstance(value, Tensor):
        return value
    known = constant_value(value)
    if known is None:
        raise TypeError(
            f"{op_name}: {what} must be known while tracing, but got {value.name}, a tensor "
            f"computed by the graph. Pass a Python value or a constant tensor instead.")
    if not value.dtype.is_integer:
        raise TypeError(f"{op_name}: {what} must be an integer, got a {value.dtype.name} tensor")
    return known


def _as_int(item, op_name: str, what: str) -> int:
    if isinstance(item, bool | np.bool_) or not isinstance(item, int | np.integer):
        raise TypeError(f"{op_name}: {what} must be an integer, got {type(item).__name__} {item!r}")
    return int(item)


def static_int(value, op_name: str, what: str) -> int:
    """`value` (a Python int or a known scalar integer tensor) as a Python int."""
    known = _known_value(value, op_name, what)
    if isinstance(known, np.ndarray):
        if known.ndim != 0:
            raise TypeError(f"{op_name}: {what} must be a scalar, got shape {known.shape}")
        known = known[()]
    return _as_int(known, op_name, what)


def static_ints(value, op_name: str, what: str) -> tuple[int, ...]:
    """`value` (an int, a list of ints or a known integer tensor) as a tuple of ints."""
    known = _known_value(value, op_name, what)
    if isinstance(known, np.ndarray | np.generic):
        if np.ndim(known) > 1:
            raise TypeError(f"{op_name}: {what} must be a scalar or a vector, got shape {np.shape(known)}")
        known = np.atleast_1d(known).tolist()
    if isinstance(known, list | tuple):
        return tuple(static_int(item, op_name, what) for item in known)
    return (_as_int(known, op_name, what),)


def static_axis(axis, tensor, op_name: str) -> int:
    """`axis` (an int or a known scalar tensor) for ops along one axis of `tensor`;
    made non-negative when the rank is known."""
    axis = static_int(axis, op_name, "axis")
    rank = tensor.shape.rank
    if rank:
        if not -rank <= axis < rank:
            raise ValueError(f"{op_name}: axis {axis} is out of range for a tensor of rank {rank}")
        axis %= rank
    return axis


def static_axes(axis, rank, op_name: str) -> tuple[int, ...] | None:
    """`axis` (None, an int or a list) as a sorted tuple of distinct axes.

    Axes are made non-negative when `rank` is known; None stays None (all axes).
    """
    if axis is None:
        return None
    axes = static_ints(axis, op_name, "axis")
    if rank is None:
        return axes
    for item in axes:
        if not -rank <= item < rank:
            raise ValueError(f"{op_name}: axis {item} is out of range for a tensor of rank {rank}; "
                             f"expected an axis in [{-rank}, {rank})")
    return tuple(sorted({item % rank for item in axes}))


def runtime_axes(axis, ndim: int, op_name: str):
    """`axis` made non-negative and distinct for an array of rank `ndim`.

    Kernels call this for axes kept as given because the rank was unknown
    while tracing (``[0, -2]`` may name one axis twice).
    """
    if axis is None or all(item >= 0 for item in axis):
        return axis
    for item in axis:
        if not -ndim <= item < ndim:
            raise InvalidArgumentError(f"{op_name}: axis {item} is out of range for a tensor of rank {ndim}")
    return tuple(sorted({item % ndim for item in axis}))
