"""Ops that change a tensor's extent: `pad`, `split`, `broadcast_to`.

Paddings and split sizes are static (Python ints or constant tensors), so
the results' shapes are known while tracing; `broadcast_to` also takes a
shape computed by the graph.

    >>> pad(constant([[1, 2]]), [[1, 0], [0, 1]]).numpy()
    array([[0, 0, 0],
           [1, 2, 0]], dtype=int32)
"""

from __future__ import annotations

import numpy as np

from autoloop.errors import InvalidArgumentError
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import binary_inputs
from autoloop.ops.gradient_support import reduce_to_input, zeros_for_output
from autoloop.ops.registry import LINEAR, OpDef, Spec, register
from autoloop.ops.shape_ops import shape_operand
from autoloop.ops.static_args import static_int, static_ints
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor

# -- Pad ---------------------------------------------------------------------------------
_PAD_MODES = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}


def _pad_infer(x, constant_values, paddings, mode):
    infer.check_dtype("Pad", x, infer.ALL)
    infer.check_same_dtype("Pad", x, constant_values)
    if constant_values.shape.rank not in (0, None):
        raise ValueError(f"Pad: constant_values must be a scalar, got shape {constant_values.shape}")
    if x.shape.rank is not None and len(paddings) != x.shape.rank:
        raise ValueError(f"Pad: paddings must have one [before, after] pair per axis of the input "
                         f"({x.shape.rank} for shape {x.shape}), got {len(paddings)}")
    if x.shape.rank is None:
        return Spec(x.dtype, TensorShape([None] * len(paddings)))
    _check_mirror_paddings(x.shape, paddings, mode, ValueError)
    dims = [None if dim is None else dim + before + after for dim, (before, after) in zip(x.shape, paddings)]
    return Spec(x.dtype, TensorShape(dims))


def _check_mirror_paddings(shape, paddings, mode, error_type):
    """Mirrored padding may not reach past the opposite edge (TensorFlow's rule; numpy would repeat)."""
    if mode == "CONSTANT":
        return
    for axis, (dim, (before, after)) in enumerate(zip(shape, paddings)):
        limit = None if dim is None else dim - 1 if mode == "REFLECT" else dim
        if limit is not None and (before > limit or after > limit):
            raise error_type(f"Pad: {mode} padding of axis {axis} (size {dim}) must be at most "
                             f"{limit} on each side, got [{before}, {after}]")


def _pad_kernel(x, constant_values, paddings, mode):
    _check_mirror_paddings(np.shape(x), paddings, mode, InvalidArgumentError)
    if mode == "CONSTANT":
        return np.pad(x, paddings, mode="constant", constant_values=constant_values)
    return np.pad(x, paddings, mode=_PAD_MODES[mode])


def _pad_gradient(op, grad):
    """The gradient of the padded tensor folded back onto the input (a mirrored element's
    gradient goes to the element it copies); the constant gets the padding's gradient."""
    if not op.input_specs[0].dtype.is_floating:
        return [None, None]
    inner = apply("PadGrad", [grad], op.attrs)
    if op.attrs["mode"] != "CONSTANT":
        return [inner, None]
    total = {"axis": None, "keepdims": False}
    return [inner, apply("Sum", [grad], total) - apply("Sum", [inner], total)]


register(OpDef("Pad", kernel=_pad_kernel, infer=_pad_infer, gradient=_pad_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:pad"}))


# -- PadGrad: Pad's gradient (the transpose of padding, as a linear map of the input) ------------------
def _pad_grad_kernel(grad, paddings, mode):
    grad = np.asarray(grad)
    for axis, (before, after) in enumerate(paddings):
        size = grad.shape[axis] - before - after
        moved = np.moveaxis(grad, axis, 0)
        result = moved[before:before + size].copy()
        if mode != "CONSTANT" and size:
            skip = 1 if mode == "REFLECT" else 0  # REFLECT does not repeat the edge element
            for k in range(before):  # padded position before - 1 - k copies input position k + skip
                result[k + skip] += moved[before - 1 - k]
            for k in range(after):  # padded position before + size + k copies input size - 1 - skip - k
                result[size - 1 - skip - k] += moved[before + size + k]
        grad = np.moveaxis(result, 0, axis)
    return grad


def _pad_grad_infer(grad, paddings, mode):
    if grad.shape.rank is None:
        return Spec(grad.dtype, TensorShape([None] * len(paddings)))
    dims = [None if d is None else d - before - after for d, (before, after) in zip(grad.shape, paddings)]
    return Spec(grad.dtype, TensorShape(dims))


register(OpDef("PadGrad", kernel=_pad_grad_kernel, infer=_pad_grad_infer,
               gradient=lambda op, grad: [apply("Pad", [grad, convert(op.input_specs[0].dtype.as_numpy_dtype(0))],
                                                op.attrs)],
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:pad_grad"}))


# -- PadRows: zero rows appended up to a number known while tracing ---------------------------------
# Frames that a loop stacks (a scan's ys) have as many rows as frames ran, a number known only when it runs;
# a backend with static shapes (XLA) holds them in a buffer of the loop's bound. PadRows gives that buffer a
# meaning on every backend: `x` with zero rows appended on axis 0 up to `rows` (`x` has at most `rows`); `rows`
# None pads to the rows the backend holds: none on numpy (`x` as it is), the buffer's capacity on XLA (a loop
# with no bound known while tracing, whose capacity the program grows: `autoloop.backends.jax.growth`). Its
# second input is `x`'s shape, taken beside it: what the gradient reads (a gradient built in another loop reads
# that shape, never `x`, which on XLA may be a stack of run-time length).
def _pad_rows_infer(x, x_shape, rows):
    infer.check_dtype("PadRows", x, infer.ALL)
    infer.check_dtype("PadRows", x_shape, infer.INTEGERS, 1)
    if x.shape.rank == 0:
        raise ValueError("PadRows: the input must have rows (axis 0), got a scalar")
    if x.shape.rank is None:
        return Spec(x.dtype, TensorShape(None))
    if rows is None:
        return Spec(x.dtype, TensorShape([None]).concatenate(x.shape[1:]))
    if x.shape[0] is not None and x.shape[0] > rows:
        raise ValueError(f"PadRows: the input has {x.shape[0]} rows, more than the {rows} to pad to")
    return Spec(x.dtype, TensorShape([rows]).concatenate(x.shape[1:]))


def _pad_rows_kernel(x, x_shape, rows):
    x = np.asarray(x)
    if rows is None:
        return x
    if x.shape[0] > rows:
        raise InvalidArgumentError(f"PadRows: the input has {x.shape[0]} rows, more than the {rows} to pad to")
    return np.concatenate([x, np.zeros((rows - x.shape[0],) + x.shape[1:], x.dtype)])


def _pad_rows_gradient(op, grad):
    if not op.input_specs[0].dtype.is_floating:
        return [None, None]
    return [apply("PadRowsGrad", [grad, op.inputs[1]], {}), None]


register(OpDef("PadRows", kernel=_pad_rows_kernel, infer=_pad_rows_infer, gradient=_pad_rows_gradient, jvp=LINEAR,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:pad_rows"}))


# -- PadRowsGrad: PadRows' gradient, the first rows of `grad`, as many as `x_shape` (the input's) says ---------
# An op of its own, not a slice: on XLA, rows of a number known only at run time are a stack of run-time length
# (`autoloop.backends.jax.buffers.Padded`), which only a few ops read (PadRows among them).
def _pad_rows_grad_infer(grad, x_shape):
    infer.check_dtype("PadRowsGrad", x_shape, infer.INTEGERS, 1)
    if grad.shape.rank is None:
        return Spec(grad.dtype, TensorShape(None))
    rows = int(np.ravel(x_shape.value)[0]) if x_shape.value is not None else None
    return Spec(grad.dtype, TensorShape([rows]).concatenate(grad.shape[1:]))


def _pad_rows_grad_gradient(op, grad):
    rows = op.input_specs[0].shape[0] if op.input_specs[0].shape.rank else None
    if rows is not None:
        return [pad_rows(grad, rows), None]
    from autoloop.ops.array_ops import concat, shape
    from autoloop.ops.creation_ops import zeros
    missing = shape(op.inputs[0])[:1] - shape(grad)[:1]
    return [concat([grad, zeros(concat([missing, shape(grad)[1:]], 0), grad.dtype)], 0), None]


register(OpDef("PadRowsGrad", kernel=lambda grad, x_shape: np.asarray(grad)[:int(x_shape[0])],
               infer=_pad_rows_grad_infer, gradient=_pad_rows_grad_gradient, jvp=LINEAR,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:pad_rows_grad"}))


def pad_rows(tensor, rows: int | None, name=None) -> Tensor:
    """`tensor` with rows of zeros appended on axis 0 up to `rows` rows (an InvalidArgumentError if it has more);
    `rows` None: up to the rows the backend holds (none on numpy, a stack's capacity on XLA).

        >>> pad_rows(constant([[1, 2]]), 3).numpy()
        array([[1, 2],
               [0, 0],
               [0, 0]], dtype=int32)
    """
    from autoloop.ops.array_ops import shape
    tensor = convert(tensor)
    return apply("PadRows", [tensor, shape(tensor)], {"rows": static_int(rows, "PadRows", "rows") if rows is not None else None},
                 name=name)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None) -> Tensor:
    """`tensor` with ``paddings[i] = [before, after]`` elements added on each side of axis i.

    `mode` is ``"CONSTANT"`` (filled with `constant_values`), ``"REFLECT"``
    (mirrored without the edge element) or ``"SYMMETRIC"`` (mirrored with
    it), in any letter case.
    """
    tensor = convert(tensor)
    mode = str(mode).upper()
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', got {mode!r}")
    pairs = _static_paddings(paddings)
    fill = binary_inputs(tensor, constant_values)[1]
    return apply("Pad", [tensor, fill], {"paddings": pairs, "mode": mode}, name=name)


def _static_paddings(paddings) -> tuple:
    """`paddings` (a list of pairs or a known ``[rank, 2]`` integer tensor) as a tuple of int pairs."""
    if isinstance(paddings, Tensor):
        if paddings.shape.rank != 2:
            raise ValueError(f"pad: paddings must have shape [rank, 2], got {paddings.shape}")
        paddings = [paddings[i] for i in range(paddings.shape[0] or 0)]
    pairs = tuple(static_ints(pair, "Pad", "paddings") for pair in paddings)
    if any(len(pair) != 2 or min(pair) < 0 for pair in pairs):
        raise ValueError(f"pad: paddings must be [before, after] pairs of non-negative ints, got {paddings!r}")
    return pairs


# -- SplitV -------------------------------------------------------------------------------
def _split_sizes(dim, num, sizes):
    """The sizes of the pieces of an axis of size `dim` (None when unknown)."""
    if num is not None:
        if dim is None:
            return [None] * num
        if dim % num:
            raise ValueError(f"SplitV: an axis of size {dim} does not split into {num} equal pieces")
        return [dim // num] * num
    if -1 not in sizes:
        if dim is not None and sum(sizes) != dim:
            raise ValueError(f"SplitV: sizes {list(sizes)} add up to {sum(sizes)}, but the axis has size {dim}")
        return list(sizes)
    rest = None if dim is None else dim - (sum(sizes) + 1)
    if rest is not None and rest < 0:
        raise ValueError(f"SplitV: sizes {list(sizes)} add up to more than the axis size {dim}")
    return [rest if s == -1 else s for s in sizes]


def _split_infer(x, axis, num, sizes):
    infer.check_dtype("SplitV", x, infer.ALL)
    if x.shape.rank is None:
        return [Spec(x.dtype, TensorShape(None))] * (num or len(sizes))
    position = infer.normalize_axis("SplitV", axis, x.shape.rank)
    dims = list(x.shape)
    pieces = []
    for size in _split_sizes(dims[position], num, sizes):
        dims[position] = size
        pieces.append(Spec(x.dtype, TensorShape(dims)))
    return pieces


def _split_kernel(x, axis, num, sizes):
    dim = np.shape(x)[axis]
    try:
        lengths = _split_sizes(dim, num, sizes)
    except ValueError as error:
        raise InvalidArgumentError(str(error)) from None
    return tuple(np.split(x, np.cumsum(lengths)[:-1], axis=axis))


def _split_gradient(op, *grads):
    if not op.input_specs[0].dtype.is_floating:
        return [None]
    parts = [g if g is not None else zeros_for_output(op, j) for j, g in enumerate(grads)]
    return [apply("ConcatV2", parts, {"axis": op.attrs["axis"]}) if len(parts) > 1 else parts[0]]


register(OpDef("SplitV", kernel=_split_kernel, infer=_split_infer, gradient=_split_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:split"}))


def split(value, num_or_size_splits, axis=0, num=None, name=None) -> list:
    """`value` cut along `axis` into a list of tensors.

    `num_or_size_splits` is an int N (N equal pieces) or a list of sizes, one
    of which may be -1 (whatever is left).

        >>> [t.numpy() for t in split(constant([1, 2, 3, 4, 5]), [2, -1])]
        [array([1, 2], dtype=int32), array([3, 4, 5], dtype=int32)]
    """
    value = convert(value)
    axis = static_int(axis, "SplitV", "axis")
    if value.shape.rank is not None:
        axis = infer.normalize_axis("SplitV", axis, value.shape.rank)
    if isinstance(num_or_size_splits, int) or (isinstance(num_or_size_splits, Tensor)
                                               and num_or_size_splits.shape.rank == 0):
        count, sizes = static_int(num_or_size_splits, "SplitV", "num_or_size_splits"), ()
        if count < 1:
            raise ValueError(f"split: the number of pieces must be >= 1, got {count}")
    else:
        count, sizes = None, static_ints(num_or_size_splits, "SplitV", "num_or_size_splits")
        if not sizes or sum(1 for s in sizes if s == -1) > 1 or any(s < -1 for s in sizes):
            raise ValueError(f"split: sizes must be non-negative, with at most one -1, got {list(sizes)}")
    if num is not None and num != (count or len(sizes)):
        raise ValueError(f"split: num={num} does not match {num_or_size_splits!r}")
    return list(apply("SplitV", [value], {"axis": axis, "num": count, "sizes": sizes}, name=name))


# -- BroadcastTo ------------------------------------------------------------------------------
def _broadcast_to_infer(x, *shape_input, shape=None):
    infer.check_dtype("BroadcastTo", x, infer.ALL)
    if shape is None:
        (dims,) = shape_input
        infer.check_dtype("BroadcastTo", dims, infer.INTEGERS, 1)
        if dims.value is None:
            length = dims.shape[0] if dims.shape.rank == 1 else None
            return Spec(x.dtype, TensorShape(None if length is None else [None] * length))
        shape = tuple(int(d) for d in np.ravel(dims.value))
    target = TensorShape(list(shape))
    if x.shape.rank is not None:
        if x.shape.rank > len(shape):
            raise ValueError(f"BroadcastTo: cannot broadcast shape {x.shape} to the lower-rank {target}")
        for dim, wanted in zip(reversed(list(x.shape)), reversed(shape)):
            if dim is not None and dim not in (1, wanted):
                raise ValueError(f"BroadcastTo: cannot broadcast shape {x.shape} to {target}")
    return Spec(x.dtype, target)


def _broadcast_to_kernel(x, *shape_input, shape=None):
    if shape is None:
        shape = tuple(int(d) for d in np.ravel(shape_input[0]))
    return np.array(np.broadcast_to(x, shape))  # a copy: a broadcast view is read-only


def _broadcast_to_gradient(op, grad):
    rest = [None] * (len(op.input_specs) - 1)
    return [reduce_to_input(op, 0, grad) if op.input_specs[0].dtype.is_floating else None] + rest


register(OpDef("BroadcastTo", kernel=_broadcast_to_kernel, infer=_broadcast_to_infer, gradient=_broadcast_to_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:broadcast_to"}))


def broadcast_to(input, shape, name=None) -> Tensor:
    """`input` repeated along axes of size 1 (and new leading axes) to `shape`, numpy's rules.

        >>> broadcast_to(constant([1, 2]), [2, 2]).numpy()
        array([[1, 2],
               [1, 2]], dtype=int32)
    """
    input = convert(input)
    dims = shape_operand(shape, "broadcast_to")
    if isinstance(dims, tuple):
        return apply("BroadcastTo", [input], {"shape": dims}, name=name)
    return apply("BroadcastTo", [input, dims], name=name)
