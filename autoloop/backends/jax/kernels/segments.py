"""JAX kernel of `autoloop.ops.segment_ops`: segment reductions with ``jax.ops.segment_*``.

The number of segments sizes the result, so XLA needs it while compiling
(a constant ``num_segments``, or the ids of a sorted segment op known
then). Out-of-range (and, for the sorted forms, unsorted) ids are checked
at run time with the numpy kernel's message; empty segments hold what the
numpy kernel puts there.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from autoloop.backends.jax.checks import replay
from autoloop.backends.jax.marks import checked, static_value
from autoloop.ops.segment_ops import _identity

_REDUCERS = {"sum": jax.ops.segment_sum, "prod": jax.ops.segment_prod, "max": jax.ops.segment_max,
             "min": jax.ops.segment_min}


@checked(replay(1, 2))
def segment_reduce(lowering, node, data, segment_ids, num_segments, reduce, sorted):
    count = int(static_value(node, num_segments, "the number of segments"))
    ids = jnp.asarray(segment_ids)
    flat = ids.ravel()
    failed = jnp.any(flat >= count)
    if sorted and flat.size:
        failed = failed | (flat[0] < 0) | jnp.any(jnp.diff(flat) < 0)
    lowering.check(node, failed, (segment_ids, num_segments))
    data = jnp.asarray(data)
    rows = data.reshape((flat.size,) + data.shape[ids.ndim:])
    result = _REDUCERS[reduce](rows, flat, num_segments=count)
    if reduce in ("max", "min"):
        sizes = jax.ops.segment_sum(jnp.ones(flat.shape, np.int32), flat, num_segments=count)
        empty = (sizes == 0).reshape((count,) + (1,) * (result.ndim - 1))
        fill = 0 if sorted else _identity(reduce, data.dtype)
        result = jnp.where(empty, jnp.asarray(fill, data.dtype), result)
    return result.astype(data.dtype)
