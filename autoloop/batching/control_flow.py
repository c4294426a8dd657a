"""Batching rules of ``While`` and ``Cond``: each entry runs its own trip count and takes its own branch.

``While`` (after finding which loop variables become per entry: a variable
is batched when its initial value is, or when the body makes it so, to a
fixed point):

- a condition shared by every entry (and no branch mask, below) stays one
  `while_loop` over batched loop variables;
- a condition that differs per entry becomes a `scan` with
  ``cond_dims=[entries]``: each entry stops when its own condition fails,
  and its state stops changing. Batched captures travel in the scan's state
  so that they follow their entries. Where the batched body provably treats
  entries independently (`autoloop.control_flow.scan_entries`), the scan
  drops finished entries (*compaction*: the work follows the sum of the
  trip counts); otherwise it masks them (batch x longest). ``autoloop run
  --explain`` says which, and why.

``Cond`` with a shared predicate stays a `cond` whose branches are batched.
With a per-entry predicate both branches run and ``where(pred, t, f)``
picks each entry's result; inside a branch, the entries that did not take
it are *inactive* (`Batching.active`): every loop there is a per-entry one
whose condition is false for them, so they run no iterations (a loop that
would not end for an entry that does not take the branch does not hang).

    >>> while x > 1: x = x / 2        # x per entry: scan(cond=x > 1, cond_dims=[B]), compacted
"""

from __future__ import annotations

from autoloop.batching import rules
from autoloop.batching.entries import Batching, Unbatchable, with_rank
from autoloop.batching.interpreter import batch_call, batched_shape
from autoloop.ir import context, control_flow
from autoloop.ir.graph import Graph
from autoloop.ops.dispatch import apply
from autoloop.ops.location import format_location
from autoloop.tensor import Tensor


def rule_for(node, caller: str = "vectorized_map"):
    rule = _RULES.get(node.op)
    if rule is None:
        raise Unbatchable(
            f"{caller} cannot batch a {node.op} (node {node.name}, created at {format_location(node.location)}) "
            f"yet; call it outside the function given to vectorized_map, or use map_fn")
    return rule


def _split(node, values, flags):
    return control_flow.split(node, list(zip(values, flags)))


def _tensors(pairs) -> list:
    return [tensor for tensor, _ in pairs]


def _flags(pairs) -> list:
    return [flag for _, flag in pairs]


def _as_batched(tensor, flag: bool, batching: Batching):
    return tensor if flag else batching.broadcast(tensor)


# -- While --------------------------------------------------------------------------------------
def batch_while(node, values, flags, batching: Batching):
    groups = _split(node, values, flags)
    count = node.attrs["num_loop_vars"]
    cond_graph, body_graph = node.attrs["cond"], node.attrs["body"]
    loop_flags = _loop_flags(node, groups, batching)
    cond_flag = _probe(cond_graph, count, loop_flags, groups.cond_captures, batching)[0]
    limit = _tensors(groups.maximum_iterations)
    if cond_flag or batching.active is not None:
        return _per_entry_loop(node, groups, batching, limit[0] if limit else None)
    from autoloop.control_flow.while_loop import while_loop
    invariants = [batched_shape(p.shape, batching.size) if want else p.shape
                  for p, want in zip(body_graph.inputs[:count], loop_flags)]
    initial = [_pinned(_as_batched(t, flag, batching), shape) if want else t
               for (t, flag), want, shape in zip(groups.loop_vars, loop_flags, invariants)]

    def cond(*loop_vars):
        return batch_call(cond_graph, list(loop_vars) + _tensors(groups.cond_captures),
                          loop_flags + _flags(groups.cond_captures), batching)[0][0]

    def body(*loop_vars):
        outputs, out_flags = batch_call(body_graph, list(loop_vars) + _tensors(groups.body_captures),
                                        loop_flags + _flags(groups.body_captures), batching)
        return [_pinned(_as_batched(t, flag, batching), shape) if want else t
                for t, flag, want, shape in zip(outputs, out_flags, loop_flags, invariants)]

    results = while_loop(cond, body, initial, shape_invariants=invariants,
                         maximum_iterations=limit[0] if limit else None, name=node.name)
    _explain(results[0], f"one loop for all entries at once ({batching.caller}): its condition is the same for "
                         f"every entry, the values that differ carry the entries on axis 0")
    return list(results), loop_flags


def _explain(result, text: str) -> None:
    """For ``autoloop run --explain``: what batching made of the loop that computed `result` (traced)."""
    if result.op is not None:
        result.op.attrs["_batched"] = text


def _pinned(tensor, shape):
    """`tensor` with the static `shape` where it knows less: a rule may lose the static number of entries
    (a reshape through a computed shape), which the batched loop's invariant states."""
    if not tensor.shape.is_compatible_with(shape):
        return tensor  # the loop reports it
    merged = tensor.shape.merge_with(shape)
    return tensor if merged == tensor.shape else apply("EnsureShape", [tensor], {"shape": merged})


def _loop_flags(node, groups, batching) -> list:
    """Which loop variables are per entry: batched initially, or made so by the body (a fixed point)."""
    flags = _flags(groups.loop_vars)
    while True:
        out_flags = _probe(node.attrs["body"], len(flags), flags, groups.body_captures, batching)
        widened = [a or b for a, b in zip(flags, out_flags)]
        if widened == flags:
            return flags
        flags = widened


def _probe(graph, count, loop_flags, captures, batching) -> list:
    """Which outputs of `graph` are batched for these loop-variable flags (batched in a scratch graph)."""
    scratch = Graph("batching_probe", context.current_graph())
    with context.building(scratch):
        params = [Tensor(value=scratch.add_input(p.dtype, batched_shape(p.shape, None) if flag else p.shape))
                  for p, flag in zip(graph.inputs[:count], loop_flags)]
        _, flags = batch_call(graph, params + _tensors(captures), list(loop_flags) + _flags(captures), batching)
    return flags


def _per_entry_loop(node, groups, batching, limit):
    """The loop as a scan with one condition per entry; see the module docstring."""
    from autoloop.control_flow.scan import scan
    from autoloop.ops.api import logical_and
    count = len(groups.loop_vars)
    cond_graph, body_graph = node.attrs["cond"], node.attrs["body"]
    initial = [_as_batched(t, flag, batching) for t, flag in groups.loop_vars]
    # Batched captures, and the mask of active entries, follow their entries in the state.
    carried = [t for t, flag in groups.cond_captures + groups.body_captures if flag]
    if batching.active is not None:
        carried.append(batching.active)
    inner = Batching(fallback=batching.fallback, warn=batching.warn, caller=batching.caller)

    cond_carried = sum(flag for _, flag in groups.cond_captures)

    def run(graph, state, pairs, offset):
        """`graph` batched over the entries still running, its batched captures read from the state at `offset`."""
        local = inner.over(state[0])
        extra = iter(state[offset:])
        captured = [next(extra) if flag else t for t, flag in pairs]
        outputs, flags = batch_call(graph, list(state[:count]) + captured, [True] * count + _flags(pairs), local)
        return [_as_batched(t, flag, local) for t, flag in zip(outputs, flags)]

    def cond(x, state):
        test = run(cond_graph, state, groups.cond_captures, count)[0]
        return logical_and(test, state[-1]) if batching.active is not None else test

    def body(x, state):
        return None, run(body_graph, state, groups.body_captures, count + cond_carried) + list(state[count:])

    size = batching.size if isinstance(batching.size, int) else None  # cond_dims: the static entries
    _, final, _ = scan(body=body, cond=cond, initial=initial + carried, cond_dims=[size], max_seq_len=limit,
                       name=node.name)
    if final[0].op is not None:  # traced: --explain names the Scan after the loop it batches
        final[0].op.attrs["_batching"] = "a while loop whose condition differs per entry"
    return list(final[:count]), [True] * count


# -- Cond ---------------------------------------------------------------------------------------
def batch_cond(node, values, flags, batching: Batching):
    groups = _split(node, values, flags)
    (pred, pred_flag), = groups.pred
    true_graph, false_graph = node.attrs["true_graph"], node.attrs["false_graph"]
    if not pred_flag:
        from autoloop.control_flow.cond import cond
        batched = any(flags) or batching.active is not None

        def branch(graph, pairs):
            outputs, out_flags = batch_call(graph, _tensors(pairs), _flags(pairs), batching)
            return [_as_batched(t, flag, batching) if batched else t for t, flag in zip(outputs, out_flags)]

        results = cond(pred, lambda: branch(true_graph, groups.true_captures),
                       lambda: branch(false_graph, groups.false_captures))
        return list(results), [batched] * len(node.outputs)
    from autoloop.ops.api import logical_and, logical_not, where
    taken = pred if batching.active is None else logical_and(batching.active, pred)
    not_taken = logical_not(pred) if batching.active is None else logical_and(batching.active, logical_not(pred))
    picked = []
    true_results = _branch(true_graph, groups.true_captures, batching.with_active(taken))
    false_results = _branch(false_graph, groups.false_captures, batching.with_active(not_taken))
    for value, when_true, when_false in zip(node.outputs, true_results, false_results):
        mask = with_rank(pred, 0, rules.unbatched_rank(value))
        picked.append(where(mask, when_true, when_false))
    return picked, [True] * len(node.outputs)


def _branch(graph, pairs, batching) -> list:
    outputs, flags = batch_call(graph, _tensors(pairs), _flags(pairs), batching)
    return [_as_batched(t, flag, batching) for t, flag in zip(outputs, flags)]


_RULES = {"While": batch_while, "Cond": batch_cond}
