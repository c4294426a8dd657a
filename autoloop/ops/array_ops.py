"""Array ops: slicing, shape, concat (more array ops live beside this one).

Slicing follows numpy basic indexing: ints, slices, ``...`` and ``None``;
indices and slice bounds may be scalar integer tensors.
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, constant_value, convert
from autoloop.ops.gradient_support import shape_int32
from autoloop.ops.registry import LINEAR, NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor

# -- slicing -------------------------------------------------------------------
newaxis = None  # x[:, newaxis] adds an axis of size 1, as in numpy

# A slice spec is a tuple of items: ("index", part), ("slice", start, stop, step),
# ("ellipsis",) or ("newaxis",). A part is an int, None, or ("input", k): the
# k-th dynamic input after the sliced tensor.


def _spec_item(item, dynamic: list):
    def part(value):
        if value is None or isinstance(value, int | np.integer):
            return None if value is None else int(value)
        tensor = convert(value)
        if tensor.dtype not in infer.INTEGERS or tensor.shape.rank != 0:
            raise TypeError(f"slice indices must be integers or scalar integer tensors, got {tensor!r}")
        known = constant_value(tensor)
        if known is not None:
            return int(known)
        dynamic.append(tensor)
        return ("input", len(dynamic))

    if item is Ellipsis:
        return ("ellipsis",)
    if item is None:
        return ("newaxis",)
    if isinstance(item, slice):
        return ("slice", part(item.start), part(item.stop), part(item.step))
    if isinstance(item, bool):
        raise TypeError("boolean indexing of tensors is not supported; use autoloop.where")
    if isinstance(item, int | np.integer | Tensor):
        return ("index", part(item))
    raise TypeError(f"unsupported index {item!r}: use ints, slices, ..., None or scalar int tensors")


def slice_tensor(x, key) -> Tensor:
    """``x[key]`` with numpy basic-indexing semantics."""
    x = convert(x)
    key = key if isinstance(key, tuple) else (key,)
    dynamic: list = []
    spec = tuple(_spec_item(item, dynamic) for item in key)
    return apply("StridedSlice", [x, *dynamic], {"spec": spec})


def _index_of(spec, inputs):
    def part(value):
        return inputs[value[1]] if isinstance(value, tuple) else value

    index = []
    for item in spec:
        kind = item[0]
        if kind == "index":
            index.append(part(item[1]))
        elif kind == "slice":
            index.append(slice(part(item[1]), part(item[2]), part(item[3])))
        elif kind == "ellipsis":
            index.append(Ellipsis)
        else:
            index.append(None)
    return tuple(index)


def _slice_kernel(x, *dynamic, spec):
    return x[_index_of(spec, (x, *dynamic))]


def _slice_expr(attrs):
    def part(value):
        if isinstance(value, tuple):
            return "{%d}" % value[1]
        return "" if value is None else repr(value)

    items = []
    for item in attrs["spec"]:
        kind = item[0]
        if kind == "index":
            items.append(part(item[1]))
        elif kind == "slice":
            text = f"{part(item[1])}:{part(item[2])}"
            items.append(text + (f":{part(item[3])}" if item[3] is not None else ""))
        elif kind == "ellipsis":
            items.append("...")
        else:
            items.append("None")
    if not items:
        return "{0}[()]"
    return "{0}[" + ", ".join(items) + "]"  # x[i] indexes exactly as x[(i,)]


def _slice_infer(x, *dynamic, spec):
    for position, d in enumerate(dynamic, start=1):
        infer.check_dtype("StridedSlice", d, infer.INTEGERS, position)
    if x.shape.rank is None:
        return Spec(x.dtype, TensorShape(None))
    dims = list(x.shape)
    consumed = sum(1 for item in spec if item[0] in ("index", "slice"))
    if consumed > len(dims):
        raise ValueError(f"too many indices ({consumed}) for a tensor of shape {x.shape}")
    out, axis = [], 0
    for item in spec:
        kind = item[0]
        if kind == "ellipsis":
            skip = len(dims) - consumed
            out.extend(dims[axis:axis + skip])
            axis += skip
            consumed = len(dims)  # a second ellipsis expands to nothing
        elif kind == "newaxis":
            out.append(1)
        elif kind == "index":
            dim, index = dims[axis], item[1]
            if dim is not None and isinstance(index, int) and not -dim <= index < dim:
                raise ValueError(f"index {index} is out of bounds for axis {axis} with size {dim} "
                                 f"(tensor of shape {x.shape})")
            axis += 1
        else:
            start, stop, step = item[1:]
            if step == 0:
                raise ValueError("slice step cannot be zero")
            known = all(not isinstance(p, tuple) for p in (start, stop, step))
            dim = dims[axis]
            out.append(len(range(*slice(start, stop, step).indices(dim))) if known and dim is not None else None)
            axis += 1
    out.extend(dims[axis:])
    return Spec(x.dtype, TensorShape(out))


def _slice_gradient(op, grad):
    """The gradient lands where the slice came from; zeros elsewhere."""
    if not op.input_specs[0].dtype.is_floating:
        return [None] * len(op.input_specs)
    shape = shape_int32(op.input_specs[0], lambda: op.input_shape(0))
    dynamic = [op.inputs[k] for k in range(1, len(op.input_specs))]
    return [apply("StridedSliceGrad", [grad, shape, *dynamic], op.attrs)] + [None] * len(dynamic)


register(OpDef("StridedSlice", kernel=_slice_kernel, infer=_slice_infer, expr=_slice_expr, gradient=_slice_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:strided_slice"}))


# -- StridedSliceGrad: a slice's gradient, the slice written into zeros (what the slice's rule makes) --
def _slice_grad_kernel(grad, shape, *dynamic, spec):
    grad = np.asarray(grad)
    result = np.zeros(tuple(int(d) for d in np.ravel(shape)), grad.dtype)
    result[_index_of(spec, (result, *dynamic))] = grad
    return result


def _slice_grad_infer(grad, shape, *dynamic, spec):
    if shape.value is not None:
        return Spec(grad.dtype, TensorShape([int(d) for d in np.ravel(shape.value)]))
    return Spec(grad.dtype, TensorShape(None if shape.shape.rank != 1 or shape.shape[0] is None
                                        else [None] * shape.shape[0]))


def _slice_grad_gradient(op, grad):
    dynamic = [op.inputs[k] for k in range(2, len(op.input_specs))]
    return [apply("StridedSlice", [grad, *dynamic], op.attrs), None] + [None] * len(dynamic)


register(OpDef("StridedSliceGrad", kernel=_slice_grad_kernel, infer=_slice_grad_infer, gradient=_slice_grad_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:strided_slice_grad"}))


# -- shape ---------------------------------------------------------------------
def _shape_infer(x, out_type):
    rank = x.shape.rank
    value = np.array(x.shape.as_list(), dtype=out_type.as_numpy_dtype) if x.shape.is_fully_defined() else None
    return Spec(out_type, TensorShape([rank]), value)


register(OpDef("Shape", kernel=lambda x, out_type: np.array(np.shape(x), dtype=out_type.as_numpy_dtype),
               infer=_shape_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:shape"}))


def shape(x, out_type=dtypes.int32, name=None) -> Tensor:
    """The shape of `x` as a 1-D integer tensor."""
    return apply("Shape", [convert(x)], {"out_type": dtypes.as_dtype(out_type)}, name=name)


# -- concat --------------------------------------------------------------------
def _concat_infer(*values, axis):
    infer.check_same_dtype("ConcatV2", *values)
    known = [v.shape for v in values if v.shape.rank is not None]
    if not known:
        return Spec(values[0].dtype, TensorShape(None))
    rank = known[0].rank
    if any(s.rank != rank for s in known):
        raise ValueError(f"ConcatV2: all inputs must have the same rank, got shapes "
                         f"{', '.join(str(v.shape) for v in values)}")
    if rank == 0:
        raise ValueError("ConcatV2 cannot concatenate scalars; use autoloop.stack")
    axis = infer.normalize_axis("ConcatV2", axis, rank)
    dims = []
    for i in range(rank):
        column = [s[i] for s in known]
        if i == axis:
            total = None if len(known) < len(values) or None in column else sum(column)
            dims.append(total)
            continue
        merged = None
        for dim in column:
            if dim is not None and merged is not None and dim != merged:
                raise ValueError(f"ConcatV2: dimension {i} of the inputs differ ({merged} vs {dim}); "
                                 f"shapes {', '.join(str(v.shape) for v in values)}")
            merged = dim if dim is not None else merged
        dims.append(merged)
    return Spec(values[0].dtype, TensorShape(dims))


def _concat_gradient(op, grad):
    """Each input's part of the gradient, cut out along the axis."""
    if not op.input_specs[0].dtype.is_floating:
        return [None] * len(op.input_specs)
    rank = grad.shape.rank if grad.shape.rank is not None else op.input_specs[0].shape.rank
    if rank is None:
        raise NotImplementedError("the gradient of concat needs inputs of known rank")
    axis = op.attrs["axis"] % rank
    sizes = [spec.shape[axis] for spec in op.input_specs]
    grads, start = [], 0
    for position, size in enumerate(sizes):
        if size is None:
            size = op.input_shape(position)[axis]
        stop = start + size
        spec = tuple([("slice", None, None, None)] * axis)
        if isinstance(start, int) and isinstance(stop, int):
            grads.append(apply("StridedSlice", [grad], {"spec": spec + (("slice", start, stop, None),)}))
        else:
            bounds = [convert(np.int32(b)) if isinstance(b, int) else b for b in (start, stop)]
            grads.append(apply("StridedSlice", [grad, *bounds],
                               {"spec": spec + (("slice", ("input", 1), ("input", 2), None),)}))
        start = stop
    return grads


def _concat_expr(attrs):
    """``np.concatenate((a, b), axis=0)``: a kernel call through ``functools.partial`` costs 0.2 µs more."""
    return "np.concatenate(({*},), axis=%d)" % attrs["axis"]


register(OpDef("ConcatV2", kernel=lambda *values, axis: np.concatenate(values, axis=axis),
               infer=_concat_infer, expr=_concat_expr, gradient=_concat_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.kernels.arrays:concat"}))


def concat(values, axis, name=None) -> Tensor:
    """`values` joined along an existing `axis`."""
    tensors = [convert(v) for v in values]
    if not tensors:
        raise ValueError("concat needs at least one tensor")
    if len(tensors) == 1:
        from autoloop.ops.math_ops import identity
        return identity(tensors[0])
    return apply("ConcatV2", tensors, {"axis": _static_int(axis, "axis")}, name=name or "concat")


def _static_int(value, what: str) -> int:
    known = constant_value(value) if isinstance(value, Tensor) else value
    if known is None:
        raise TypeError(f"{what} must be known while tracing (a Python int or constant tensor)")
    return int(known)
