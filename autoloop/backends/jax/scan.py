"""The ``"jax"`` rule of ``Scan``: ``lax.scan`` when the frames are counted, else ``lax.while_loop``s.

A scan over a known number of frames with no cond is ``lax.scan`` over
the frames of ``xs`` (or a range of ``spatial_dim``): the ys frames come
back stacked. Otherwise the reference semantics of
`autoloop.control_flow.scan` run as a ``lax.while_loop`` with the ys
written into buffers of the scan's bound (the length of ``xs``,
``spatial_dim`` or ``max_seq_len``). A batched scan (``cond_dims``) masks
finished entries (their state stops changing, their frames are zeros), in
one loop over every entry (what ``jax.vmap`` of a ``lax.while_loop``
does), or, when it may compact and the cost rule of
`autoloop.backends.jax.scan_form` says so, in *stages*: one loop per size
``B, B/2, ..., 1``, each run on the most active rows gathered to its front
until the next size would hold them, then written back. Both give the
numpy executor's results exactly, with static shapes. The condition is
evaluated at the end of each frame (and once before the first), so that
its run-time checks can fail the loop.

The ys of a scan that stops on a cond have a length known only when it
runs: they come back trimmed as results of the function (`buffers.Padded`).
They are preallocated to the scan's bound (``max_seq_len``, ``xs`` or
``spatial_dim``); without one (`needs_capacity`), a program safe to rerun
gives the scan a provisional capacity that grows when a run needs more
frames (`autoloop.backends.jax.growth`; never a shorter scan), and any
other program is a `BackendError` asking for a bound.
"""

from __future__ import annotations

import numpy as np

from autoloop.ir.trips import trip_count
from autoloop.backends.jax.buffers import Buffer, Padded
from autoloop.backends.jax.control_flow import check_shapes_kept, refuse_variable_writes, run_subgraph
from autoloop.backends.jax.marks import is_static, unsupported
from autoloop.backends.jax.scan_form import jax_form, stage_sizes
from autoloop.control_flow.scan_run import frame_limit
from autoloop.ir import control_flow


def _counts_site(node):
    """A scan whose frame counts are run-time values checks them as numpy does (`frame_limit`)."""
    groups = control_flow.operands(node)
    counts = list(groups.spatial_dim) + list(groups.max_seq_len)
    if not counts or not all(x.shape.rank and x.shape[0] is not None for x in groups.xs):
        return None
    lengths = [x.shape[0] for x in groups.xs]
    has_spatial_dim = bool(groups.spatial_dim)

    def reproduce(*values):
        spatial_dim = values[0] if has_spatial_dim else None
        max_seq_len = values[-1] if groups.max_seq_len else None
        frame_limit([np.zeros(n) for n in lengths], spatial_dim, max_seq_len)
    return [(np.dtype(v.dtype.as_numpy_dtype), ()) for v in counts], reproduce


def needs_capacity(node) -> bool:
    """Whether the Scan `node` collects ys with no bound on its frames, known while compiling: it needs a
    capacity (`autoloop.backends.jax.growth`). Frame counts computed from the shape of a `pad_rows` (a compacted
    gradient's backward scan, bounded by the frames of its forward) are known while compiling on XLA."""
    if node.op != "Scan" or not node.attrs["num_ys"] or node.attrs["return_tensor_arrays"]:
        return False
    groups = control_flow.operands(node)
    counts = list(groups.spatial_dim) + list(groups.max_seq_len)
    return trip_count(node).upper is None and not any(_from_padded_shape(c) for c in counts)


def _from_padded_shape(value) -> bool:
    """Whether `value` is computed from the shape of a `pad_rows` (never a stack of run-time length on XLA)."""
    node = value.node
    if node.op == "Shape":
        return node.inputs[0].node.op == "PadRows"
    return node.op in ("StridedSlice", "Cast", "Identity") and _from_padded_shape(node.inputs[0])


def lower_scan(lowering, node, args) -> list:
    import jax.numpy as jnp
    refuse_variable_writes(node.subgraphs(), "a scan's body or condition")
    groups = control_flow.split(node, args)
    xs = [jnp.asarray(x) for x in groups.xs]
    limit, error = _limit(groups, xs)
    if error is not None:
        return lowering.fail_always(node, error)
    counts = list(groups.spatial_dim) + list(groups.max_seq_len)
    if not is_static(limit):
        failed = False
        for count in counts:
            failed = failed | (jnp.asarray(count) < 0)
        if groups.spatial_dim and xs:
            failed = failed | (jnp.asarray(groups.spatial_dim[0]) != xs[0].shape[0])
        lowering.check(node, failed, counts)
    attrs = node.attrs
    state = [lowering.facts.carry_value(v, p) for v, p in zip(groups.initial, attrs["body"].inputs[len(xs):])]
    if not attrs["has_cond"] and is_static(limit) and not attrs["cond_dims"].rank:
        return _counted(lowering, node, groups, xs, state, int(limit))
    return _masked(lowering, node, groups, xs, state, limit)


lower_scan.site = _counts_site


def _limit(groups, xs):
    """``(the most frames, None)``: a number if known while compiling, else a JAX scalar; or ``(None,
    the error)`` when numpy's check of the counts fails."""
    import jax.numpy as jnp
    spatial_dim = groups.spatial_dim[0] if groups.spatial_dim else None
    max_seq_len = groups.max_seq_len[0] if groups.max_seq_len else None
    counts = [spatial_dim, max_seq_len]
    if all(c is None or is_static(c) for c in counts):
        try:
            return frame_limit([np.zeros(x.shape[:1]) for x in xs], spatial_dim, max_seq_len), None
        except Exception as error:  # noqa: BLE001 - the numpy frame loop's own check, failing when it runs
            return None, error
    limit = xs[0].shape[0] if xs else None
    for count in counts:
        if count is not None:
            count = jnp.maximum(jnp.asarray(count, jnp.int32), 0)
            limit = count if limit is None else jnp.minimum(limit, count)
    return limit, None


def _counted(lowering, node, groups, xs, state, frames: int) -> list:
    """No cond and a known number of frames: ``lax.scan``."""
    import jax
    import jax.numpy as jnp
    body, num_ys = node.attrs["body"], node.attrs["num_ys"]
    captures = list(groups.body_captures)
    xs = [x[:frames] for x in xs]

    def step(carry, x):
        values, errors = carry
        results, errors = run_subgraph(lowering, body, list(x) + list(values) + captures, errors)
        new = [lowering.facts.carry_value(r, p) for r, p in zip(results[num_ys:], body.inputs[len(xs):])]
        return (new, errors), [jnp.asarray(y) for y in results[:num_ys]]

    carry = (state, lowering.errors)
    step_jit = jax.jit(step)
    example = [jax.ShapeDtypeStruct(x.shape[1:], x.dtype) for x in xs]
    check_shapes_kept(node, state, jax.eval_shape(step_jit, carry, example)[0][0], "scan's state")
    if frames == 0:
        ys = [_empty_frames(node, j) for j in range(num_ys)]
        final = carry
    else:
        final, ys = jax.lax.scan(step_jit, carry, xs, length=frames)
    lowering.errors = final[1]
    if node.attrs["return_tensor_arrays"]:
        ys = [_as_list(lowering, output, y, jnp.int32(frames)) for output, y in zip(node.outputs, ys)]
    return list(ys) + list(final[0]) + [np.int32(frames)]


def _as_list(lowering, output, rows, length) -> Buffer:
    """Frames as a TensorArray's buffer, padded to the capacity its later writes need."""
    import jax.numpy as jnp
    capacity = lowering.layout(output).capacity
    if capacity > rows.shape[0]:
        rows = jnp.concatenate([rows, jnp.zeros((capacity - rows.shape[0],) + rows.shape[1:], rows.dtype)])
    return Buffer(rows, length)


def _empty_frames(node, index):
    import jax.numpy as jnp
    frame = node.attrs["ys_frames"][index]
    dtype = node.attrs["body"].outputs[index].dtype.as_numpy_dtype
    return jnp.zeros((0,) + tuple(frame.as_list()), dtype)


def _masked(lowering, node, groups, xs, state, limit) -> list:
    """The reference semantics as ``lax.while_loop``s: one over every entry (masked), or, for a batched scan
    that may compact and whose cost rule says so (`scan_form`), one per stage of halving size."""
    import jax
    import jax.numpy as jnp
    attrs = node.attrs
    cond, body, num_ys = attrs["cond"], attrs["body"], attrs["num_ys"]
    rank = attrs["cond_dims"].rank or 0
    has_cond, before = attrs["has_cond"], attrs["cond_before_body"]
    bound = int(limit) if is_static(limit) else trip_count(node).upper
    capacity = (lowering.facts.capacities or {}).get(node) if bound is None else None  # `growth`: see above
    bound = capacity if bound is None else bound
    if num_ys and bound is None:
        raise unsupported(node, "a scan that collects ys and stops on its cond, with no bound on its frames,", (
            "XLA preallocates the ys: give max_seq_len (or xs, or spatial_dim), or run on backend='numpy'"))
    entries = tuple(state[0].shape[:rank]) if rank else ()
    if bound == 0:  # no frame runs (and no body can be traced to write into zero rows)
        ys = [jnp.zeros((0,) + entries + tuple(_frame_dims(node, j, rank)), body.outputs[j].dtype.as_numpy_dtype)
              for j in range(num_ys)]
        outputs = [_as_list(lowering, output, y, jnp.int32(0)) if attrs["return_tensor_arrays"] else y
                   for output, y in zip(node.outputs, ys)]
        return outputs + list(state) + [jnp.zeros(entries, jnp.int32)]
    limit = jnp.asarray(np.iinfo(np.int32).max if limit is None else limit, jnp.int32)  # None: only cond stops it
    staged = rank and jax_form(node)[0] == "stages"
    sizes = stage_sizes(entries[0]) if staged else [None]

    def frame(step, rows):
        """Frame `step` of xs for the working `rows` (None: every row)."""
        x = [jax.lax.dynamic_index_in_dim(x, step, keepdims=False) for x in xs]
        return x if rows is None else [values[rows] for values in x]

    def test(step, values, errors, previous, rows):
        """Whether frame `step` runs, as numpy decides it; the error state after the cond."""
        shape = entries if rows is None else (rows.shape[0],) + entries[1:]
        if not has_cond:
            return jnp.ones(shape, bool), errors
        x = frame(jnp.maximum(step - 1, 0), rows) if previous else frame(step, rows)
        (result,), errors = run_subgraph(lowering, cond, x + list(values) + list(groups.cond_captures), errors)
        return jnp.broadcast_to(jnp.asarray(result, bool), shape), errors

    def still(step, active, values, errors, rows):
        """The entries active at frame `step` (before it runs), tested only where numpy tests."""
        def tested(step, active, values, errors):
            result, errors = test(step, values, errors, not before, rows)
            return active & result, errors

        if not has_cond:
            return active, errors
        return jax.lax.cond(step < limit, tested, lambda s, a, v, e: (a, e), step, active, values, errors)

    ys = [jnp.zeros((bound,) + entries + tuple(_frame_dims(node, j, rank)), body.outputs[j].dtype.as_numpy_dtype)
          for j in range(num_ys)]
    active = jnp.ones(entries, bool)
    errors = lowering.errors
    if before:
        active, errors = still(jnp.int32(0), active, state, errors, None)
    carry = (jnp.int32(0), active, jnp.zeros(entries, jnp.int32), tuple(state), ys, errors)
    for position, size in enumerate(sizes):
        next_size = sizes[position + 1] if position + 1 < len(sizes) else 0
        carry = _stage(lowering, node, groups, carry, position and size, next_size, frame, still, limit, capacity)
    step, _, lengths, values, ys, lowering.errors = carry
    if not rank:
        lengths = step
    if attrs["return_tensor_arrays"]:
        outputs = [_as_list(lowering, output, y, step) for output, y in zip(node.outputs, ys)]
    else:
        exact = trip_count(node).exact
        outputs = [y[:exact] if exact is not None else Padded(y, step, node) for y in ys]
    return outputs + list(values) + [lengths]


def _stage(lowering, node, groups, carry, size, next_size, frame, still, limit, capacity=None):
    """One ``lax.while_loop`` over `size` working rows (0: every row, in place), the most active ones gathered
    to the front; it stops when `next_size` rows (0: none) would hold the active ones, and writes its rows back.
    A frame past a provisional `capacity` fails the run (which grows it), never cuts the scan short."""
    import jax
    import jax.numpy as jnp
    body, num_ys, rank = node.attrs["body"], node.attrs["num_ys"], node.attrs["cond_dims"].rank or 0
    step, active, lengths, values, ys, errors = carry
    rows = None
    if size:  # the active rows first (stable: in order), then finished ones to fill the stage
        rows = jnp.argsort(~_row_active(active), stable=True)[:size]
        active, lengths, values = active[rows], lengths[rows], tuple(v[rows] for v in values)

    def cond_fn(carry):
        step, active, _, _, _, errors = carry
        going = (step < limit) & jnp.any(active)
        if next_size:
            going = going & (jnp.count_nonzero(_row_active(active)) > next_size)
        return going & errors.ok if errors is not None else going

    def body_fn(carry):
        step, active, lengths, values, ys, errors = carry
        if capacity is not None:
            errors = errors.fail(lowering.facts.capacity_sites[node], step >= capacity)
        results, errors = run_subgraph(lowering, body, frame(step, rows) + list(values) + list(groups.body_captures),
                                       errors)
        new = [lowering.facts.carry_value(r, p) for r, p in zip(results[num_ys:], body.inputs[len(groups.xs):])]
        if rank:
            check_shapes_kept(node, values, new, "scan's state")
            new = [jnp.where(_mask(active, v), v, old) for v, old in zip(new, values)]
        frames = [jnp.where(_mask(active, jnp.asarray(y)), y, jnp.zeros((), y.dtype)) for y in results[:num_ys]]
        if rows is None:
            ys = [jax.lax.dynamic_update_index_in_dim(buffer, f.astype(buffer.dtype), step, 0)
                  for buffer, f in zip(ys, frames)]
        else:  # the rows not worked on are finished: their frames stay zeros
            ys = [buffer.at[step, rows].set(f.astype(buffer.dtype)) for buffer, f in zip(ys, frames)]
        lengths = lengths + active.astype(jnp.int32)
        step = step + 1
        active, errors = still(step, active, new, errors, rows)
        return step, active, lengths, tuple(new), ys, errors

    body_jit = jax.jit(body_fn)
    inner = (step, active, lengths, values, ys, errors)
    check_shapes_kept(node, values, jax.eval_shape(body_jit, inner)[3], "scan's state")
    step, inner_active, inner_lengths, inner_values, ys, errors = jax.lax.while_loop(cond_fn, body_jit, inner)
    if rows is None:
        return step, inner_active, inner_lengths, inner_values, ys, errors
    full_active, full_lengths, full_values = carry[1], carry[2], carry[3]
    return (step, full_active.at[rows].set(inner_active), full_lengths.at[rows].set(inner_lengths),
            tuple(v.at[rows].set(w) for v, w in zip(full_values, inner_values)), ys, errors)


def _row_active(active):
    """Whether each row (axis 0) holds an active entry."""
    import jax.numpy as jnp
    return jnp.any(active.reshape(active.shape[0], -1), axis=1)


def _frame_dims(node, index, rank):
    frame = node.attrs["ys_frames"][index]
    dims = frame.as_list()[rank:] if rank else frame.as_list()
    if any(d is None for d in dims):
        raise unsupported(node, f"the ys frame {index} of this scan has the shape {frame}, not fully known when "
                                f"compiling, so it", "give its template a full shape")
    return dims


def _mask(active, value):
    """`active` with axes of size 1 appended to broadcast against `value` (entries on its leading axes)."""
    import jax.numpy as jnp
    value = jnp.asarray(value)
    return active.reshape(active.shape + (1,) * (value.ndim - active.ndim))
