"""Captured per-entry tensors of a batched scan: found from how they are used, then carried in the state.

A scan with ``cond_dims=[B]`` often reads a tensor of the entries from
around it, as RETURNN code does with sequence lengths::

    scan(..., cond=lambda x, s: s.t < lengths, cond_dims=[B])      # lengths: [B], captured

Compaction runs cond and body on the rows of the entries still active, so a
captured ``[B]`` tensor would no longer line up with the state. It is *per
entry* when treating it as such keeps every row apart: with the captured
values taken as per-entry rows, the cond and body pass the entrywise
analysis (`autoloop.control_flow.scan_entries`), which checks each use (an
element-wise op meeting the state's rows at the same rank lines its axis 0
up with the entries; a bias of shape ``[H]`` broadcasts against the
trailing axis instead, and a reduction over its axis 0 mixes entries, so
neither is taken). Its size alone proves nothing and is only what makes it
a candidate. A proven capture then becomes one more state value of the
scan, passed through unchanged, so that compaction gathers it with its
entries; the caller drops it from the results.

    >>> moved = carry_per_entry_captures(draft, cond_graph, body_graph)   # [lengths]
"""

from __future__ import annotations

from autoloop.control_flow import scan_entries
from autoloop.ir import control_flow


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
    remaining = scan_entries.entrywise_problem(draft, per_entry=set(candidates))
    return ([], remaining) if remaining is not None else (candidates, None)


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

