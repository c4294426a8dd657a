"""Captured per-entry tensors of a batched scan: found from how they are used, then carried in the state.

A scan with ``cond_dims=[B]`` often reads a tensor of the entries from
around it, as RETURNN code does with sequence lengths::

    scan(..., cond=lambda x, s: s.t < lengths, cond_dims=[B])      # lengths: [B], captured

Compaction runs cond and body on the rows of the entries still active, so a
captured ``[B]`` tensor would no longer line up with the state. It is *per
entry* when its uses say so: an element-wise op combines it with a
per-entry value of the same rank, which lines its axis 0 up with the
entries (a bias of shape ``[H]`` broadcasts against the trailing axis
instead, and is shared even when ``H == B``); and then, with it taken as
per-entry rows from the start, every use passes the entrywise analysis
(`autoloop.control_flow.scan_entries`: a reduction over its axis 0, say,
would mix entries). Its size alone proves nothing and is only what makes
it a candidate. A proven capture then becomes one more state value of the
scan, passed through unchanged, so that compaction gathers it with its
entries; the caller drops it from the results.

    >>> moved = carry_per_entry_captures(draft, cond_graph, body_graph)   # [lengths]
"""

from __future__ import annotations

from autoloop.control_flow import scan_entries
from autoloop.ir import control_flow


def capture_entry_constants(draft, outer) -> None:
    """Turn the constants of the draft's cond and body with the entries' size on axis 0 into captures.

    A tensor closed over from eager code (``lengths = constant([...])``) is
    traced as a constant inside the sub-graph; as a value of `outer` read by
    the sub-graph it is a capture like any other, whose uses can prove it
    per entry. The same value either way.
    """
    from autoloop.ir import rewrite
    from autoloop.ops.dispatch import constant_node
    entries = draft.attrs["cond_dims"]
    for key in ("cond", "body"):
        graph = draft.attrs[key]
        for node in list(graph.nodes):
            value = node.outputs[0] if node.op == "Const" else None
            if value is None or not value.shape.rank or not value.shape[:entries.rank].is_compatible_with(entries):
                continue
            captured = graph.capture(constant_node(outer, node.attrs["value"]))
            rewrite.replace_all_uses(value, captured)
        rewrite.remove_dead_nodes(graph)
    groups = control_flow.operands(draft)
    inputs, sizes = control_flow.join(
        "Scan", **dict(groups, cond_captures=tuple(draft.attrs["cond"].captures),
                       body_captures=tuple(draft.attrs["body"].captures)))
    draft.inputs = tuple(inputs)
    draft.attrs.update(sizes)


def per_entry_captures(draft) -> list:
    """The outer values captured by the Scan `draft` that are per entry (see the module docstring)."""
    return _search(draft)[0]


def blocker(draft) -> str | None:
    """Why `draft` cannot compact even with its candidate captures taken per entry (None: it can)."""
    return _search(draft)[1]


def _search(draft):
    """``(per-entry captures, what still mixes entries with every candidate taken per entry)``."""
    entries = draft.attrs["cond_dims"]
    candidates = []
    for key in ("cond", "body"):
        for outer in draft.attrs[key].captures:
            shape = outer.shape
            if (outer not in candidates and shape.rank is not None and shape.rank >= entries.rank
                    and shape[:entries.rank].is_compatible_with(entries)):
                candidates.append(outer)
    problem = scan_entries.entrywise_problem(draft)
    if not candidates or problem is None:
        return [], problem
    adopted: set = set()
    scan_entries.entrywise_problem(draft, candidates=set(candidates), adopted=adopted)
    if not adopted:
        return [], problem
    remaining = scan_entries.entrywise_problem(draft, per_entry=adopted)  # every use, from the start
    return ([], remaining) if remaining is not None else ([c for c in candidates if c in adopted], None)


def carry_in_state(draft, outers: list) -> None:
    """Make each of `outers` (values captured by the Scan `draft`) a state value its body passes through.

    Edits the draft's sub-graphs in place: a capture placeholder becomes a
    state parameter (entries on axis 0 left unknown, like every state
    value's), a sub-graph that did not read the value gets a parameter for
    it, and the body returns it unchanged. The draft's operand groups follow.
    """
    from autoloop.shapes import TensorShape
    groups = control_flow.operands(draft)
    position = len(groups.xs) + len(groups.initial)
    for key in ("cond", "body"):
        graph = draft.attrs[key]
        params = []
        for outer in outers:
            shape = TensorShape([None]).concatenate(outer.shape[1:])
            placeholder = graph.captures.pop(outer, None)
            if placeholder is None:
                placeholder = graph.add_input(outer.dtype, shape, name="state")
            placeholder.shape = shape
            placeholder.node.attrs["shape"] = shape
            graph.inputs.remove(placeholder)
            params.append(placeholder)
        graph.inputs[position:position] = params
        if key == "body":
            graph.outputs = graph.outputs + params
        _reinfer_after(graph, params)
    inputs, sizes = control_flow.join(
        "Scan", **dict(groups, initial=tuple(groups.initial) + tuple(outers),
                       cond_captures=tuple(draft.attrs["cond"].captures),
                       body_captures=tuple(draft.attrs["body"].captures)))
    draft.inputs = tuple(inputs)
    draft.attrs.update(sizes)


def _reinfer_after(graph, changed: list) -> None:
    """Re-derive the shapes of the nodes that read the `changed` values (now with unknown entries), in order."""
    from autoloop.ops.dispatch import infer_node
    changed = {id(v) for v in changed}
    for node in graph.nodes:
        if node.op == "Placeholder" or not any(id(v) in changed for v in node.inputs):
            continue
        declared = control_flow.lookup(node.op)
        inferred = declared.infer(node) if declared is not None else infer_node(node)
        for value, (_, shape) in zip(node.outputs, inferred):
            if shape != value.shape:
                value.shape = shape
                changed.add(id(value))

