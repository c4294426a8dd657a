"""`scan`'s meaning as one `while_loop` of ops: how a scan is differentiated.

A ``Scan`` node runs on its own frame loop (`autoloop.control_flow.scan_run`),
which is fast but made of numpy calls no gradient rule sees. `scan_by_while`
writes the masked reference semantics of `autoloop.control_flow.scan` as a
`while_loop` of ordinary ops, with the same results bit for bit:

- eagerly, `scan` runs this way while a `GradientTape` records, so the tape
  sees every op of every frame;
- in a graph, the ``Scan`` gradient rule (`autoloop.autodiff.scan_grad`)
  puts this loop in the Scan node's place and differentiates it (a
  ``While``, a ``Cond`` for a do-while's first test, TensorArrays for ys),
  unless the scan compacts (`autoloop.autodiff.scan_compacted_grad`).

A batched scan runs masked here (finished entries keep their state and get
zero frames), never compacted.

    >>> ys, state, lengths = scan_by_while(cond, body, [s0], [xs], limit, has_cond=True, cond_before_body=True,
    ...                                    entry_rank=0, ys_specs=[(float32, TensorShape([]))],
    ...                                    return_tensor_arrays=False)
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.control_flow.cond import cond as branch
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.while_loop import while_loop
from autoloop.ops.array_ops import concat, shape
from autoloop.ops.creation_ops import ones, zeros, zeros_like
from autoloop.ops.dispatch import convert
from autoloop.ops.math_ops import cast, logical_and
from autoloop.ops.reduction_ops import reduce_any
from autoloop.ops.selection_ops import where
from autoloop.ops.shape_ops import reshape


def scan_by_while(cond, body, initial: list, xs: list, limit, *, has_cond: bool, cond_before_body: bool,
                  entry_rank: int, ys_specs: list, return_tensor_arrays: bool, name: str = "scan") -> list:
    """The outputs of a ``Scan``: each ys stacked (or its TensorArray flow), the final state, the lengths.

    ``cond(x, state)`` and ``body(x, state) -> (frames, new_state)`` take and
    give lists of tensors; `limit` is the most frames (a scalar int32 tensor)
    or None; `ys_specs` holds each frame's ``(dtype, shape)``.
    """
    arrays = [TensorArray(dtype, size=0, dynamic_size=True, element_shape=frame) for dtype, frame in ys_specs]
    count, extra = len(initial), len(arrays)
    if entry_rank:
        return _entries(cond, body, initial, xs, arrays, limit, has_cond, cond_before_body, entry_rank,
                        return_tensor_arrays, name)

    def test(step, state):
        if not has_cond:
            return convert(True)
        if cond_before_body:
            return cond([x[step] for x in xs], state)
        # A do-while skips the test before frame 0, and later tests the frame it just ran.
        return branch(step > 0, lambda: cond([x[step - 1] for x in xs], state), lambda: convert(True))

    def loop_cond(step, *values):
        state = list(values[:count])
        if limit is None:
            return test(step, state)
        if not has_cond:
            return step < limit  # a plain counted loop: a static-shape backend sees its exact trip count
        return branch(step < limit, lambda: test(step, state), lambda: convert(False))

    def loop_body(step, *values):
        frames, state = body([x[step] for x in xs], list(values[:count]))
        # Frame `step` is appended (written at the array's size, which is `step`).
        written = [array.write(array.size(), frame) for array, frame in zip(values[count:], frames)]
        return (step + 1, *state, *written)

    results = while_loop(loop_cond, loop_body, (convert(0), *initial, *arrays), name=name,
                         maximum_iterations=limit)
    step, state, written = results[0], list(results[1:1 + count]), list(results[1 + count:1 + count + extra])
    return _stacked(written, return_tensor_arrays) + state + [step]


def _entries(cond, body, initial, xs, arrays, limit, has_cond, cond_before_body, rank, return_tensor_arrays, name):
    """A batched scan: one boolean per entry (the leading `rank` axes of every state value and xs frame)."""
    count = len(initial)
    entry_shape = shape(initial[0])[:rank]

    def still_active(step, active, state):
        if not has_cond:
            return active
        if cond_before_body:
            return logical_and(active, cond([x[step] for x in xs], state))
        return branch(step > 0, lambda: logical_and(active, cond([x[step - 1] for x in xs], state)), lambda: active)

    def loop_cond(step, active, lengths, *values):
        state = list(values[:count])
        running = lambda: reduce_any(still_active(step, active, state))  # noqa: E731
        return running() if limit is None else branch(step < limit, running, lambda: convert(False))

    def loop_body(step, active, lengths, *values):
        state = list(values[:count])
        active = still_active(step, active, state)
        frames, new = body([x[step] for x in xs], state)
        state = [where(_mask(active, value, rank), value, old) for value, old in zip(new, state)]
        frames = [where(_mask(active, frame, rank), frame, zeros_like(frame)) for frame in frames]
        written = [array.write(array.size(), frame) for array, frame in zip(values[count:], frames)]
        return (step + 1, active, lengths + cast(active, dtypes.int32), *state, *written)

    start = (convert(0), ones(entry_shape, dtypes.bool_), zeros(entry_shape, dtypes.int32), *initial, *arrays)
    results = while_loop(loop_cond, loop_body, start, name=name, maximum_iterations=limit)
    lengths, state = results[2], list(results[3:3 + count])
    return _stacked(list(results[3 + count:]), return_tensor_arrays) + state + [lengths]


def _mask(active, value, rank: int):
    """`active` with axes of size 1 appended to broadcast against `value` (entries on its leading axes)."""
    extra = value.shape.rank - rank
    if extra == 0:
        return active
    return reshape(active, concat([shape(active), convert([1] * extra, dtypes.int32)], 0))


def _stacked(arrays, return_tensor_arrays: bool) -> list:
    return [array.flow if return_tensor_arrays else array.stack() for array in arrays]

