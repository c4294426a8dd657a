"""JAX kernels of `autoloop.ops.math_ops`, `unary_math_ops`, `nn_ops` and `clip_ops` beyond ``jax.numpy``'s own."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from autoloop import dtypes
from autoloop.backends.jax.checks import replay
from autoloop.backends.jax.marks import checked, with_node


# Integer ``//`` and ``%`` check their divisor (flag ``integer``), as the numpy kernel does; its
# message names no value, so the kernel replayed on zeros says it.
_division_site = replay(when=lambda node: node.attrs.get("integer"))


@checked(_division_site)
def floor_div(lowering, node, x, y, integer=False):
    if integer:
        lowering.check(node, jnp.any(y == 0))
        y = jnp.where(y == 0, jnp.ones((), y.dtype), y)  # a failed run's results are dropped
    return jnp.floor_divide(x, y)


@checked(_division_site)
def floor_mod(lowering, node, x, y, integer=False):
    if integer:
        lowering.check(node, jnp.any(y == 0))
        y = jnp.where(y == 0, jnp.ones((), y.dtype), y)
    return jnp.mod(x, y)


def real_div(x, y):
    """TensorFlow's true division: integers become float32 (8 and 16 bits) or float64 first."""
    dtype = dtypes.as_dtype(np.dtype(x.dtype))
    if not dtype.is_floating:
        target = dtypes.float32 if dtype.size <= 2 else dtypes.float64
        x, y = x.astype(target.as_numpy_dtype), y.astype(target.as_numpy_dtype)
    return jnp.true_divide(x, y)


def rounded(lowering, product):
    """`product`, a float multiply's result, rounded once as written (as numpy rounds it) in a program that
    saves values for a gradient (`ProgramFacts.rounds_products`).

    XLA (through LLVM) fuses a multiply into the add that uses it (a fused
    multiply-add: one rounding instead of two) wherever its fusion puts both in
    one kernel and the product has no other use. The results of the same ops
    then depend on how XLA fused the loop around them: a checkpointed
    gradient's recomputing loop saves other values than the forward loop of
    the stored gradient, so fuses otherwise, and its gradient would differ in
    the last bits, where docs/api.md promises it bit for bit. The select below
    keeps every value (a NaN as well) and gives the product other uses, which
    are never fused into an add. It costs a compare and a select per element
    (a sixth of a small loop of products), so programs without a gradient
    loop keep XLA's fusion.
    """
    if not lowering.facts.rounds_products or not jnp.issubdtype(product.dtype, jnp.floating):
        return product
    return jnp.where(product == product, product, product + product)


@with_node
def multiply(lowering, node, x, y):
    return rounded(lowering, jnp.multiply(x, y))


@with_node
def square(lowering, node, x):
    return rounded(lowering, jnp.square(x))


@with_node
def power(lowering, node, x, y):
    return rounded(lowering, jnp.power(x, y))  # XLA makes a small integer power multiplies


def cast(x, dtype):
    return jnp.asarray(x).astype(dtype.as_numpy_dtype)


def identity(x):
    return x


def sigmoid(x):
    return 1 / (1 + jnp.exp(-x))  # the numpy kernel's formula, for the same rounding


def rsqrt(x):
    return jnp.reciprocal(jnp.sqrt(x))


def relu(x):
    return jnp.maximum(x, jnp.zeros((), x.dtype))


def clip(t, clip_value_min, clip_value_max):
    return jnp.maximum(jnp.minimum(t, clip_value_max), clip_value_min)


def _shifted(logits, axis):
    return logits - jnp.max(logits, axis=axis, keepdims=True)


def softmax(logits, axis):
    exponentials = jnp.exp(_shifted(logits, axis))
    return exponentials / jnp.sum(exponentials, axis=axis, keepdims=True)


def log_softmax(logits, axis):
    shifted = _shifted(logits, axis)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))
