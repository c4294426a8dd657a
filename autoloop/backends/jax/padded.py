"""The ops that read a stacked list whose length is known only at run time (`buffers.Padded`).

``stack(l)`` of a list appended to in a loop of data-dependent length has a
shape XLA cannot compile: on XLA it is the list's buffer (every row of its
capacity) and its length. Most ops cannot use that, and refuse it, naming
the list and the op (`Padded.refuse`). A few give exactly their numpy
result from the rows below the length, and have a rule here:

- a reduction over axis 0 (``reduce_sum(stack(l))``, ``reduce_max(stack(l),
  axis=0)``): the rows past the length are set to the reduction's identity
  (0 for a sum, 1 for a product, the lowest value for a maximum, ...), and
  the whole buffer reduced;
- ``Shape``: ``[length, *element shape]``, a value of the run, remembered
  for the ``BroadcastTo`` that a sum's gradient spreads back with (a
  stacked list of the same length, zero past it), which the list's
  gradient (``TensorListGradUnstack``) reads back as a list;
- ``PadRows`` to at least the buffer's rows (or to its capacity, ``rows``
  None): the buffer, zeros past the length (how a compacted scan's gradient reads the frames it stacked),
  and its gradient ``PadRowsGrad``, remembered ``Shape`` in hand: a stack
  of the same length.

    rules = RULES.get(node.op)        # None: the op refuses the padded value
    outputs = rule(lowering, node, args, attrs)
"""

from __future__ import annotations

import numpy as np

from autoloop.backends.jax.buffers import Buffer, Padded
from autoloop.ops.reduction_ops import _highest, _lowest
from autoloop.ops.static_args import runtime_axes

# reduction op -> the value of the rows past the length (an identity of the reduction), by numpy dtype
_IDENTITIES = {
    "Sum": lambda dtype: np.zeros((), dtype), "Prod": lambda dtype: np.ones((), dtype),
    "Max": _lowest, "Min": _highest,
    "Any": lambda dtype: np.bool_(False), "All": lambda dtype: np.bool_(True),
}


def padded_inputs(lowering, node, args) -> bool:
    """Whether `node` reads a padded stack: one of `args`, or a shape `Shape` took of one (a loop or branch
    takes such a shape as the value of the run it is: its ops refuse it where they need it static)."""
    if any(isinstance(arg, Padded) for arg in args):
        return True
    return not node.subgraphs() and any(v in lowering.padded_shapes for v in node.inputs)


def run(lowering, node, args, attrs) -> list:
    """`node`'s outputs for `args`, some padded (see `padded_inputs`): its rule's, or the refusal."""
    rule = _RULES.get(node.op)
    found = rule(lowering, node, args, attrs) if rule is not None else None
    if found is None:
        padded = next((a for a in args if isinstance(a, Padded)), None) or next(
            lowering.padded_shapes[v] for v in node.inputs if v in lowering.padded_shapes)
        raise padded.refuse(node)
    return found


def _rows_below(padded):
    """A boolean of `padded`'s items' rank: whether each row is below the length."""
    import jax.numpy as jnp
    items = padded.items
    rows = jnp.arange(items.shape[0]) < padded.length
    return rows.reshape((items.shape[0],) + (1,) * (items.ndim - 1))


def _reduction(lowering, node, args, attrs):
    (padded,) = args
    if not isinstance(padded, Padded):
        return None
    axes = runtime_axes(attrs["axis"], padded.items.ndim, node.op)
    if axes is not None and 0 not in axes:
        return None  # the result still has the rows: not an array XLA can give
    import jax.numpy as jnp
    from autoloop.ops import registry
    items = padded.items
    identity = _IDENTITIES[node.op](np.dtype(items.dtype))
    kernel = registry.get(node.op).kernel_for("jax").fn
    return [kernel(jnp.where(_rows_below(padded), items, identity), **attrs)]


def _shape(lowering, node, args, attrs):
    (padded,) = args
    if not isinstance(padded, Padded):
        return None
    import jax.numpy as jnp
    dtype = attrs["out_type"].as_numpy_dtype
    lowering.padded_shapes[node.outputs[0]] = padded
    return [jnp.concatenate([jnp.reshape(padded.length, (1,)).astype(dtype),
                             jnp.asarray(padded.items.shape[1:], dtype)])]


def _broadcast_to(lowering, node, args, attrs):
    padded = lowering.padded_shapes.get(node.inputs[1]) if len(node.inputs) == 2 else None
    if padded is None or isinstance(args[0], Padded):
        return None
    import jax.numpy as jnp
    spread = jnp.broadcast_to(args[0], padded.items.shape)
    return [Padded(jnp.where(_rows_below(padded), spread, jnp.zeros((), spread.dtype)), padded.length, padded.origin)]


def _gradient_unstack(lowering, node, args, attrs):
    (padded,) = args
    if not isinstance(padded, Padded):
        return None
    import jax.numpy as jnp
    capacity = lowering.layout(node.outputs[0]).capacity
    items = padded.items[:capacity]
    if items.shape[0] < capacity:
        items = jnp.concatenate([items, jnp.zeros((capacity - items.shape[0],) + items.shape[1:], items.dtype)])
    return [Buffer(items, jnp.asarray(padded.length, jnp.int32))]


def _pad_rows(lowering, node, args, attrs):
    """The whole buffer: the rows past the length are zeros, as the padding's are (`pad_rows`)."""
    padded = args[0]
    rows = attrs["rows"] if attrs["rows"] is not None else getattr(padded, "items", padded).shape[0]
    if not isinstance(padded, Padded) or padded.items.shape[0] > rows:
        return None  # a buffer larger than the rows asked for: its length may not fit, as numpy would check
    import jax.numpy as jnp
    items = jnp.where(_rows_below(padded), padded.items, jnp.zeros((), padded.items.dtype))
    return [jnp.concatenate([items, jnp.zeros((rows - items.shape[0],) + items.shape[1:], items.dtype)])]


def _pad_rows_grad(lowering, node, args, attrs):
    """`pad_rows`' gradient reading the shape of a padded stack: the rows below its length, a stack again."""
    grad, x_shape = args
    if isinstance(grad, Padded):
        return None
    return [first_rows(grad, x_shape, node)]


def first_rows(grad, x_shape, origin) -> Padded:
    """The rows of `grad` below ``x_shape[0]`` (a value of the run), as a stack of that length."""
    import jax.numpy as jnp
    length = jnp.asarray(x_shape)[0].astype(jnp.int32)
    rows = jnp.arange(grad.shape[0]).reshape((grad.shape[0],) + (1,) * (grad.ndim - 1)) < length
    return Padded(jnp.where(rows, grad, jnp.zeros((), grad.dtype)), length, origin)


_RULES = {**{name: _reduction for name in _IDENTITIES}, "Shape": _shape, "BroadcastTo": _broadcast_to,
          "TensorListGradUnstack": _gradient_unstack, "PadRows": _pad_rows,
          "PadRowsGrad": _pad_rows_grad}
