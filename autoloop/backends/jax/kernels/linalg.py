"""JAX kernels of `autoloop.ops.matrix_ops`: ``jnp.linalg`` with the numpy kernel's errors.

``jnp.linalg`` gives infinities or NaNs where numpy raises (a singular
matrix, one not positive definite); a result that is not finite while the
input is fails the run with the numpy kernel's message (`replay`).
"""

from __future__ import annotations

import jax.numpy as jnp

from autoloop.backends.jax.checks import replay
from autoloop.backends.jax.marks import checked


def _checked_result(lowering, node, inputs, result):
    finite_in = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in inputs]))
    lowering.check(node, finite_in & ~jnp.all(jnp.isfinite(result)), tuple(inputs))
    return result


@checked(replay(0))
def inv(lowering, node, x):
    return _checked_result(lowering, node, (x,), jnp.linalg.inv(x))


@checked(replay(0, 1))
def solve(lowering, node, matrix, rhs):
    return _checked_result(lowering, node, (matrix, rhs), jnp.linalg.solve(matrix, rhs))


@checked(replay(0))
def cholesky(lowering, node, x):
    return _checked_result(lowering, node, (x,), jnp.linalg.cholesky(x))
