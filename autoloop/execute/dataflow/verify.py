"""The verifier of the dataflow form: frames, loops and wiring.

``verify(graph)`` raises `DataflowGraphError` naming the first node that
breaks a rule:

- names are unique; every input and ordering edge comes from a node of the
  graph, and the edges stay in one frame, except that an ``Enter`` reads
  from the frame around its own and an ``Exit`` is read there;
- frames are well nested: each one's parent is a frame of the graph, the
  chain ends at the root, and each loop frame has Enters, one
  ``LoopCond`` and a positive ``parallel_iterations`` that its Enters repeat;
- a loop ``Merge`` has exactly two inputs, an Enter (not loop-invariant) of
  its frame and a ``NextIteration`` of its frame; a branch ``Merge`` has at
  least two inputs and no NextIteration; no Merge has ordering edges;
  a ``NextIteration`` is read only by loop Merges of its frame;
- a ``Switch`` takes a value and a boolean scalar and gives two outputs of
  the value's type; an ``Exit`` reads output 0 of a Switch on its frame's
  LoopCond;
- every node outside the root frame has an input or an ordering edge (so
  it belongs to an iteration), placeholders are in the root frame;
- without the back-edges (NextIteration into Merge) the graph has no cycle.

    >>> verify(lower(graph))
"""

from __future__ import annotations

from autoloop import dtypes


class DataflowGraphError(AssertionError):
    """A dataflow graph that breaks the form's rules (always a bug in autoloop)."""


def verify(graph) -> None:
    nodes = {id(node) for node in graph.nodes}
    frames = {id(frame) for frame in graph.frames}
    _check_frames(graph, frames)
    names = set()
    for node in graph.nodes:
        if node.name in names:
            _fail(node, "its name is not unique")
        names.add(node.name)
        if id(node.frame) not in frames:
            _fail(node, f"its frame {node.frame.name!r} is not one of the graph's frames")
        reads_from = node.frame.parent if node.op == "Enter" else node.frame
        if node.op == "Enter" and reads_from is None:
            _fail(node, "an Enter in the root frame")
        for value in node.inputs:
            if id(value.node) not in nodes:
                _fail(node, f"input {value.name} is not computed in this graph")
            if value.node.read_frame is not reads_from:
                _fail(node, f"input {value.name} comes from frame {value.node.read_frame.name!r}, "
                            f"expected {reads_from.name!r}")
        for before in node.control_inputs:
            if id(before) not in nodes or before.read_frame is not reads_from:
                _fail(node, f"ordering edge from {before.name}, which is not in frame {reads_from.name!r}")
        if node.frame is not graph.root and not node.inputs and not node.control_inputs:
            _fail(node, f"it is in frame {node.frame.name!r} but waits for nothing: it would not belong "
                        f"to an iteration")
        _RULES.get(node.op, _no_rule)(graph, node)
    for value in graph.outputs + graph.inputs:
        if value.node.read_frame is not graph.root:
            raise DataflowGraphError(f"graph input or output {value.name} is not in the root frame")
    _check_back_edges(graph)
    _check_acyclic(graph)


def _fail(node, problem: str):
    raise DataflowGraphError(f"node {node.name} ({node.op}) in frame {node.frame.name!r}: {problem}")


def _check_frames(graph, frames) -> None:
    if graph.root.parent is not None:
        raise DataflowGraphError("the root frame has a parent")
    for frame in graph.frames:
        seen = set()
        current = frame
        while current.parent is not None:
            if id(current) in seen or id(current.parent) not in frames:
                raise DataflowGraphError(f"frame {frame.name!r} is not nested in the graph's root frame")
            seen.add(id(current))
            current = current.parent
        if current is not graph.root:
            raise DataflowGraphError(f"frame {frame.name!r} is not nested in the graph's root frame")
    for frame in graph.frames[1:]:
        members = [n for n in graph.nodes if n.frame is frame]
        if sum(n.op == "LoopCond" for n in members) != 1:
            raise DataflowGraphError(f"frame {frame.name!r} does not have exactly one LoopCond")
        enters = [n for n in members if n.op == "Enter"]
        if not enters:
            raise DataflowGraphError(f"frame {frame.name!r} has no Enter")
        if frame.parallel_iterations < 1:
            raise DataflowGraphError(f"frame {frame.name!r} allows {frame.parallel_iterations} iterations")
        for enter in enters:
            if (enter.attrs.get("frame_name") != frame.name
                    or enter.attrs.get("parallel_iterations") != frame.parallel_iterations):
                _fail(enter, "its frame_name or parallel_iterations disagree with its frame")


def _arity(node, inputs: int, outputs: int) -> None:
    if len(node.inputs) != inputs or len(node.outputs) != outputs:
        _fail(node, f"takes {len(node.inputs)} inputs and gives {len(node.outputs)} outputs, expected "
                    f"{inputs} and {outputs}")


def _same_type(node, value, what: str) -> None:
    for output in node.outputs:
        if output.dtype is not value.dtype:
            _fail(node, f"output {output.name} is {output.dtype.name} but {what} {value.name} is {value.dtype.name}")


def _check_enter(graph, node) -> None:
    _arity(node, 1, 1)
    if not isinstance(node.attrs.get("is_constant"), bool):
        _fail(node, "has no boolean is_constant attribute")
    _same_type(node, node.inputs[0], "its input")


def _check_merge(graph, node) -> None:
    if node.control_inputs:
        _fail(node, "a Merge with ordering edges")
    if len(node.outputs) != 1:
        _fail(node, "a Merge gives one output")
    for value in node.inputs:
        _same_type(node, value, "input")
    kinds = [v.node.op for v in node.inputs]
    if node.attrs.get("loop"):
        entered, following = (node.inputs + [None, None])[:2]
        if (len(node.inputs) != 2 or kinds != ["Enter", "NextIteration"] or entered.node.frame is not node.frame
                or following.node.frame is not node.frame or entered.node.attrs["is_constant"]):
            _fail(node, f"a loop Merge must read one Enter and one NextIteration of its frame, it reads "
                        f"{', '.join(v.name for v in node.inputs)}")
    elif len(node.inputs) < 2 or "NextIteration" in kinds:
        _fail(node, "a branch Merge must read at least two values and no NextIteration")


def _check_switch(graph, node) -> None:
    _arity(node, 2, 2)
    pred = node.inputs[1]
    if pred.dtype is not dtypes.bool_ or pred.shape.rank not in (0, None):
        _fail(node, f"its predicate {pred.name} is not a boolean scalar")
    _same_type(node, node.inputs[0], "its data input")


def _check_exit(graph, node) -> None:
    _arity(node, 1, 1)
    switch = node.inputs[0]
    loop_cond = switch.node.inputs[1].node if switch.node.op == "Switch" else None
    if switch.index != 0 or loop_cond is None or loop_cond.op != "LoopCond" or loop_cond.frame is not node.frame:
        _fail(node, "an Exit must read output 0 of a Switch on its frame's LoopCond")


def _check_next_iteration(graph, node) -> None:
    _arity(node, 1, 1)


def _check_back_edges(graph) -> None:
    for reader in graph.nodes:
        for value in reader.inputs:
            following = value.node
            if following.op == "NextIteration" and (
                    reader.op != "Merge" or not reader.attrs.get("loop") or reader.frame is not following.frame):
                _fail(following, f"read by {reader.name}, which is not a loop Merge of its frame")


def _check_loop_cond(graph, node) -> None:
    _arity(node, 1, 1)
    value = node.inputs[0]
    if node.frame is graph.root or value.dtype is not dtypes.bool_ or value.shape.rank not in (0, None):
        _fail(node, "a LoopCond takes a boolean scalar, inside a loop frame")


def _check_placeholder(graph, node) -> None:
    if node.frame is not graph.root:
        _fail(node, "a placeholder outside the root frame")


def _check_token(graph, node) -> None:
    _arity(node, 0, 1)


def _no_rule(graph, node) -> None:
    pass


_RULES = {"Enter": _check_enter, "Merge": _check_merge, "Switch": _check_switch, "Exit": _check_exit,
          "NextIteration": _check_next_iteration, "LoopCond": _check_loop_cond,
          "Placeholder": _check_placeholder, "Token": _check_token}


def _check_acyclic(graph) -> None:
    """Kahn's algorithm over data and ordering edges, back-edges left out."""
    waiting = {}
    readers: dict[int, list] = {}
    for node in graph.nodes:
        before = [v.node for v in node.inputs if not (node.op == "Merge" and v.node.op == "NextIteration")]
        before += node.control_inputs
        waiting[id(node)] = len(before)
        for producer in before:
            readers.setdefault(id(producer), []).append(node)
    ready = [n for n in graph.nodes if waiting[id(n)] == 0]
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        for reader in readers.get(id(node), ()):
            waiting[id(reader)] -= 1
            if waiting[id(reader)] == 0:
                ready.append(reader)
    if done != len(graph.nodes):
        stuck = [n.name for n in graph.nodes if waiting[id(n)] > 0]
        raise DataflowGraphError(f"the graph has a cycle that is not a loop's back-edge, through {stuck[:5]}")
