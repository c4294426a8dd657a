"""Jacobians from reverse mode: the backward pass seeded with every basis vector of the target.

Row ``i`` of the Jacobian is the gradient of ``target.flat[i]``: the
backward pass (the VJP) seeded with basis vector ``i``. `batch_jacobian`
seeds entry ``j`` of every example at once (examples are independent).
Two ways compute the rows, `vectorized_rows` and `rows`:

- *vectorized* (``experimental_use_pfor=True``, TensorFlow's default): the
  VJP is traced once, on one seed, and the batching interpreter
  (`autoloop.batching`, what `vectorized_map` runs) computes it for all the
  basis seeds at once, as one program whose cotangents carry the rows on a
  new axis 0. The forward values it reads are shared by every row, so a
  backward ``while`` loop stays one loop (its trip count is the forward
  one's, the same for every row): only its cotangents are batched. An op
  with no batching rule runs once per row inside that program, with a
  warning naming it; what cannot be batched at all (a TensorArray of
  cotangents) makes the whole Jacobian the row loop below, with a warning
  saying why. Never a silent change of results: both ways give the same
  Jacobian. ``parallel_iterations=n`` batches `n` rows at a time, in a
  ``while_loop`` over chunks of rows (TensorFlow's memory knob).
- *the row loop* (``experimental_use_pfor=False``): a ``while_loop`` over
  the rows with a ``TensorArray`` per source, so a traced function holds
  one copy of the backward pass, not one per row.

Eagerly, the vectorized form traces the recorded backward pass once (the
forward values as constants) and the interpreter runs it batched, op by op;
the row loop runs op by op too.

    with autoloop.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.jacobian(y, x)      # diag(2 x), shape y.shape + x.shape
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import replace

from autoloop.batching.entries import Batching, Unbatchable
from autoloop.batching.vectorized_map import run_batched, trace_element
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.while_loop import while_loop
from autoloop.ir import context
from autoloop.ir.graph import Graph
from autoloop.ops.array_ops import concat, shape
from autoloop.ops.creation_ops import range as range_, size, zeros, zeros_like
from autoloop.ops.location import format_location, user_location
from autoloop.ops.math_ops import cast, equal
from autoloop.ops.reduction_ops import reduce_prod
from autoloop.ops.shape_ops import expand_dims, reshape, transpose
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


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


def compute_rows(count, seed, vjp, sources, parallel_iterations=None, vectorize=True, what="jacobian"):
    """``stack([vjp(seed(i)) for i in range(count)])`` per source; see the module docstring.

    ``seed(indices)`` gives the seed of each index (an int32 scalar or
    vector, its shape leading the seed's); ``vjp(seed)`` one gradient per
    source (None: no path). `count` is an int or an int32 scalar. Returns
    the stacked rows per source (shape ``[count] + source.shape``) and
    whether each source was connected.
    """
    if parallel_iterations is not None and (isinstance(parallel_iterations, bool) or
                                            not isinstance(parallel_iterations, int) or parallel_iterations < 1):
        raise ValueError(f"GradientTape.{what}: parallel_iterations must be a positive integer or None, got "
                         f"{parallel_iterations!r}")
    if not vectorize:
        return rows(count, lambda i: vjp(seed(i)), sources, parallel_iterations)
    return _vectorized_or_rows(count, seed, vjp, sources, what, parallel_iterations)


def _vectorized_or_rows(count, seed, vjp, sources, what, chunk):
    """`vectorized_rows`, or the row loop with a warning saying why where the VJP cannot be batched."""
    try:
        return vectorized_rows(count, seed, vjp, sources, what, chunk)
    except Unbatchable as why:
        fall_back(what, f"its backward pass cannot be batched: {why}")
        return rows(count, lambda i: vjp(seed(i)), sources, chunk)


def fall_back(what: str, why: str) -> None:
    """Say that a Jacobian is computed by the row loop although vectorizing was asked for, and why."""
    warnings.warn(f"GradientTape.{what} at {format_location(user_location())} computes its rows one at a time in "
                  f"a loop, not vectorized, because {why}. The result is the same; pass experimental_use_pfor=False "
                  f"to ask for the loop (without this warning)", stacklevel=4)


def vectorized_rows(count, seed, vjp, sources, what="jacobian", chunk=None):
    """As `compute_rows`, the VJP traced once on one seed and batched over all of them, or over `chunk`
    seeds at a time in a ``while_loop`` (TensorFlow's `parallel_iterations`: it bounds the memory).

    Raises `Unbatchable`, having built nothing, where the batching
    interpreter cannot batch the VJP: inside a trace it is tried in a
    scratch graph first (eagerly the batched ops run as they come, and
    leave nothing behind).
    """
    connected = [False] * len(sources)

    def one_row(one_seed):
        found = vjp(one_seed)
        for k, grad in enumerate(found):
            connected[k] = connected[k] or grad is not None
        return [grad if grad is not None else zeros_like(source) for grad, source in zip(found, sources)]

    whole = chunk is None or (isinstance(count, int) and chunk >= count)
    at_once = count if whole else chunk
    seeds = seed(range_(at_once))  # every seed, or the first chunk's (what the trace sees)
    one, _ = trace_element(one_row, [seeds], name=f"{what}_row")
    known = isinstance(at_once, int)
    batching = Batching(at_once if known else None, None if known else seeds, caller=f"GradientTape.{what}")
    if context.current_graph() is not None:
        probe = Graph(f"{what}_probe", context.current_graph())
        with context.building(probe):
            run_batched(one, [Tensor(value=probe.add_input(seeds.dtype, seeds.shape))], replace(batching, warn=False))
    if whole:
        return run_batched(one, [seeds], batching), connected
    return _in_chunks(count, chunk, seed, one, batching, sources), connected


def _in_chunks(count, chunk: int, seed, one, batching, sources) -> list:
    """The batched VJP `one` over `chunk` seeds at a time, in a ``while_loop``: rows per source. The last
    chunk is filled up with the zero seeds of indices past `count` (their rows are cut off)."""
    chunks = (count + chunk - 1) // chunk

    def body(k, arrays):
        found = run_batched(one, [seed(range_(chunk) + k * chunk)], batching)  # a static range: XLA's shapes
        return k + 1, tuple(array.write(k, rows_of) for array, rows_of in zip(arrays, found))

    arrays = tuple(TensorArray(s.dtype, size=chunks, element_shape=TensorShape([chunk]).concatenate(s.shape))
                   for s in sources)
    _, arrays = while_loop(lambda k, arrays: k < chunks, body, (0, arrays))
    stacked = []
    for array, source in zip(arrays, sources):
        rows_of = reshape(array.stack(), concat([[-1], shape(source)], 0))[:count]
        rows_of.set_shape(TensorShape([count if isinstance(count, int) else None]).concatenate(source.shape))
        stacked.append(rows_of)
    return stacked


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


def jacobian(vjp, target, sources, unconnected, parallel_iterations=None, vectorize=True) -> list:
    """The Jacobian of `target` for each of `sources` (shape ``target.shape + source.shape``).

    ``vjp(seed)`` gives the gradients of ``sum(target * seed)`` for the
    sources (None where there is no path).
    """
    count = _entries(target.shape, size(target))
    target_shape = shape(target)

    def seed(indices):
        return reshape(_basis(indices, count, target.dtype), concat([shape(indices), target_shape], 0))

    stacked, connected = compute_rows(count, seed, vjp, sources, parallel_iterations, vectorize, "jacobian")
    results: list = []
    for rows_of, source, linked in zip(stacked, sources, connected):
        if not linked and unconnected is UnconnectedGradients.NONE:
            results.append(None)
            continue
        full = reshape(rows_of, concat([target_shape, shape(source)], 0))
        full.set_shape(target.shape.concatenate(source.shape))
        results.append(full)
    return results


def batch_jacobian(vjp, target, source, unconnected, parallel_iterations=None, vectorize=True):
    """``J[b, i..., j...] = d target[b, i...] / d source[b, j...]`` (each example independent)."""
    _check_batch(target, source)
    target_shape = shape(target)
    batch = target_shape[:1]
    entries = _entries(target.shape[1:], reduce_prod(target_shape[1:]))

    def seed(indices):  # entry j of every example
        basis = reshape(_basis(indices, entries, target.dtype), concat([shape(indices), [1], target_shape[1:]], 0))
        return basis + zeros(target_shape, target.dtype)

    (stacked,), (linked,) = compute_rows(entries, seed, vjp, [source], parallel_iterations, vectorize,
                                         "batch_jacobian")
    if not linked and unconnected is UnconnectedGradients.NONE:
        return None
    rank = source.shape.rank
    by_example = transpose(stacked, [1, 0] + list(range(2, rank + 1)))  # [batch, entries, source...]
    full = reshape(by_example, concat([batch, target_shape[1:], shape(source)[1:]], 0))
    full.set_shape(TensorShape([target.shape[0]]).concatenate(target.shape[1:]).concatenate(source.shape[1:]))
    return full


def _basis(indices, count, dtype):
    """``one_hot(indices, count)``, `count` an int or an int32 scalar known only when the graph runs."""
    return cast(equal(expand_dims(indices, -1), range_(count)), dtype)


def _entries(static: TensorShape, dynamic):
    """How many entries a shape has: an int when `static` is fully known, else the int32 scalar `dynamic`."""
    return static.num_elements() if static.is_fully_defined() else dynamic


def _check_batch(target, source) -> None:
    for name, tensor in (("target", target), ("source", source)):
        if tensor.shape.rank is not None and tensor.shape.rank < 1:
            raise ValueError(f"batch_jacobian needs a {name} with a batch axis (rank >= 1); got shape "
                             f"{tensor.shape}")
    if not target.shape[:1].is_compatible_with(source.shape[:1]):
        raise ValueError(f"batch_jacobian: the target's batch size ({target.shape[0]}) differs from the "
                         f"source's ({source.shape[0]}); both must have the examples on axis 0")

