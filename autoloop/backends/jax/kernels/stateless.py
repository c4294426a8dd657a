"""JAX kernel of the stateless random ops: the numpy kernel through ``jax.pure_callback``.

The numbers are a function of the seed and the arguments, so the call is
pure (XLA may run it once for equal inputs); they are the numbers the
numpy executor draws.
"""

from __future__ import annotations

import jax
import numpy as np

from autoloop.backends.jax.marks import static_value, with_node
from autoloop.ops import registry


@with_node
def draw(lowering, node, dims, first, second, seed, dtype):
    kernel = registry.get(node.op).kernel
    shape = tuple(int(d) for d in np.ravel(static_value(node, dims, "the shape")))
    result = jax.ShapeDtypeStruct(shape, dtype.as_numpy_dtype)

    def on_host(first, second, seed):
        return np.asarray(kernel(np.asarray(dims), np.asarray(first), np.asarray(second), np.asarray(seed),
                                 dtype=dtype), result.dtype).reshape(shape)
    return jax.pure_callback(on_host, result, first, second, seed)
