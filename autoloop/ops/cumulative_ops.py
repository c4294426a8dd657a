"""Sums of many terms: `add_n` over a list of tensors, `cumsum`/`cumprod` along an axis.

Results keep the input dtype (integers wrap around on overflow, as in
TensorFlow). `cumsum` and `cumprod` follow ``tf.math.cumsum``: with
`exclusive` the i-th result leaves out the i-th element, with `reverse` the
running total goes from the end.

    >>> cumsum(constant([1, 2, 3]), exclusive=True).numpy()
    array([0, 1, 3], dtype=int32)
"""

from __future__ import annotations

from typing import Callable

import functools

import numpy as np

from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.ops.static_args import static_axis
from autoloop.tensor import Tensor


# -- AddN -------------------------------------------------------------------------
def _add_n_infer(*inputs):
    infer.check_same_dtype("AddN", *inputs)
    infer.check_dtype("AddN", inputs[0], infer.NUMERIC)
    return Spec(inputs[0].dtype, infer.merge_shapes("AddN", inputs))  # no broadcasting


def _add_n_kernel(*inputs):
    return functools.reduce(np.add, inputs)


register(OpDef("AddN", kernel=_add_n_kernel, infer=_add_n_infer,
               gradient=lambda op, grad: [grad if spec.dtype.is_floating else None for spec in op.input_specs],
               kernels={"jax": "autoloop.backends.jax.kernels.reductions:add_n"}))


def add_n(inputs, name=None) -> Tensor:
    """The element-wise sum of the tensors `inputs`, all of one shape and dtype.

        >>> add_n([constant([1, 2]), constant([10, 20]), [100, 200]]).numpy()
        array([111, 222], dtype=int32)
    """
    if isinstance(inputs, Tensor) or not isinstance(inputs, list | tuple):
        raise TypeError(f"add_n takes a list of tensors, got {inputs!r}")
    if not inputs:
        raise ValueError("add_n needs at least one tensor, got an empty list")
    first = next((value for value in inputs if isinstance(value, Tensor)), None)
    dtype = first.dtype if first is not None else None
    return apply("AddN", [convert(value, None if isinstance(value, Tensor) else dtype) for value in inputs],
                 name=name)


# -- Cumsum / Cumprod ---------------------------------------------------------------------
def _cumulative_infer(op_name):
    def rule(x, axis, exclusive, reverse):
        infer.check_dtype(op_name, x, infer.NUMERIC)
        infer.check_axis_along(op_name, x, axis)
        return Spec(x.dtype, x.shape)
    return rule


def _cumulative_kernel(accumulate, identity):
    def kernel(x, axis, exclusive, reverse):
        x = np.asarray(x)
        if reverse:
            x = np.flip(x, axis)
        result = accumulate(x, axis=axis, dtype=x.dtype)
        if exclusive and x.shape[axis]:
            # Shift by one along the axis: the first entry is the empty sum (or product).
            first = np.full_like(np.take(result, [0], axis=axis), identity)
            rest = np.take(result, np.arange(x.shape[axis] - 1), axis=axis)
            result = np.concatenate([first, rest], axis=axis)
        return np.flip(result, axis) if reverse else result
    return kernel


def _cumsum_gradient(op, grad):
    """Each input element adds to the running sums after it: a running sum the other way."""
    if not op.input_specs[0].dtype.is_floating:
        return [None]
    return [apply("Cumsum", [grad], dict(op.attrs, reverse=not op.attrs["reverse"]))]


def _cumprod_gradient(op, grad):
    """``cumsum(grad * result)`` the other way, divided by the input (the input must have no zeros)."""
    if not op.input_specs[0].dtype.is_floating:
        return [None]
    back = apply("Cumsum", [grad * op.outputs[0]], dict(op.attrs, reverse=not op.attrs["reverse"]))
    return [back / op.inputs[0]]


register(OpDef("Cumsum", kernel=_cumulative_kernel(np.cumsum, 0), infer=_cumulative_infer("Cumsum"),
               gradient=_cumsum_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.reductions:cumsum"}))
register(OpDef("Cumprod", kernel=_cumulative_kernel(np.cumprod, 1), infer=_cumulative_infer("Cumprod"),
               gradient=_cumprod_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.reductions:cumprod"}))


def _cumulative_fn(op_name, public_name, what) -> Callable[..., Tensor]:
    def fn(x, axis=0, exclusive=False, reverse=False, name=None):
        x = convert(x)
        attrs = {"axis": static_axis(axis, x, op_name), "exclusive": bool(exclusive), "reverse": bool(reverse)}
        return apply(op_name, [x], attrs, name=name)
    fn.__name__ = public_name
    fn.__doc__ = (f"The running {what} of `x` along `axis` (default 0), in `x`'s dtype; see the "
                  f"module docstring for `exclusive` and `reverse`.")
    return fn


cumsum = _cumulative_fn("Cumsum", "cumsum", "sum")
cumprod = _cumulative_fn("Cumprod", "cumprod", "product")
