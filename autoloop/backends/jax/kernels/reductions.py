"""JAX kernels of the reductions, running sums and sums of several tensors (`autoloop.ops.reduction_ops`,
`cumulative_ops`, `gradient_support`): a reduction keeps its input's dtype, as on numpy."""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from autoloop.ops.reduction_ops import _highest, _lowest
from autoloop.ops.static_args import runtime_axes


def _axes(name, x, axis):
    return runtime_axes(axis, np.ndim(x), name)


def total(x, axis, keepdims):
    return jnp.sum(x, axis=_axes("Sum", x, axis), dtype=x.dtype, keepdims=keepdims)


def product(x, axis, keepdims):
    return jnp.prod(x, axis=_axes("Prod", x, axis), dtype=x.dtype, keepdims=keepdims)


def mean(x, axis, keepdims):
    axis = _axes("Mean", x, axis)
    if jnp.issubdtype(x.dtype, jnp.floating):
        if x.size == 0:
            return jnp.full(jnp.sum(x, axis=axis, keepdims=keepdims).shape, jnp.nan, x.dtype)
        return jnp.mean(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    summed = jnp.sum(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    count = x.size // max(summed.size, 1) if x.size else 0
    if count == 0:
        return jnp.zeros_like(summed)
    return (jnp.sign(summed) * (jnp.abs(summed) // jnp.asarray(count, x.dtype))).astype(x.dtype)


def largest(x, axis, keepdims):
    return jnp.max(x, axis=_axes("Max", x, axis), keepdims=keepdims, initial=_lowest(np.dtype(x.dtype)))


def smallest(x, axis, keepdims):
    return jnp.min(x, axis=_axes("Min", x, axis), keepdims=keepdims, initial=_highest(np.dtype(x.dtype)))


def any_(x, axis, keepdims):
    return jnp.any(x, axis=_axes("Any", x, axis), keepdims=keepdims)


def all_(x, axis, keepdims):
    return jnp.all(x, axis=_axes("All", x, axis), keepdims=keepdims)


def argmax(x, axis, output_type):
    return jnp.argmax(x, axis=axis).astype(output_type.as_numpy_dtype)


def argmin(x, axis, output_type):
    return jnp.argmin(x, axis=axis).astype(output_type.as_numpy_dtype)


def add_n(*inputs):
    return functools.reduce(jnp.add, inputs)


def _cumulative(accumulate, identity):
    def kernel(x, axis, exclusive, reverse):
        if reverse:
            x = jnp.flip(x, axis)
        result = accumulate(x, axis=axis, dtype=x.dtype)
        if exclusive and x.shape[axis]:
            first = jnp.full_like(jnp.take(result, jnp.array([0]), axis=axis), identity)
            rest = jnp.take(result, jnp.arange(x.shape[axis] - 1), axis=axis)
            result = jnp.concatenate([first, rest], axis=axis)
        return jnp.flip(result, axis) if reverse else result
    return kernel


cumsum = _cumulative(jnp.cumsum, 0)
cumprod = _cumulative(jnp.cumprod, 1)


def sum_to_shape(x, shape):
    shape = tuple(int(d) for d in np.ravel(shape))
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + k for k, d in enumerate(shape) if d == 1 and x.shape[lead + k] != 1)
    if axes:
        x = jnp.sum(x, axis=axes, keepdims=True, dtype=x.dtype)
    return x.reshape(shape)
