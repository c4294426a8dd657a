"""The gradient of a compacted batched ``Scan``: a backward pass in which each entry runs its own trip count.

Entry ``b`` of a batched scan ran its body ``L_b`` times, from state
``s_0[b]`` to ``s_{L_b}[b]``. Its backward pass is ``L_b`` steps too, from
its last frame down to its first, and the entries are independent (the
forward was proven so: `autoloop.control_flow.scan_entries`), so the
backward runs as a batched scan of its own, aligned on each entry's end:

1. forward: the same scan (compacted as before), which also keeps the
   state each frame started from as extra ys: ``S[t, b] = s_t[b]``;
2. backward: a batched scan whose entry ``b`` runs ``t = L_b - 1, ..., 0``
   (its cond: ``t >= 0``). A step gathers row ``(t, b)`` of ``S``, of
   ``xs`` and of the ys' cotangents, runs the body there again, and takes
   its vector-Jacobian product: the cotangent of ``s_t[b]`` becomes the
   next step's state; it collects the cotangent it started from and that of
   ``x_t[b]`` as ys. Its body is proven per entry like any scan's, so it
   is compacted too: an entry that ran 3 frames stops after 3 backward
   steps, and the work follows the sum of the lengths;
3. captured tensors (``W`` in ``h @ W``) collect a sum over every frame of
   every entry: the body runs once more, on the ``sum(L)`` active
   ``(t, b)`` pairs as one batch, and one vector-Jacobian product gives
   their gradients (a single large product instead of one per frame).

A backend with static shapes (XLA, ``backend="jax"``) takes the same three
steps with the shapes fixed while compiling:

- the frames stacked by steps 1 and 2 (a number known only when they run)
  are read padded with zeros to the scan's bound ``T`` (`pad_rows`; the
  length of ``xs``, ``spatial_dim`` or ``max_seq_len``; without one, to
  the capacity the backend gives the forward scan's ys and grows when a
  run needs more: `autoloop.backends.jax.growth`), and the backward scan
  is bounded by ``T`` (the padded frames' rows) too;
- step 3 runs in chunks of ``4 B`` pairs (a ``while`` loop of
  ``ceil(sum(L) / 4 B)`` iterations, each one vector-Jacobian product
  summed into the gradients); the last chunk repeats a pair, with a zero
  cotangent, to fill its rows;
- the two scans are lowered like any batched scan, in stages or masked
  as the cost rule of `autoloop.backends.jax.scan_form` says; the same
  rule (`jax_gradient_form`) takes this form only where the forward runs
  in stages and a step has work enough to pay for the saved frames (else
  the masked gradient is the faster one).

It applies to a scan that compacts (``compaction="compact"``) with one
entry axis, without TensorArray results. Otherwise the Scan's gradient
runs masked (`autoloop.autodiff.scan_grad`). Both give the same gradients.
"""

from __future__ import annotations

from autoloop.arguments import TensorSpec
from autoloop.autodiff.graph_backprop import graph_gradients
from autoloop.autodiff.replay import inline
from autoloop.autodiff.residuals import captured_from
from autoloop.ir import context, control_flow
from autoloop.ir.trips import trip_count
from autoloop.ops.api import (concat, cumsum, gather, greater_equal, less, maximum, minimum, range as arange,
                              reduce_sum, reshape, shape, where, zeros, zeros_like)
from autoloop.ops.dispatch import convert, graph_value
from autoloop.ops.resize_ops import pad_rows
from autoloop.ops.sequence_ops import searchsorted
from autoloop.tensor import Tensor


# Step 3 on static shapes: pairs per chunk, in entries. 64 entries of tanh(h @ W) (256 wide, sum(L) 4,204): 1, 4
# and 16 ran within 3% of each other; 16 entries (sum(L) 414): 4 took 0.77x the time of 1 and 0.8x that of 16.
CHUNK_ENTRIES = 4


def applies(node) -> bool:
    """Whether the Scan `node`'s gradient may take the compacted form (see the module docstring)."""
    attrs = node.attrs
    if attrs["compaction"] != "compact" or attrs["cond_dims"].rank != 1 or attrs["return_tensor_arrays"]:
        return False
    if not static_shapes(node):
        return True
    from autoloop.backends.jax.scan_form import jax_gradient_form  # the static-shape backend's cost rule (IR only)
    return jax_gradient_form(node)[0] == "compacted"


def static_shapes(node) -> bool:
    """Whether `node`'s graph is compiled with static shapes (`autoloop.backends.Backend.static_shapes`)."""
    root = node.graph
    while root.parent is not None:
        root = root.parent
    return root.static_shapes


def _bound(node):
    """The most frames the Scan `node` runs, known while tracing (None: unknown: the capacity the backend grows),
    on a backend with static shapes; False on one without (nothing is padded there)."""
    return trip_count(node).upper if static_shapes(node) else False


def forward(node) -> tuple[list, list]:
    """The Scan `node`'s outputs, computed again (in the graph being built) by a scan that also keeps the state
    each frame started from: ``(outputs, starts)``, `starts` stacked ``[T, B, ...]`` like ys (padded to the
    bound where shapes are static: so saved, they are arrays like any other)."""
    groups = control_flow.operands(node)
    outputs, starts = _forward(node, groups, [Tensor(value=v) for v in groups.xs],
                               [Tensor(value=v) for v in groups.initial])
    return outputs, [_padded(s, _bound(node)) for s in starts]


def backward(node, outputs, starts, grads, residuals) -> list:
    """The gradients of the Scan `node`'s inputs (one per input, None where none flows), built in the graph
    being built, given `grads` (one per output of `node`); `outputs` and `starts` are `forward`'s, read
    through `residuals` (`autoloop.autodiff.residuals`)."""
    groups = control_flow.operands(node)
    body, num_ys = node.attrs["body"], node.attrs["num_ys"]
    bound = _bound(node)
    # the final state and lengths only: ys (a stack of run-time length on XLA) are no residual of the backward
    final, lengths = [residuals.value(t._value) for t in outputs[num_ys:-1]], residuals.value(outputs[-1]._value)
    entries = shape(lengths)[0]

    frames = [_flat(residuals.value(s._value)) for s in starts]
    xs = [residuals.value(v) for v in groups.xs]
    xs_flat = [_flat(x) for x in xs]
    ys_grads = [_flat(_padded(g, bound)) if g is not None else None for g in grads[:num_ys]]
    # Only floating-point state and xs carry cotangents (a counter in the state gets none).
    floating = [k for k, s in enumerate(final) if s.dtype.is_floating]
    float_xs = [k for k, x in enumerate(xs) if x.dtype.is_floating]
    state_grads = [grads[num_ys + k] if grads[num_ys + k] is not None else zeros_like(final[k]) for k in floating]

    def captured(placeholder):
        return residuals.value(captured_from(body, placeholder))

    def rerun(graph, position):
        """The body on the rows `position` of the flattened frames: ``(outputs, states, xs, the new nodes)``."""
        states = [gather(f, position) for f in frames]
        x = [gather(v, position) for v in xs_flat]
        before = {id(n) for n in graph.nodes}
        results = inline(body, dict(zip(body.inputs, x + states)), body.outputs, captured)
        made = {id(n) for n in graph.nodes} - before
        return results, states, x, made

    def vjp(graph, results, wrt, cotangents, made):
        wanted = [(r, c) for r, c in zip(results, cotangents) if c is not None and r.dtype.is_floating]
        return graph_gradients(graph, [r for r, _ in wanted], wrt, [c for _, c in wanted],
                               unconnected_gradients="zero", node_filter=lambda n: id(n) in made)

    def state_cotangents(incoming) -> list:
        """The cotangents of the body's new state: `incoming` for the floating-point values, None elsewhere."""
        by_position = dict(zip(floating, incoming))
        return [by_position.get(k) for k in range(len(final))]

    def back_body(_, state):
        t, entry, incoming = state[0], state[1], list(state[2:])
        position = maximum(t, 0) * entries + entry  # a finished entry (t = -1) is masked, if not dropped
        graph = context.current_graph()
        results, states, x, made = rerun(graph, position)
        cotangents = [gather(g, position) if g is not None else None for g in ys_grads] + state_cotangents(incoming)
        wrt = [states[k] for k in floating] + [x[k] for k in float_xs]
        found = vjp(graph, results, wrt, cotangents, made)
        for grad, value in zip(found, wrt):
            grad.set_shape(value.shape)  # what a broadcast's gradient computes from run-time shapes
        return incoming + found[len(floating):], [t - 1, entry] + found[:len(floating)]

    specs = [TensorSpec(final[k].shape, final[k].dtype) for k in floating]
    specs += [TensorSpec(xs[k].shape[1:], xs[k].dtype) for k in float_xs]
    start = [lengths - 1, arange(entries)] + state_grads
    # no entry runs more frames backward than forward: as many as the saved frames' rows (the forward's capacity)
    limit = {"max_seq_len": shape(residuals.value(starts[0]._value))[0] if bound is None else bound} if bound is not False else {}
    back_ys, back_final, _ = _scan(back_body, start, specs, lambda _, s: greater_equal(s[0], 0), node,
                                   "backward", **limit)
    back_ys = [_padded(y, bound) for y in back_ys]
    initial_grads = dict(zip(floating, back_final[2:]))
    incoming, x_back = back_ys[:len(floating)], back_ys[len(floating):]
    x_grads = dict(zip(float_xs, [_forward_order(g, lengths, entries, shape(xs[k])[0])
                                  for g, k in zip(x_back, float_xs)]))
    chunk = CHUNK_ENTRIES * lengths.shape[0] if bound is not False else None
    incoming_flat = [_flat(g) if g is not None else None for g in state_cotangents(incoming)]  # outside any loop
    capture_grads = _capture_gradients(body, captured, rerun, vjp, ys_grads, incoming_flat, lengths, entries, chunk)
    return _by_input(node, groups, [x_grads.get(k) for k in range(len(xs))],
                     [initial_grads.get(k) for k in range(len(final))], capture_grads)


def _forward(node, groups, xs, initial):
    """The scan again, its ys followed by the state each frame started from; ``(outputs, starts)``."""
    attrs = node.attrs
    cond, body, num_ys = attrs["cond"], attrs["body"], attrs["num_ys"]
    count = len(xs)

    def run(graph, x, state):
        params = dict(zip(graph.inputs[:count + len(state)], list(x or []) + list(state)))
        return inline(graph, params, graph.outputs, lambda p: Tensor(value=captured_from(graph, p)))

    def body_fn(x, state):
        results = run(body, x, state)
        return results[:num_ys] + list(state), results[num_ys:]

    specs = [TensorSpec(frame, y.dtype) for frame, y in zip(attrs["ys_frames"], body.outputs)]
    specs += [TensorSpec(p.shape, p.dtype) for p in body.inputs[count:count + len(initial)]]
    limits = {key: Tensor(value=values[0]) for key, values in (("spatial_dim", groups.spatial_dim),
                                                              ("max_seq_len", groups.max_seq_len)) if values}
    test = (lambda x, state: run(cond, x, state)[0]) if attrs["has_cond"] else None
    ys, final, lengths = _scan(body_fn, initial, specs, test, node, "forward", xs=xs or None,
                               cond_before_body=attrs["cond_before_body"], **limits)
    return ys[:num_ys] + final + [lengths], ys[num_ys:]


def _scan(body, initial, specs, cond, node, part, xs=None, **options):
    """A compacted batched scan over lists (`autoloop.control_flow.scan`), named after `node`, and marked as a part
    of its gradient (``_gradient_of``: the cost rule on static shapes differentiates it compacted again, since
    the masked gradient of a body with gradients inside cannot compile there)."""
    from autoloop.control_flow.scan import scan
    entries = node.attrs["cond_dims"]
    ys, final, lengths = scan(body=lambda x, s: tuple(body(x, list(s))), initial=list(initial), xs=xs,
                              ys=list(specs), cond=(lambda x, s: cond(x, list(s))) if cond else None,
                              cond_dims=entries.as_list(), name=f"{node.name}_{part}", **options)
    lengths._value.node.attrs["_gradient_of"] = node.name
    return list(ys), list(final), lengths


def _padded(stacked, bound):
    """Frames a scan stacked, ``[T, B, ...]``, padded to `bound` rows (None: to the backend's capacity; False:
    as they are)."""
    return pad_rows(stacked, bound) if bound is not False else stacked


def _flat(frames):
    """``[T, B, ...]`` frames as ``[T * B, ...]`` rows: row ``t * B + b`` is entry b's frame t."""
    dims = frames.shape.as_list()[2:]
    if None not in dims:  # static: the rows keep their known shape
        return reshape(frames, [-1] + dims)
    return reshape(frames, concat([convert([-1]), shape(frames)[2:]], 0))


def _forward_order(backward, lengths, entries, frames):
    """Frames collected backward (row k of entry b is its frame ``L_b - 1 - k``) put back in order, as `frames`
    frames with zeros after each entry's length."""
    flat = _flat(backward)
    zero_row = shape(flat)[0]  # a row of zeros after the frames: what a frame after an entry's length reads
    padded = concat([flat, zeros(concat([convert([1]), shape(flat)[1:]], 0), flat.dtype)], 0)
    t = reshape(arange(frames), [-1, 1])
    k = reshape(lengths, [1, -1]) - 1 - t  # [frames, B]
    position = where(greater_equal(k, 0), k * entries + reshape(arange(entries), [1, -1]), zero_row)
    return reshape(gather(padded, reshape(position, [-1])), concat([shape(k), shape(backward)[2:]], 0))


def _capture_gradients(body, captured, rerun, vjp, ys_grads, incoming, lengths, entries, chunk) -> dict:
    """Outer captured value -> its gradient: the body once more on every active ``(t, b)`` pair, in one batch
    (`chunk` None), or in a loop over batches of `chunk` pairs (static shapes). `ys_grads` and `incoming` (the
    cotangents of the ys and of the new state) are flattened rows, as `_flat` gives them."""
    floating = {outer: p for outer, p in body.captures.items() if outer.dtype.is_floating}
    if not floating:
        return {}
    values = [captured(p) for p in floating.values()]
    ends = cumsum(lengths)  # the pairs numbered entry by entry: entry b's are ends[b] - L_b, ..., ends[b] - 1
    total = reduce_sum(lengths)

    def summed(numbers, valid):
        """The captured values' gradients summed over the pairs `numbers` (their cotangents zero where not
        `valid`; None: all are)."""
        graph = context.current_graph()  # where the backward is built (a Jacobian's row loop, a chunk loop)
        entry = searchsorted(ends, numbers, side="right")
        t = numbers - gather(ends, entry) + gather(lengths, entry)
        k = gather(lengths, entry) - 1 - t  # the backward step that ran frame t
        results, _, _, made = rerun(graph, t * entries + entry)
        cotangents = [gather(g, t * entries + entry) if g is not None else None for g in ys_grads]
        cotangents += [gather(g, k * entries + entry) if g is not None else None for g in incoming]
        if valid is not None:
            cotangents = [_rows_where(valid, c) if c is not None else None for c in cotangents]
        wrt = [Tensor(value=graph_value(graph, v)) for v in values]  # a chunk loop's captures of them
        found = vjp(graph, results, wrt, cotangents, made)
        for grad, value in zip(found, values):
            grad.set_shape(value.shape)
        return found

    if chunk is None:
        return dict(zip(floating, summed(arange(total), None)))
    from autoloop.control_flow.while_loop import while_loop

    def step(first, sums):
        numbers = first + arange(chunk)
        found = summed(minimum(numbers, total - 1), less(numbers, total))  # a last, partial chunk repeats a pair
        return first + chunk, [s + g for s, g in zip(sums, found)]

    _, sums = while_loop(lambda first, _: less(first, total), step, (convert(0), [zeros_like(v) for v in values]))
    return dict(zip(floating, sums))


def _rows_where(valid, value):
    """`value` with the rows (axis 0) where `valid` is false set to zero."""
    return where(reshape(valid, [-1] + [1] * (value.shape.rank - 1)), value, zeros_like(value))


def _by_input(node, groups, x_grads, initial_grads, capture_grads) -> list:
    """One gradient per input of `node` (each value once: a capture in both sub-graphs gets it once)."""
    by_value = dict(zip(groups.xs, x_grads))
    by_value.update(zip(groups.initial, initial_grads))
    by_value.update(capture_grads)
    grads, seen = [], set()
    for value in node.inputs:
        grads.append(by_value.get(value) if value not in seen else None)
        seen.add(value)
    return grads
