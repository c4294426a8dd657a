"""JAX kernels of `autoloop.ops.sequence_ops`: `searchsorted` (batched ``jnp.searchsorted``) and `unique`.

`unique`'s result length depends on the values, so XLA compiles it only
when they are known while compiling (then the numpy kernel runs there).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from autoloop.backends.jax.marks import unsupported, with_node


def searchsorted(sorted_sequence, values, side, out_type):
    rows = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
    queries = values.reshape(-1, values.shape[-1])
    found = jax.vmap(lambda row, query: jnp.searchsorted(row, query, side=side))(rows, queries)
    return found.reshape(values.shape).astype(out_type.as_numpy_dtype)


@with_node
def unique(lowering, node, x, out_idx):
    raise unsupported(node, "unique(x) gives one element per distinct value, so it", (
        "XLA compiles arrays of static shape only. Compare against a fixed set of values, or run on "
        "backend='numpy'"))
