"""Reductions over axes (sum, mean, max, ...) and argmax/argmin.

A reduction keeps its input's dtype, as in TensorFlow: the sum of int32
values is int32 (it wraps around on overflow), the mean of integers is the
integer mean rounded toward zero, and the max of nothing is the dtype's
lowest value.

    >>> reduce_mean(constant([1, 2])).numpy()
    np.int32(1)
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from autoloop import dtypes
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.gradient_support import reduced_axes, reduced_count, unreduce
from autoloop.ops.registry import LINEAR, NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.ops.static_args import runtime_axes, static_axes, static_int
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


def _reduce_infer(op_name, allowed):
    def rule(x, axis, keepdims):
        infer.check_dtype(op_name, x, allowed)
        if x.shape.rank is None:
            return Spec(x.dtype, TensorShape(None))
        dims = list(x.shape)
        for item in axis if axis is not None else ():
            if not -len(dims) <= item < len(dims):
                raise ValueError(f"{op_name}: axis {item} is out of range for a tensor of rank {len(dims)}")
        reduced = range(len(dims)) if axis is None else {item % len(dims) for item in axis}
        if keepdims:
            return Spec(x.dtype, TensorShape([1 if i in reduced else d for i, d in enumerate(dims)]))
        return Spec(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in reduced]))
    return rule


def _accumulate_kernel(op_name, reduce):
    """A kernel for sum/prod that accumulates in the input's dtype."""
    def kernel(x, axis, keepdims):
        axis = runtime_axes(axis, np.ndim(x), op_name)
        return reduce(x, axis=axis, dtype=np.asarray(x).dtype, keepdims=keepdims)
    return kernel


def _method_expr(method, with_dtype):
    """``x.sum(...)``-style expression; None (call the kernel) for axes that need normalizing."""
    def expr(attrs):
        axis = attrs["axis"]
        if axis is not None and any(item < 0 for item in axis):
            return None
        dtype = "dtype={0}.dtype, " if with_dtype else ""
        return "{0}.%s(axis=%r, %skeepdims=%r)" % (method, axis, dtype, attrs["keepdims"])
    return expr


def _extreme_kernel(op_name, reduce, identity_of):
    """A kernel for max/min whose result over no elements is `identity_of(dtype)`."""
    def kernel(x, axis, keepdims):
        axis = runtime_axes(axis, np.ndim(x), op_name)
        return reduce(x, axis=axis, keepdims=keepdims, initial=identity_of(np.asarray(x).dtype))
    return kernel


def _logical_kernel(op_name, reduce):
    def kernel(x, axis, keepdims):
        return reduce(x, axis=runtime_axes(axis, np.ndim(x), op_name), keepdims=keepdims)
    return kernel


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _mean_kernel(x, axis, keepdims):
    x = np.asarray(x)
    axis = runtime_axes(axis, x.ndim, "Mean")
    if x.dtype.kind == "f":
        if x.size == 0:
            return np.full(np.sum(x, axis=axis, keepdims=keepdims).shape, np.nan, dtype=x.dtype)[()]
        return np.mean(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    total = np.sum(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    count = x.size // max(np.size(total), 1) if x.size else 0
    if count == 0:
        return np.zeros_like(total)
    # Integer division rounding toward zero, as TensorFlow's integer mean does.
    return (np.sign(total) * (np.abs(total) // x.dtype.type(count))).astype(x.dtype, copy=False)


_REDUCTIONS = {
    # op name: (kernel, allowed dtypes, expr)
    "Sum": (_accumulate_kernel("Sum", np.sum), infer.NUMERIC, _method_expr("sum", with_dtype=True)),
    "Prod": (_accumulate_kernel("Prod", np.prod), infer.NUMERIC, _method_expr("prod", with_dtype=True)),
    "Mean": (_mean_kernel, infer.NUMERIC, None),
    "Max": (_extreme_kernel("Max", np.max, _lowest), infer.NUMERIC, None),
    "Min": (_extreme_kernel("Min", np.min, _highest), infer.NUMERIC, None),
    "Any": (_logical_kernel("Any", np.any), (dtypes.bool_,), _method_expr("any", with_dtype=False)),
    "All": (_logical_kernel("All", np.all), (dtypes.bool_,), _method_expr("all", with_dtype=False)),
}
# -- gradients: the result's gradient spread back over the reduced axes ----------------------
def _sum_gradient(op, grad):
    return [unreduce(op, grad)]


def _mean_gradient(op, grad):
    return [unreduce(op, grad) / reduced_count(op)]


def _extreme_gradient(op, grad):
    """Max/Min: the gradient goes to the elements equal to the result, shared equally by ties."""
    x = op.inputs[0]
    chosen = apply("Cast", [apply("Equal", [x, unreduce(op, op.outputs[0])])], {"dtype": x.dtype})
    ties = unreduce(op, apply("Sum", [chosen], {"axis": op.attrs["axis"], "keepdims": op.attrs["keepdims"]}))
    return [chosen * unreduce(op, grad) / ties]


def _prod_gradient(op, grad):
    """The product of all the other elements of each reduced group, without dividing (zeros are fine):
    the reduced axes are flattened into the last one, and exclusive running products from both ends
    multiplied."""
    x = op.inputs[0]
    rank = op.input_specs[0].shape.rank
    axes = reduced_axes(op)
    kept = [a for a in range(rank) if a not in axes]
    moved = apply("Transpose", [x], {"perm": tuple(kept + list(axes))})
    if op.input_specs[0].shape.is_fully_defined():
        dims = op.input_specs[0].shape.as_list()
        flat_shape = tuple(dims[a] for a in kept) + (int(np.prod([dims[a] for a in axes], dtype=np.int64)),)
        flat = apply("Reshape", [moved], {"shape": flat_shape})
    else:
        moved_shape = apply("Shape", [moved], {"out_type": dtypes.int32})
        head = moved_shape[:len(kept)]
        rest = apply("Prod", [moved_shape[len(kept):]], {"axis": None, "keepdims": True})
        flat = apply("Reshape", [moved, apply("ConcatV2", [head, rest], {"axis": 0})])
    last = len(kept)
    before = apply("Cumprod", [flat], {"axis": last, "exclusive": True, "reverse": False})
    after = apply("Cumprod", [flat], {"axis": last, "exclusive": True, "reverse": True})
    others = apply("Reshape", [before * after, apply("Shape", [moved], {"out_type": dtypes.int32})])
    inverse = tuple(int(p) for p in np.argsort(kept + list(axes)))
    others = apply("Transpose", [others], {"perm": inverse})
    return [others * unreduce(op, grad)]


_GRADIENTS = {"Sum": _sum_gradient, "Mean": _mean_gradient, "Max": _extreme_gradient,
              "Min": _extreme_gradient, "Prod": _prod_gradient, "Any": NOT_DIFFERENTIABLE,
              "All": NOT_DIFFERENTIABLE}


def _float_only(rule):
    """Integer reductions give integer results: no gradient."""
    if rule is NOT_DIFFERENTIABLE:
        return rule

    def checked(op, grad):
        return rule(op, grad) if op.input_specs[0].dtype.is_floating else [None]
    return checked


_JAX_KERNELS = {"Sum": "total", "Prod": "product", "Mean": "mean", "Max": "largest", "Min": "smallest",
                "Any": "any_", "All": "all_"}
for _name, (_kernel, _allowed, _expr) in _REDUCTIONS.items():
    register(OpDef(_name, kernel=_kernel, infer=_reduce_infer(_name, _allowed), expr=_expr,
                   gradient=_float_only(_GRADIENTS[_name]), jvp=LINEAR if _name in ("Sum", "Mean") else None,
                   kernels={"jax": f"autoloop.backends.jax.kernels.reductions:{_JAX_KERNELS[_name]}"}))


def _reduction(op_name, public_name, what) -> Callable[..., Tensor]:
    def fn(input_tensor, axis=None, keepdims=False, name=None):
        x = convert(input_tensor)
        axes = static_axes(axis, x.shape.rank, op_name)
        return apply(op_name, [x], {"axis": axes, "keepdims": bool(keepdims)}, name=name)
    fn.__name__ = public_name
    fn.__doc__ = (f"The {what} of `input_tensor`'s elements over `axis` (None: all axes; an int or a "
                  f"list), keeping reduced axes as size 1 with `keepdims`. The dtype is the input's.")
    return fn


reduce_sum = _reduction("Sum", "reduce_sum", "sum")
reduce_prod = _reduction("Prod", "reduce_prod", "product")
reduce_mean = _reduction("Mean", "reduce_mean", "mean (rounded toward zero for integers)")
reduce_max = _reduction("Max", "reduce_max", "maximum")
reduce_min = _reduction("Min", "reduce_min", "minimum")
reduce_any = _reduction("Any", "reduce_any", "logical or")
reduce_all = _reduction("All", "reduce_all", "logical and")


# -- ArgMax / ArgMin -----------------------------------------------------------------
def _arg_infer(op_name):
    def rule(x, axis, output_type):
        infer.check_dtype(op_name, x, infer.NUMERIC)
        if x.shape.rank is None:
            return Spec(output_type, TensorShape(None))
        if x.shape.rank == 0:
            raise ValueError(f"{op_name} needs a tensor of rank >= 1, got a scalar")
        position = infer.normalize_axis(op_name, axis, x.shape.rank)
        dims = list(x.shape)
        if dims[position] == 0:
            raise ValueError(f"{op_name}: axis {axis} of shape {x.shape} is empty; there is no "
                             f"{'largest' if op_name == 'ArgMax' else 'smallest'} element to point at")
        del dims[position]
        return Spec(output_type, TensorShape(dims))
    return rule


def _arg_kernel(find):
    def kernel(x, axis, output_type):
        return np.asarray(find(x, axis=axis)).astype(output_type.as_numpy_dtype)[()]
    return kernel


def _arg_expr(method):
    def expr(attrs):
        return "{0}.%s(axis=%r).astype(%r)" % (method, attrs["axis"], attrs["output_type"].name)
    return expr


register(OpDef("ArgMax", kernel=_arg_kernel(np.argmax), infer=_arg_infer("ArgMax"), expr=_arg_expr("argmax"),
               gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.reductions:argmax"}))
register(OpDef("ArgMin", kernel=_arg_kernel(np.argmin), infer=_arg_infer("ArgMin"), expr=_arg_expr("argmin"),
               gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.reductions:argmin"}))


def _arg_fn(op_name, public_name, what) -> Callable[..., Tensor]:
    def fn(input, axis=None, output_type=dtypes.int64, name=None):
        x = convert(input)
        axis = 0 if axis is None else static_int(axis, op_name, "axis")
        if x.shape.rank:
            axis = infer.normalize_axis(op_name, axis, x.shape.rank)
        output_type = dtypes.as_dtype(output_type)
        if output_type not in infer.INTEGERS:
            raise TypeError(f"{public_name}: output_type must be int32 or int64, got {output_type.name}")
        return apply(op_name, [x], {"axis": axis, "output_type": output_type}, name=name)
    fn.__name__ = public_name
    fn.__doc__ = (f"The index of the {what} element along `axis` (default 0), as `output_type` "
                  f"(int64 by default); ties give the first index.")
    return fn


argmax = _arg_fn("ArgMax", "argmax", "largest")
argmin = _arg_fn("ArgMin", "argmin", "smallest")
