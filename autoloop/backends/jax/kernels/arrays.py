"""JAX kernels of the array ops: slicing, shapes, joining, gathering and scattering, reordering, padding.

Shapes are static on XLA, so an op whose result shape comes from an input
(``reshape(x, n)``, ``fill(dims, v)``, ``range(a, b)``) needs that input
known while compiling (`static_value`); ``shape(x)`` and ``size(x)`` are
such values. An index the numpy kernel would reject (out of range) is
checked at run time with the numpy kernel's message (`replay`), unless
it is a loop counter whose range is in bounds (`autoloop.ir.trips.counter_range`).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from autoloop.ir.trips import counter_range
from autoloop.backends.jax.checks import replay
from autoloop.backends.jax.marks import checked, is_static, static_value, unsupported, with_node
from autoloop.errors import InvalidArgumentError
from autoloop.ops.array_ops import _index_of
from autoloop.ops.creation_ops import _range_length
from autoloop.ops.resize_ops import _PAD_MODES, _check_mirror_paddings, _split_sizes
from autoloop.ops.static_args import runtime_axes


def _ints(value) -> tuple:
    return tuple(int(d) for d in np.ravel(value))


# -- slicing -----------------------------------------------------------------------------------------------
def _index_checks(node) -> list:
    """``(input position, size of the axis)`` of each index that is a run-time value, out of range unless checked."""
    x = node.inputs[0]
    if x.shape.rank is None:
        return []
    spec = node.attrs["spec"]
    consumed = sum(1 for item in spec if item[0] in ("index", "slice"))
    checks, axis = [], 0
    for item in spec:
        kind = item[0]
        if kind == "ellipsis":
            axis += x.shape.rank - consumed
            consumed = x.shape.rank
        elif kind in ("index", "slice"):
            part = item[1]
            if kind == "index" and isinstance(part, tuple):
                size = x.shape[axis]
                value = node.inputs[part[1]]
                span = counter_range(value) if value.node.op == "Placeholder" else None
                if size is None or span is None or not (-size <= span[0] and span[1] < size):
                    checks.append((part[1], size))
            axis += 1
    return checks


def _slice_site(node):
    positions = range(1, len(node.inputs))
    return replay(*positions, when=lambda n: bool(_index_checks(n)))(node)


@checked(_slice_site)
def strided_slice(lowering, node, x, *dynamic, spec):
    for item in spec:
        if item[0] == "slice" and any(isinstance(p, tuple) and not is_static(dynamic[p[1] - 1]) for p in item[1:]):
            raise unsupported(node, "a slice whose bounds are computed when the graph runs (x[i:j]) has a length "
                                    "known only then, so it", (
                "XLA compiles arrays of static shape only. Slice with bounds known while tracing, mask instead "
                "(where(range(n) < j, x, 0)), or run on backend='numpy'"))
    checks = _index_checks(node)
    x = jnp.asarray(x)  # a numpy array cannot be indexed by a traced index
    if checks:
        failed = False
        for position, size in checks:
            index = dynamic[position - 1]
            failed = failed | (index < -size) | (index >= size)
        lowering.check(node, failed, dynamic)
    if dynamic and 0 in x.shape:
        # An index into an empty axis never runs, or fails its check: index zeros (XLA refuses the empty axis).
        x = jnp.zeros(tuple(max(d, 1) for d in x.shape), x.dtype)
    return x[_index_of(spec, (x, *dynamic))]


@with_node
def strided_slice_grad(lowering, node, grad, shape, *dynamic, spec):
    result = jnp.zeros(_static(node, shape, "the shape"), grad.dtype)
    return result.at[_index_of(spec, (result, *dynamic))].set(grad)


# -- shapes and sizes: static on XLA ----------------------------------------------------------------------
def shape(x, out_type):
    return np.array(np.shape(x), dtype=out_type.as_numpy_dtype)


def size(x, out_type):
    return np.array(np.size(x), dtype=out_type.as_numpy_dtype)[()]


def rank(x):
    return np.int32(np.ndim(x))


def _static(node, value, what):
    return _ints(static_value(node, value, what))


@with_node
def reshape(lowering, node, x, *shape_input, shape=None):
    if shape is None:
        shape = _static(node, shape_input[0], "the shape")
    return jnp.reshape(x, shape)


@with_node
def fill(lowering, node, dims, value):
    return jnp.full(_static(node, dims, "the shape"), value, dtype=jnp.asarray(value).dtype)


@with_node
def tile(lowering, node, x, *multiples_input, multiples=None):
    if multiples is None:
        multiples = _static(node, multiples_input[0], "the multiples")
        if len(multiples) != np.ndim(x):
            return lowering.fail_always(node, InvalidArgumentError(
                f"Tile: expected {np.ndim(x)} multiples for shape {np.shape(x)}, got {list(multiples)}"))[0]
    return jnp.tile(x, multiples)


@with_node
def broadcast_to(lowering, node, x, *shape_input, shape=None):
    if shape is None:
        shape = _static(node, shape_input[0], "the shape")
    return jnp.broadcast_to(x, shape)


@with_node
def range_(lowering, node, start, limit, delta):
    values = [static_value(node, v, what) for v, what in ((start, "start"), (limit, "limit"), (delta, "delta"))]
    try:
        length = _range_length(*values)
    except InvalidArgumentError as error:
        return lowering.fail_always(node, error)[0]
    dtype = np.asarray(values[0]).dtype
    return (jnp.arange(length, dtype=dtype) * values[2] + values[0]).astype(dtype)


def expand_dims(x, axis):
    return jnp.expand_dims(x, axis)


def squeeze(x, axis):
    return jnp.squeeze(x, runtime_axes(axis, np.ndim(x), "Squeeze"))


def transpose(x, perm):
    return jnp.transpose(x, perm)


def concat(*values, axis):
    return jnp.concatenate(values, axis=axis)


def pack(*values, axis):
    return jnp.stack(values, axis=axis)


@with_node
def unpack(lowering, node, x, num, axis):
    if x.shape[axis] != num:
        return lowering.fail_always(node, InvalidArgumentError(
            f"Unpack: asked for {num} tensors, but axis {axis} of shape {x.shape} has {x.shape[axis]}"))
    slices = tuple(jnp.moveaxis(x, axis, 0))
    return slices[0] if num == 1 else slices


def split(x, axis, num, sizes):
    lengths = _split_sizes(x.shape[axis], num, sizes)
    return tuple(jnp.split(x, np.cumsum(lengths)[:-1], axis=axis))


@with_node
def pad(lowering, node, x, constant_values, paddings, mode):
    try:
        _check_mirror_paddings(np.shape(x), paddings, mode, InvalidArgumentError)
    except InvalidArgumentError as error:
        return lowering.fail_always(node, error)[0]
    if mode == "CONSTANT":
        return jnp.pad(x, paddings, mode="constant", constant_values=constant_values)
    return jnp.pad(x, paddings, mode=_PAD_MODES[mode])


def pad_grad(grad, paddings, mode):
    for axis, (before, after) in enumerate(paddings):
        size = grad.shape[axis] - before - after
        moved = jnp.moveaxis(grad, axis, 0)
        result = moved[before:before + size]
        if mode != "CONSTANT" and size:
            skip = 1 if mode == "REFLECT" else 0  # REFLECT does not repeat the edge element
            for k in range(before):
                result = result.at[k + skip].add(moved[before - 1 - k])
            for k in range(after):
                result = result.at[size - 1 - skip - k].add(moved[before + size + k])
        grad = jnp.moveaxis(result, 0, axis)
    return grad


# -- gathering and scattering: indices checked as numpy checks them ------------------------------------
def _gather_failed(indices, limit):
    return jnp.any((indices < 0) | (indices >= limit))


@checked(replay(1))
def gather(lowering, node, params, indices, axis):
    lowering.check(node, _gather_failed(indices, params.shape[axis]), (indices,))
    return jnp.take(params, indices, axis=axis, mode="clip")


def _coordinates_failed(indices, dims):
    depth = indices.shape[-1]
    failed = False
    for axis in range(depth):
        column = indices[..., axis]
        failed = failed | jnp.any((column < 0) | (column >= dims[axis]))
    return failed


def _coordinates(indices):
    return tuple(jnp.moveaxis(indices, -1, 0))


@checked(replay(1))
def gather_nd(lowering, node, params, indices):
    lowering.check(node, _coordinates_failed(indices, params.shape), (indices,))
    return jnp.asarray(params)[_coordinates(indices)]


@checked(replay(0))
def scatter_nd(lowering, node, indices, updates, dims):
    dims = _static(node, dims, "the shape")
    lowering.check(node, _coordinates_failed(indices, dims), (indices,))
    return jnp.zeros(dims, updates.dtype).at[_coordinates(indices)].add(updates, mode="drop")


@checked(replay(1))
def tensor_scatter_update(lowering, node, tensor, indices, updates):
    lowering.check(node, _coordinates_failed(indices, tensor.shape), (indices,))
    return jnp.asarray(tensor).at[_coordinates(indices)].set(updates, mode="drop")


def one_hot(indices, on_value, off_value, depth, axis):
    position = indices.ndim if axis == -1 else axis % (indices.ndim + 1)
    classes = jnp.arange(depth).reshape([depth if i == position else 1 for i in range(indices.ndim + 1)])
    hot = jnp.expand_dims(indices, position) == classes
    return jnp.where(hot, on_value, off_value).astype(jnp.asarray(on_value).dtype)


@with_node
def where(lowering, node, condition):
    raise unsupported(node, "where(condition) with one argument gives one row per true element, so it", (
        "XLA compiles arrays of static shape only. Use where(condition, x, y), a mask, or run on "
        "backend='numpy'"))


# -- reordering ---------------------------------------------------------------------------------------------
def reverse(x, axis):
    return jnp.flip(x, axis)


def roll(x, shift, axis):
    if is_static(shift):
        return jnp.roll(x, _ints(shift), axis)
    return jnp.roll(x, jnp.ravel(shift), axis)


def _stable_order(values, axis, direction):
    if direction == "ASCENDING":
        return jnp.argsort(values, axis=axis, stable=True)
    backwards = jnp.argsort(jnp.flip(values, axis), axis=axis, stable=True)
    return values.shape[axis] - 1 - jnp.flip(backwards, axis)


def sort(values, axis, direction):
    return jnp.take_along_axis(values, _stable_order(values, axis, direction), axis=axis)


def argsort(values, axis, direction):
    return _stable_order(values, axis, direction).astype(jnp.int32)


def permute_along_axis(x, order, axis):
    return jnp.take_along_axis(x, order, axis)


def eye(num_rows, num_columns, batch_shape, dtype):
    matrix = jnp.eye(num_rows, num_columns, dtype=dtype.as_numpy_dtype)
    return jnp.broadcast_to(matrix, tuple(batch_shape) + matrix.shape)


def einsum(*operands, equation):
    return jnp.einsum(equation, *operands)


@with_node
def ensure_shape(lowering, node, x, shape):
    from autoloop.shapes import TensorShape
    if not TensorShape(np.shape(x)).is_compatible_with(shape):
        return lowering.fail_always(node, InvalidArgumentError(
            f"ensure_shape: the tensor's shape {TensorShape(np.shape(x))} is not compatible with the expected "
            f"shape {shape}"))[0]
    return x




def pad_rows(x, x_shape, rows):
    """`x` with zero rows appended up to `rows` (`autoloop.ops.resize_ops.pad_rows`; shapes are static here, so
    `x` holding more rows failed while tracing; `rows` None: `x`, rows as it has). A padded stack has its own rule
    (`padded`)."""
    if rows is None:
        return x
    return jnp.concatenate([x, jnp.zeros((rows - x.shape[0],) + x.shape[1:], x.dtype)])


@with_node
def pad_rows_grad(lowering, node, grad, x_shape):
    """The first rows of `grad`, as many as `x_shape` says: a slice where that is static, else the rows below it
    as a stack of run-time length (`padded.first_rows`)."""
    if is_static(x_shape):
        return grad[:int(np.ravel(x_shape)[0])]
    from autoloop.backends.jax.padded import first_rows
    return first_rows(grad, x_shape, node)
