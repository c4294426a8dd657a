"""What gradient rules share: undoing broadcasting, zeros and shapes of the forward values.

A rule (see `autoloop.ops.registry`) receives `op`, a view of the op it
differentiates. These helpers build on that view and on plain ops, so they
work eagerly and while tracing, and they use static shapes where tracing
knows them (then no shape is read at run time, and nothing is saved in a
loop):

    def _mul_gradient(op, grad):
        x, y = op.inputs[0], op.inputs[1]
        return [reduce_to_input(op, 0, grad * y), reduce_to_input(op, 1, grad * x)]

``SumToShape`` (``sum_to_shape(x, shape)``: `x` summed over the axes that
broadcasting added or stretched) is registered here: it is what undoing a
broadcast takes when shapes are known only at run time.
"""

from __future__ import annotations

import numpy as np

from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.shapes import TensorShape


# -- SumToShape -------------------------------------------------------------------------
def _sum_to_shape_kernel(x, shape):
    x = np.asarray(x)
    shape = tuple(int(d) for d in np.ravel(shape))
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + k for k, d in enumerate(shape) if d == 1 and x.shape[lead + k] != 1)
    if axes:
        x = x.sum(axis=axes, keepdims=True, dtype=x.dtype)
    return x.reshape(shape)


def _sum_to_shape_infer(x, shape):
    infer.check_dtype("SumToShape", x, infer.NUMERIC)
    infer.check_dtype("SumToShape", shape, infer.INTEGERS, 1)
    if shape.value is not None:
        return Spec(x.dtype, TensorShape([int(d) for d in np.ravel(shape.value)]))
    length = shape.shape[0] if shape.shape.rank == 1 else None
    return Spec(x.dtype, TensorShape(None if length is None else [None] * length))


def _sum_to_shape_gradient(op, grad):
    return [apply("BroadcastTo", [grad, op.input_shape(0)]), None]


register(OpDef("SumToShape", kernel=_sum_to_shape_kernel, infer=_sum_to_shape_infer,
               gradient=_sum_to_shape_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.reductions:sum_to_shape"}))


def sum_to_shape(x, shape):
    """`x` summed over the axes that broadcasting a tensor of `shape` (an int32 vector) to x's shape added."""
    return apply("SumToShape", [convert(x), convert(shape)])


# -- shapes and broadcasting --------------------------------------------------------------
def static_shape(spec) -> tuple | None:
    """The shape of a `Spec` as a tuple when fully known, else None."""
    return tuple(spec.shape.as_list()) if spec.shape.is_fully_defined() else None


def reduce_to(grad, spec, shape_tensor):
    """`grad` summed to the shape of a value described by `spec` (undoing broadcasting).

    `shape_tensor` is called for the value's shape when static shapes do not
    decide it.
    """
    target, found = static_shape(spec), static_shape(Spec(grad.dtype, grad.shape))
    if target is not None and found is not None:
        if target == found:
            return grad
        lead = len(found) - len(target)
        axes = tuple(range(lead)) + tuple(lead + k for k, d in enumerate(target) if d == 1 and found[lead + k] != 1)
        if axes:
            grad = apply("Sum", [grad], {"axis": axes, "keepdims": True})
        if grad.shape.as_list() != list(target):
            grad = apply("Reshape", [grad], {"shape": target})
        return grad
    return sum_to_shape(grad, shape_tensor())


def reduce_to_input(op, position: int, grad):
    """`grad` (the shape of the op's broadcast result) summed to input `position`'s shape."""
    return reduce_to(grad, op.input_specs[position], lambda: op.input_shape(position))


def zeros_for(spec, shape_tensor):
    """Zeros of the dtype and shape of a value described by `spec`."""
    shape = static_shape(spec)
    numpy_type = spec.dtype.as_numpy_dtype
    if shape is not None:
        return apply("Fill", [convert(np.array(shape, np.int32)), convert(numpy_type(0))])
    return apply("Fill", [shape_tensor(), convert(numpy_type(0))])


def zeros_for_output(op, position: int):
    """Zeros shaped like output `position` of the op (for an output no gradient reached)."""
    return zeros_for(op.output_specs[position], lambda: op.output_shape(position))


def zeros_for_input(op, position: int):
    return zeros_for(op.input_specs[position], lambda: op.input_shape(position))


def shape_int32(spec, shape_tensor):
    """The shape of a value as an int32 tensor: a constant when static, else `shape_tensor()`."""
    shape = static_shape(spec)
    if shape is not None:
        return convert(np.array(shape, np.int32))
    return shape_tensor()


def broadcast_to_input(op, position: int, grad):
    """`grad` broadcast to the shape of input `position`."""
    return _to_input_shape("BroadcastTo", op, position, grad)


def _to_input_shape(op_name: str, op, position: int, grad):
    """`grad` through `op_name` (Reshape or BroadcastTo) to input `position`'s shape, static when known."""
    shape = static_shape(op.input_specs[position])
    if shape is not None:
        if static_shape(Spec(grad.dtype, grad.shape)) == shape:
            return grad
        return apply(op_name, [grad], {"shape": shape})
    return apply(op_name, [grad, op.input_shape(position)])


def reduced_axes(op, position: int = 0) -> tuple:
    """The input axes a reduction op (``axis``, ``keepdims`` attrs) reduced, non-negative and sorted."""
    rank = op.input_specs[position].shape.rank
    if rank is None:
        raise NotImplementedError(f"the gradient of {op.op_name} needs an input of known rank")
    axis = op.attrs["axis"]
    return tuple(range(rank)) if axis is None else tuple(sorted({a % rank for a in axis}))


def unreduce(op, grad, position: int = 0):
    """The gradient of a reduction's result spread back over the reduced axes (the input's shape)."""
    if not op.attrs["keepdims"] and op.attrs["axis"] is not None:
        for axis in reduced_axes(op, position):
            grad = apply("ExpandDims", [grad], {"axis": axis})
    return broadcast_to_input(op, position, grad)  # a scalar (all axes reduced) broadcasts to any rank


def reduced_count(op, position: int = 0):
    """How many elements each result of a reduction summarizes, as a scalar of the input's dtype."""
    spec = op.input_specs[position]
    if op.attrs["axis"] is None and spec.shape.num_elements() is None:
        count = apply("Prod", [op.input_shape(position)], {"axis": None, "keepdims": False})
        return apply("Cast", [count], {"dtype": spec.dtype})
    axes = reduced_axes(op, position)
    dims = [spec.shape[a] for a in axes]
    if None not in dims:
        return convert(spec.dtype.as_numpy_dtype(np.prod(dims, dtype=np.int64)))
    shape = op.input_shape(position)
    sizes = apply("GatherV2", [shape, convert(np.array(axes, np.int32))], {"axis": 0})
    count = apply("Prod", [sizes], {"axis": None, "keepdims": False})
    return apply("Cast", [count], {"dtype": spec.dtype})


def row_shape(op, position: int):
    """The shape of one row (``shape[1:]``) of input `position`, as int32."""
    spec = op.input_specs[position]
    if spec.shape.rank is not None and spec.shape[1:].is_fully_defined():
        return convert(np.array(spec.shape[1:].as_list(), np.int32))
    return apply("StridedSlice", [op.input_shape(position)], {"spec": (("slice", 1, None, None),)})


def reshape_to_input(op, position: int, grad):
    """`grad` (as many elements as input `position`) in that input's shape."""
    return _to_input_shape("Reshape", op, position, grad)


def bilinear_jvp(op, tangent_a, tangent_b):
    """The forward rule of an op linear in each of its two inputs (``Mul``, ``MatMul``):
    ``op(ta, b) + op(a, tb)``, leaving out a part whose tangent is None (zero)."""
    parts = []
    if tangent_a is not None:
        parts.append(apply(op.op_name, [tangent_a, op.inputs[1]], dict(op.attrs)))
    if tangent_b is not None:
        parts.append(apply(op.op_name, [op.inputs[0], tangent_b], dict(op.attrs)))
    return parts[0] if len(parts) == 1 else apply("Add", parts)
