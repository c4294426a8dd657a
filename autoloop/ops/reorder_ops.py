"""Ops that reorder elements along axes: `reverse`, `roll`, `sort`, `argsort`.

The result has the input's shape. `sort` and `argsort` order along one axis
(default -1) in ``"ASCENDING"`` or ``"DESCENDING"`` direction; `argsort`
gives int32 positions and keeps equal elements in their original order (a
stable sort, which TensorFlow's ``stable=False`` also allows).

    >>> argsort(constant([3, 1, 2])).numpy()
    array([1, 2, 0], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.ops.static_args import static_axis, static_ints
from autoloop.tensor import Tensor


def _check_axes(op_name: str, x, axes) -> None:
    if x.shape.rank is not None:
        for axis in axes:
            infer.normalize_axis(op_name, axis, x.shape.rank)


def _normalized(op_name: str, tensor, axes):
    rank = tensor.shape.rank
    return tuple(infer.normalize_axis(op_name, a, rank) if rank is not None else a for a in axes)


# -- ReverseV2 -----------------------------------------------------------------------------
def _reverse_infer(x, axis):
    infer.check_dtype("ReverseV2", x, infer.ALL)
    _check_axes("ReverseV2", x, axis)
    if len(set(axis)) != len(axis):
        raise ValueError(f"ReverseV2: axis {list(axis)} names an axis twice")
    return Spec(x.dtype, x.shape)


register(OpDef("ReverseV2", kernel=lambda x, axis: np.flip(x, axis), infer=_reverse_infer,
               gradient=lambda op, grad: [apply("ReverseV2", [grad], op.attrs)
                                          if op.input_specs[0].dtype.is_floating else None],
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:reverse"}))


def reverse(tensor, axis, name=None) -> Tensor:
    """`tensor` with the order of its elements reversed along each axis in `axis` (a list)."""
    tensor = convert(tensor)
    axes = _normalized("ReverseV2", tensor, static_ints(axis, "ReverseV2", "axis"))
    return apply("ReverseV2", [tensor], {"axis": axes}, name=name)


# -- Roll --------------------------------------------------------------------------------
def _roll_infer(x, shift, axis):
    infer.check_dtype("Roll", x, infer.ALL)
    infer.check_dtype("Roll", shift, infer.INTEGERS, 1)
    _check_axes("Roll", x, axis)
    if shift.shape.rank is not None:
        count = 1 if shift.shape.rank == 0 else shift.shape[0]
        if shift.shape.rank > 1 or (count is not None and count != len(axis)):
            raise ValueError(f"Roll: give one shift per axis; got shift of shape {shift.shape} for "
                             f"axis {list(axis)}")
    return Spec(x.dtype, x.shape)


def _roll_kernel(x, shift, axis):
    return np.roll(x, tuple(int(s) for s in np.ravel(shift)), axis)


register(OpDef("Roll", kernel=_roll_kernel, infer=_roll_infer,
               gradient=lambda op, grad: [apply("Roll", [grad, -op.inputs[1]], op.attrs)
                                          if op.input_specs[0].dtype.is_floating else None, None],
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:roll"}))


def roll(input, shift, axis, name=None) -> Tensor:
    """`input` with its elements moved `shift` places along `axis`, wrapping around.

    `shift` and `axis` are ints or lists of one length; `shift` may be a
    tensor computed by the graph.

        >>> roll(constant([1, 2, 3, 4]), 1, 0).numpy()
        array([4, 1, 2, 3], dtype=int32)
    """
    input = convert(input)
    axes = _normalized("Roll", input, static_ints(axis, "Roll", "axis"))
    shift = convert(shift, dtypes.int32 if isinstance(shift, int | list | tuple) else None)
    return apply("Roll", [input, shift], {"axis": axes}, name=name)


# -- Sort / ArgSort -------------------------------------------------------------------------
_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _sort_infer(op_name, result_dtype=None):
    def rule(values, axis, direction):
        infer.check_dtype(op_name, values, infer.NUMERIC)
        infer.check_axis_along(op_name, values, axis)
        return Spec(result_dtype or values.dtype, values.shape)
    return rule


def stable_order(values, axis: int, direction: str):
    """Positions that sort `values` along `axis`; equal elements keep their order."""
    values = np.asarray(values)
    if direction == "ASCENDING":
        return np.argsort(values, axis=axis, kind="stable")
    # Descending and stable: sort the reversed array ascending, then map back.
    backwards = np.argsort(np.flip(values, axis), axis=axis, kind="stable")
    return values.shape[axis] - 1 - np.flip(backwards, axis)


def _sort_kernel(values, axis, direction):
    order = stable_order(values, axis, direction)
    return np.take_along_axis(np.asarray(values), order, axis=axis)


def _argsort_kernel(values, axis, direction):
    return stable_order(values, axis, direction).astype(np.int32)


def _sort_gradient(op, grad):
    """Each sorted element's gradient goes back to where it came from: the inverse permutation."""
    if not op.input_specs[0].dtype.is_floating:
        return [None]
    axis = op.attrs["axis"]
    order = apply("ArgSort", [op.inputs[0]], op.attrs)
    inverse = apply("ArgSort", [order], {"axis": axis, "direction": "ASCENDING"})
    return [apply("PermuteAlongAxis", [grad, inverse], {"axis": axis})]


register(OpDef("Sort", kernel=_sort_kernel, infer=_sort_infer("Sort"), gradient=_sort_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:sort"}))
register(OpDef("ArgSort", kernel=_argsort_kernel, infer=_sort_infer("ArgSort", dtypes.int32),
               gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:argsort"}))


# -- PermuteAlongAxis: ``take_along_axis`` for an `order` that permutes each slice (Sort's gradient) --
def _permute_infer(x, order, axis):
    infer.check_dtype("PermuteAlongAxis", order, infer.INTEGERS, 1)
    return Spec(x.dtype, x.shape)


def _permute_gradient(op, grad):
    inverse = apply("ArgSort", [op.inputs[1]], {"axis": op.attrs["axis"], "direction": "ASCENDING"})
    return [apply("PermuteAlongAxis", [grad, inverse], op.attrs), None]


register(OpDef("PermuteAlongAxis", kernel=lambda x, order, axis: np.take_along_axis(np.asarray(x), order, axis),
               infer=_permute_infer, gradient=_permute_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:permute_along_axis"}))


def _sort_attrs(op_name, values, axis, direction):
    direction = str(direction).upper()
    if direction not in _DIRECTIONS:
        raise ValueError(f"{op_name}: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return {"axis": static_axis(axis, values, op_name), "direction": direction}


def sort(values, axis=-1, direction="ASCENDING", name=None) -> Tensor:
    """`values` sorted along `axis` (default -1)."""
    values = convert(values)
    return apply("Sort", [values], _sort_attrs("Sort", values, axis, direction), name=name)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None) -> Tensor:
    """The int32 positions that sort `values` along `axis`; always stable."""
    values = convert(values)
    return apply("ArgSort", [values], _sort_attrs("ArgSort", values, axis, direction), name=name)
