"""Ops that rearrange elements: stack, unstack, reshape, transpose, expand_dims, squeeze, tile.

Static arguments (axes, permutations, a shape given as a list) are node
attributes; ``reshape`` and ``tile`` also take a computed 1-D integer tensor,
which then becomes a second input.

    >>> reshape(constant([1, 2, 3, 4, 5, 6]), [2, -1]).shape
    TensorShape([2, 3])
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.errors import InvalidArgumentError
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, constant_value, convert
from autoloop.ops.math_ops import cast
from autoloop.ops.gradient_support import reshape_to_input, shape_int32, zeros_for_output
from autoloop.ops.registry import LINEAR, OpDef, Spec, register
from autoloop.ops.static_args import runtime_axes, static_axes, static_int, static_ints
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


def shape_operand(shape, op_name: str):
    """A shape argument as a tuple of ints when known, else a 1-D integer tensor.

    Takes an int, a list of ints and scalar integer tensors, a fully defined
    TensorShape or a 1-D (or scalar) integer tensor.
    """
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"{op_name}: the shape must be fully defined, got {shape}")
        return tuple(shape.as_list())
    if isinstance(shape, Tensor):
        if shape.dtype not in infer.INTEGERS:
            raise TypeError(f"{op_name}: a shape must be an integer tensor, got a {shape.dtype.name} "
                            f"tensor; use autoloop.cast(shape, autoloop.int32)")
        if shape.shape.rank is not None and shape.shape.rank > 1:
            raise ValueError(f"{op_name}: a shape must be a 1-D tensor, got one of shape {shape.shape}")
        if constant_value(shape) is not None:
            return static_ints(shape, op_name, "shape")
        return reshape(shape, [-1]) if shape.shape.rank != 1 else shape
    if isinstance(shape, list | tuple) and any(isinstance(d, Tensor) and constant_value(d) is None
                                               for d in shape):
        parts = [d if isinstance(d, Tensor) else convert(static_int(d, op_name, "shape")) for d in shape]
        for part in parts:
            if part.dtype not in infer.INTEGERS or part.shape.rank not in (0, None):
                raise TypeError(f"{op_name}: each entry of a shape list must be an int or a scalar integer "
                                f"tensor, got {part!r}")
        wide = dtypes.int64 if any(p.dtype is dtypes.int64 for p in parts) else dtypes.int32
        return stack([p if p.dtype is wide else cast(p, wide) for p in parts])
    return static_ints(shape, op_name, "shape")


# -- Pack / Unpack (stack / unstack) -------------------------------------------------
_FOLD_LIMIT = 64  # Pack of a few known scalars is folded, so shapes built with stack stay static


def _pack_infer(*values, axis):
    infer.check_same_dtype("Pack", *values)
    infer.check_dtype("Pack", values[0], infer.ALL)
    element = infer.merge_shapes("Pack", values)
    if element.rank is None:
        return Spec(values[0].dtype, TensorShape(None))
    axis = infer.normalize_axis("Pack", axis, element.rank, allow_end=True)
    dims = list(element)
    dims.insert(axis, len(values))
    folded = None
    if all(v.value is not None for v in values) and len(values) * (element.num_elements() or 0) <= _FOLD_LIMIT:
        folded = np.stack([np.asarray(v.value) for v in values], axis=axis)
    return Spec(values[0].dtype, TensorShape(dims), folded)


def _pack_gradient(op, grad):
    if not op.input_specs[0].dtype.is_floating:
        return [None] * len(op.input_specs)
    count = len(op.input_specs)
    parts = apply("Unpack", [grad], {"num": count, "axis": op.attrs["axis"]})
    return [parts] if count == 1 else list(parts)


register(OpDef("Pack", kernel=lambda *values, axis: np.stack(values, axis=axis), infer=_pack_infer,
               gradient=_pack_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:pack"}))


def stack(values, axis=0, name=None) -> Tensor:
    """The tensors `values` (one shape and dtype) joined along a new `axis`.

        >>> stack([constant([1, 2]), constant([3, 4])], axis=1).numpy()
        array([[1, 3], [2, 4]], dtype=int32)
    """
    if isinstance(values, Tensor):
        raise TypeError(f"stack takes a list of tensors, got the single tensor {values.name}; "
                        f"pass [tensor] to add a new axis of size 1")
    if hasattr(values, "__autoloop_tensor__"):  # a list appended to in graph control flow: its items
        stacked = values.__autoloop_tensor__()
        if axis == 0:
            return stacked
        rank = stacked.shape.rank
        perm = list(range(1, rank))
        perm.insert(axis % rank if axis < 0 else axis, 0)
        return transpose(stacked, perm)
    tensors = _same_dtype_tensors(values, "stack")
    if not tensors:
        raise ValueError("stack needs at least one tensor, got an empty list")
    return apply("Pack", tensors, {"axis": static_int(axis, "Pack", "axis")}, name=name or "stack")


def _same_dtype_tensors(values, op_name: str) -> list:
    """`values` as tensors; Python values take the dtype of the first tensor among them."""
    first = next((v for v in values if isinstance(v, Tensor)), None)
    if first is None:
        return [convert(v) for v in values]
    return [v if isinstance(v, Tensor) else convert(v, first.dtype) for v in values]


def _unpack_infer(x, num, axis):
    """One Spec per output; a lone output is a bare Spec, as a kernel with one
    output returns a bare value rather than a 1-tuple."""
    if x.shape.rank is None:
        return _outputs(Spec(x.dtype, TensorShape(None)), num)
    if x.shape.rank == 0:
        raise ValueError("Unpack: cannot unstack a scalar (rank 0) tensor")
    axis = infer.normalize_axis("Unpack", axis, x.shape.rank)
    dims = list(x.shape)
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Unpack: asked for {num} tensors, but axis {axis} of shape {x.shape} has "
                         f"{dims[axis]}")
    del dims[axis]
    return _outputs(Spec(x.dtype, TensorShape(dims)), num)


def _outputs(spec: Spec, num: int):
    return spec if num == 1 else [spec] * num


def _unpack_kernel(x, num, axis):
    x = np.asarray(x)
    if x.shape[axis] != num:
        raise InvalidArgumentError(f"Unpack: asked for {num} tensors, but axis {axis} of shape "
                                   f"{x.shape} has {x.shape[axis]}")
    slices = tuple(np.moveaxis(x, axis, 0))
    return slices[0] if num == 1 else slices


def _unpack_gradient(op, *grads):
    if not op.input_specs[0].dtype.is_floating:
        return [None]
    parts = [g if g is not None else zeros_for_output(op, j) for j, g in enumerate(grads)]
    return [apply("Pack", parts, {"axis": op.attrs["axis"]})]


register(OpDef("Unpack", kernel=_unpack_kernel, infer=_unpack_infer, gradient=_unpack_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:unpack"}))


def unstack(value, num=None, axis=0, name=None) -> list:
    """The slices of `value` along `axis`, as a list of `num` tensors.

    `num` defaults to the static size of that axis (ValueError when unknown).
    """
    value = convert(value)
    axis = static_int(axis, "Unpack", "axis")
    if num is None:
        rank = value.shape.rank
        if rank is not None and rank > 0:
            num = value.shape[infer.normalize_axis("Unpack", axis, rank)]
        if num is None:
            raise ValueError(f"unstack: cannot infer the number of tensors from the shape {value.shape} "
                             f"along axis {axis}; pass num=")
    num = static_int(num, "Unpack", "num")
    outputs = apply("Unpack", [value], {"num": num, "axis": axis}, name=name)
    return [outputs] if num == 1 else list(outputs)


# -- Reshape -----------------------------------------------------------------------
def _reshape_dims(op_name: str, x_shape: TensorShape, requested) -> TensorShape:
    """The output shape of reshaping `x_shape` to `requested` (ints, one may be -1)."""
    if sum(1 for d in requested if d == -1) > 1:
        raise ValueError(f"{op_name}: at most one dimension may be -1, got {list(requested)}")
    if any(d < -1 for d in requested):
        raise ValueError(f"{op_name}: dimensions must be >= -1, got {list(requested)}")
    known = int(np.prod([d for d in requested if d != -1], dtype=np.int64))
    total = x_shape.num_elements()
    if -1 not in requested:
        if total is not None and total != known:
            raise ValueError(f"{op_name}: cannot reshape a tensor of shape {x_shape} ({total} elements) "
                             f"to {list(requested)} ({known} elements); the number of elements must match")
        return TensorShape(requested)
    if total is None:
        return TensorShape([None if d == -1 else d for d in requested])
    if known == 0 or total % known:
        raise ValueError(f"{op_name}: cannot reshape a tensor of shape {x_shape} ({total} elements) "
                         f"to {list(requested)}: {total} is not a multiple of {known}")
    return TensorShape([total // known if d == -1 else d for d in requested])


def _reshape_infer(x, *shape_input, shape=None):
    infer.check_dtype("Reshape", x, infer.ALL)
    if shape is not None:
        return Spec(x.dtype, _reshape_dims("Reshape", x.shape, shape))
    (dims,) = shape_input
    infer.check_dtype("Reshape", dims, infer.INTEGERS, 1)
    if dims.value is not None:
        return Spec(x.dtype, _reshape_dims("Reshape", x.shape, [int(d) for d in dims.value]))
    if dims.shape.rank != 1 or dims.shape[0] is None:
        return Spec(x.dtype, TensorShape(None))
    return Spec(x.dtype, TensorShape([None] * dims.shape[0]))


def _reshape_kernel(x, *shape_input, shape=None):
    return np.reshape(x, shape if shape is not None else tuple(int(d) for d in shape_input[0]))


def _reshape_expr(attrs):
    if attrs.get("shape") is None:
        return "{0}.reshape({1})"
    return "{0}.reshape(%r)" % (attrs["shape"],)


def _same_elements_gradient(op, grad):
    """Reshape, ExpandDims, Squeeze: the gradient has the input's elements, in the input's shape."""
    rest = [None] * (len(op.input_specs) - 1)
    return [reshape_to_input(op, 0, grad) if op.input_specs[0].dtype.is_floating else None] + rest


register(OpDef("Reshape", kernel=_reshape_kernel, infer=_reshape_infer, expr=_reshape_expr,
               gradient=_same_elements_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:reshape"}))


def reshape(tensor, shape, name=None) -> Tensor:
    """`tensor`'s elements in row-major order, arranged as `shape`.

    `shape` is a list (one entry may be -1: whatever is left) or a 1-D
    integer tensor.
    """
    tensor = convert(tensor)
    dims = shape_operand(shape, "reshape")
    if isinstance(dims, tuple):
        return apply("Reshape", [tensor], {"shape": dims}, name=name)
    return apply("Reshape", [tensor, dims], name=name)


# -- Transpose -----------------------------------------------------------------------
def _transpose_infer(x, perm):
    if x.shape.rank is None:
        return Spec(x.dtype, TensorShape(None if perm is None else [None] * len(perm)))
    dims = list(x.shape)
    if perm is None:
        return Spec(x.dtype, TensorShape(dims[::-1]))
    if sorted(perm) != list(range(len(dims))):
        raise ValueError(f"Transpose: perm must be a permutation of 0..{len(dims) - 1} for a tensor of "
                         f"shape {x.shape}, got {list(perm)}")
    return Spec(x.dtype, TensorShape([dims[p] for p in perm]))


def _transpose_expr(attrs):
    return "{0}.transpose()" if attrs["perm"] is None else "{0}.transpose(%r)" % (attrs["perm"],)


def _transpose_gradient(op, grad):
    perm = op.attrs["perm"]
    inverse = None if perm is None else tuple(int(p) for p in np.argsort(perm))
    return [apply("Transpose", [grad], {"perm": inverse}) if op.input_specs[0].dtype.is_floating else None]


register(OpDef("Transpose", kernel=lambda x, perm: np.transpose(x, perm), infer=_transpose_infer,
               expr=_transpose_expr, gradient=_transpose_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:transpose"}))


def transpose(a, perm=None, name=None) -> Tensor:
    """`a` with its axes permuted: output axis i is input axis ``perm[i]``.

    `perm` defaults to reversing the axes (a matrix transpose for rank 2).
    """
    a = convert(a)
    if perm is not None:
        perm = tuple(p % a.shape.rank if a.shape.rank and p < 0 else p
                     for p in static_ints(perm, "Transpose", "perm"))
    return apply("Transpose", [a], {"perm": perm}, name=name or "transpose")


# -- ExpandDims / Squeeze ----------------------------------------------------------------
def _expand_dims_infer(x, axis):
    if x.shape.rank is None:
        return Spec(x.dtype, TensorShape(None))
    position = infer.normalize_axis("ExpandDims", axis, x.shape.rank, allow_end=True)
    dims = list(x.shape)
    dims.insert(position, 1)
    return Spec(x.dtype, TensorShape(dims))


def _expand_dims_expr(attrs):
    axis = attrs["axis"]
    if axis >= 0:
        return "{0}[" + ":, " * axis + "None]"
    return "{0}[..., None" + ", :" * (-axis - 1) + "]"


register(OpDef("ExpandDims", kernel=lambda x, axis: np.expand_dims(x, axis), infer=_expand_dims_infer,
               expr=_expand_dims_expr, gradient=_same_elements_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:expand_dims"}))


def expand_dims(input, axis, name=None) -> Tensor:
    """`input` with a new axis of size 1 inserted at `axis` (-1: at the end)."""
    input = convert(input)
    axis = static_int(axis, "ExpandDims", "axis")
    if input.shape.rank is not None:
        axis = infer.normalize_axis("ExpandDims", axis, input.shape.rank, allow_end=True)
    return apply("ExpandDims", [input], {"axis": axis}, name=name)


def _squeeze_infer(x, axis):
    if x.shape.rank is None:
        return Spec(x.dtype, TensorShape(None))
    dims = list(x.shape)
    if axis is None:
        if None in dims:
            return Spec(x.dtype, TensorShape(None))
        return Spec(x.dtype, TensorShape([d for d in dims if d != 1]))
    for item in axis:
        if dims[item] is not None and dims[item] != 1:
            raise ValueError(f"Squeeze: cannot squeeze axis {item} of shape {x.shape}: its size is "
                             f"{dims[item]}, expected 1")
    return Spec(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in axis]))


def _squeeze_expr(attrs):
    axis = attrs["axis"]
    if axis is None:
        return "{0}.squeeze()"
    return None if any(item < 0 for item in axis) else "{0}.squeeze(%r)" % (axis,)


def _squeeze_kernel(x, axis):
    return np.squeeze(x, runtime_axes(axis, np.ndim(x), "Squeeze"))


register(OpDef("Squeeze", kernel=_squeeze_kernel, infer=_squeeze_infer, expr=_squeeze_expr,
               gradient=_same_elements_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:squeeze"}))


def squeeze(input, axis=None, name=None) -> Tensor:
    """`input` without the axes of size 1 (only those in `axis`, when given)."""
    input = convert(input)
    axis = static_axes(axis, input.shape.rank, "Squeeze")
    return apply("Squeeze", [input], {"axis": axis}, name=name)


# -- Tile ------------------------------------------------------------------------------
def _tile_infer(x, *multiples_input, multiples=None):
    infer.check_dtype("Tile", x, infer.ALL)
    if multiples is None:
        (dynamic,) = multiples_input
        infer.check_dtype("Tile", dynamic, infer.INTEGERS, 1)
        if dynamic.value is not None:
            multiples = tuple(int(m) for m in dynamic.value)
        elif x.shape.rank is not None:
            return Spec(x.dtype, TensorShape([None] * x.shape.rank))
        else:
            return Spec(x.dtype, TensorShape(None))
    if any(m < 0 for m in multiples):
        raise ValueError(f"Tile: multiples must be >= 0, got {list(multiples)}")
    if x.shape.rank is None:
        return Spec(x.dtype, TensorShape([None] * len(multiples)))
    if len(multiples) != x.shape.rank:
        raise ValueError(f"Tile: expected one multiple per axis of the input ({x.shape.rank} for shape "
                         f"{x.shape}), got {len(multiples)}: {list(multiples)}")
    return Spec(x.dtype, TensorShape([None if d is None else d * m for d, m in zip(x.shape, multiples)]))


def _tile_kernel(x, *multiples_input, multiples=None):
    if multiples is None:
        multiples = tuple(int(m) for m in multiples_input[0])
        if len(multiples) != np.ndim(x):
            raise InvalidArgumentError(f"Tile: expected {np.ndim(x)} multiples for shape {np.shape(x)}, "
                                       f"got {list(multiples)}")
    return np.tile(x, multiples)


def _tile_gradient(op, grad):
    """The copies' gradients summed: the gradient seen as ``[m0, d0, m1, d1, ...]``, summed over the m axes."""
    spec = op.input_specs[0]
    rest = [None] * (len(op.input_specs) - 1)
    if not spec.dtype.is_floating:
        return [None] + rest
    rank = spec.shape.rank
    if rank is None:
        raise NotImplementedError("the gradient of tile needs an input of known rank")
    multiples = op.attrs.get("multiples")
    multiples = convert(np.array(multiples, np.int32)) if multiples is not None else \
        apply("Cast", [op.inputs[1]], {"dtype": dtypes.int32})
    shape = shape_int32(spec, lambda: op.input_shape(0))
    pairs = apply("Reshape", [apply("Pack", [multiples, shape], {"axis": 1})], {"shape": (-1,)})
    split = apply("Reshape", [grad, pairs])
    total = apply("Sum", [split], {"axis": tuple(range(0, 2 * rank, 2)), "keepdims": False})
    return [reshape_to_input(op, 0, total)] + rest


register(OpDef("Tile", kernel=_tile_kernel, infer=_tile_infer, gradient=_tile_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:tile"}))


def tile(input, multiples, name=None) -> Tensor:
    """`input` repeated ``multiples[i]`` times along each axis i."""
    input = convert(input)
    multiples = shape_operand(multiples, "tile")
    if isinstance(multiples, tuple):
        return apply("Tile", [input], {"multiples": multiples}, name=name)
    return apply("Tile", [input, multiples], name=name)
