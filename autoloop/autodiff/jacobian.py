"""Jacobians from reverse mode: one backward pass per row, in one loop.

`jacobian(vjp, target, sources)` seeds the backward pass with each basis
vector of the target in turn (row ``i`` of the Jacobian is the gradient of
``target.flat[i]``) and stacks the rows: a ``while_loop`` over the rows with
a ``TensorArray`` per source, so a traced function holds one copy of the
backward pass, not one per row, and eagerly the same loop runs op by op.
`batch_jacobian` loops over the entries of one example, seeding that entry
of every example at once (examples are independent).

`rows` is the one place that says how the rows are computed; a vectorized
form (batching over the seed, `experimental_use_pfor`) would replace it.

    with autoloop.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.jacobian(y, x)      # diag(2 x), shape y.shape + x.shape
"""

from __future__ import annotations

import enum

from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.while_loop import while_loop
from autoloop.ops.array_ops import concat, shape
from autoloop.ops.creation_ops import size, zeros, zeros_like
from autoloop.ops.reduction_ops import reduce_prod
from autoloop.ops.selection_ops import one_hot
from autoloop.ops.shape_ops import reshape, transpose
from autoloop.shapes import TensorShape


class UnconnectedGradients(enum.Enum):
    """What a gradient with no path from the target is: None (`NONE`) or zeros (`ZERO`)."""

    NONE = "none"
    ZERO = "zero"


def unconnected_option(value) -> UnconnectedGradients:
    """`value` (an `UnconnectedGradients` or its string) as the enum; ValueError for anything else."""
    try:
        return UnconnectedGradients(value.value if isinstance(value, UnconnectedGradients) else value)
    except ValueError:
        raise ValueError(f"unconnected_gradients must be UnconnectedGradients.NONE or .ZERO ('none' or "
                         f"'zero'), got {value!r}") from None


def rows(count, row, sources, parallel_iterations=None):
    """``stack([row(i) for i in range(count)])`` per source, in a ``while_loop``.

    ``row(i)`` returns one gradient per source (None: no path); returns the
    stacked rows per source (shape ``[count] + source.shape``) and whether
    each source was connected.
    """
    connected = [False] * len(sources)

    def body(i, arrays):
        found = row(i)
        written = []
        for k, (array, grad, source) in enumerate(zip(arrays, found, sources)):
            connected[k] = connected[k] or grad is not None
            written.append(array.write(i, grad if grad is not None else zeros_like(source)))
        return i + 1, tuple(written)

    arrays = tuple(TensorArray(s.dtype, size=count, element_shape=s.shape) for s in sources)
    _, arrays = while_loop(lambda i, arrays: i < count, body, (0, arrays),
                           parallel_iterations=parallel_iterations or 10)
    return [a.stack() for a in arrays], connected


def jacobian(vjp, target, sources, unconnected, parallel_iterations=None) -> list:
    """The Jacobian of `target` for each of `sources` (shape ``target.shape + source.shape``).

    ``vjp(seed)`` gives the gradients of ``sum(target * seed)`` for the
    sources (None where there is no path).
    """
    count = size(target)
    target_shape = shape(target)

    def row(i):
        return vjp(reshape(one_hot(i, count, dtype=target.dtype), target_shape))

    stacked, connected = rows(count, row, sources, parallel_iterations)
    results: list = []
    for rows_of, source, linked in zip(stacked, sources, connected):
        if not linked and unconnected is UnconnectedGradients.NONE:
            results.append(None)
            continue
        full = reshape(rows_of, concat([target_shape, shape(source)], 0))
        full.set_shape(target.shape.concatenate(source.shape))
        results.append(full)
    return results


def batch_jacobian(vjp, target, source, unconnected, parallel_iterations=None):
    """``J[b, i..., j...] = d target[b, i...] / d source[b, j...]`` (each example independent)."""
    _check_batch(target, source)
    target_shape = shape(target)
    batch = target_shape[:1]
    entries = reduce_prod(target_shape[1:])

    def row(j):  # entry j of every example
        seed = one_hot(j, entries, dtype=target.dtype)
        seed = reshape(seed, concat([[1], target_shape[1:]], 0)) + zeros(target_shape, target.dtype)
        return vjp(seed)

    (stacked,), (linked,) = rows(entries, row, [source], parallel_iterations)
    if not linked and unconnected is UnconnectedGradients.NONE:
        return None
    rank = source.shape.rank
    by_example = transpose(stacked, [1, 0] + list(range(2, rank + 1)))  # [batch, entries, source...]
    full = reshape(by_example, concat([batch, target_shape[1:], shape(source)[1:]], 0))
    full.set_shape(TensorShape([target.shape[0]]).concatenate(target.shape[1:]).concatenate(source.shape[1:]))
    return full


def _check_batch(target, source) -> None:
    for name, tensor in (("target", target), ("source", source)):
        if tensor.shape.rank is not None and tensor.shape.rank < 1:
            raise ValueError(f"batch_jacobian needs a {name} with a batch axis (rank >= 1); got shape "
                             f"{tensor.shape}")
    if not target.shape[:1].is_compatible_with(source.shape[:1]):
        raise ValueError(f"batch_jacobian: the target's batch size ({target.shape[0]}) differs from the "
                         f"source's ({source.shape[0]}); both must have the examples on axis 0")

