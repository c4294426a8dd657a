"""The batching interpreter: a graph run once over many entries, op by op through batching rules.

`batch_call(graph, inputs, batched, batching)` computes `graph`'s outputs
for many entries at once. Each input is either *batched* (its entries on a
new axis 0: ``inputs[k][b]`` is entry b's value) or shared by every entry.
Walking the nodes in order, a node none of whose inputs is batched is
applied as it is (its result is shared); any other node goes through its
batching rule: an ordinary op's from `autoloop.batching.rules`, a
``While``'s or ``Cond``'s from `autoloop.batching.control_flow`. Rules
call ordinary ops, so inside a trace the batched computation becomes
graph nodes (and eagerly it runs at once): the interpreter is a graph ->
graph transformation like reverse mode, and composes with it.

An op without a rule for its inputs runs once per entry (a `map_fn` over
its batched inputs) when the `Batching` allows it (`fallback`); otherwise
it is a `ValueError` naming the op and the user's line. A `Batching`
(`autoloop.batching.entries`) carries the entries, the active ones and that
choice through the run.

    >>> outputs, batched = batch_call(graph, [x_rows, w], [True, False], Batching(64))

`batch_graph(graph, batched)` is the same as a new graph: its inputs are
`graph`'s, with a leading entry axis on the batched ones.
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.batching import rules
from autoloop.batching.entries import Batching, Unbatchable
from autoloop.ir import context, control_flow
from autoloop.ir.graph import Graph
from autoloop.ops.dispatch import apply, graph_value
from autoloop.ops.location import format_location
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


def batch_call(graph: Graph, inputs: list, batched: list, batching: Batching):
    """`graph`'s outputs over every entry, and which are batched; see the module docstring.

    `inputs` holds one Tensor per input of `graph` (captures included, in
    `graph.inputs` order), `batched` one flag per input.
    """
    env = {value: (tensor, flag) for value, tensor, flag in zip(graph.inputs, inputs, batched)}
    for node in graph.nodes:
        if node.op == "Placeholder":
            continue
        values = [env[v][0] for v in node.inputs]
        flags = [env[v][1] for v in node.inputs]
        outputs, out_flags = _run_node(node, values, flags, batching)
        env.update((value, (tensor, flag)) for value, tensor, flag in zip(node.outputs, outputs, out_flags))
    return [env[v][0] for v in graph.outputs], [env[v][1] for v in graph.outputs]


def _run_node(node, values, flags, batching):
    declared = control_flow.lookup(node.op)
    if declared is not None:
        from autoloop.batching.control_flow import rule_for
        return rule_for(node, batching.caller)(node, values, flags, batching)
    if not any(flags):
        return rules.outputs(apply(node.op, values, rules.public_attrs(node))), [False] * len(node.outputs)
    if any(v.dtype is dtypes.variant for v in node.inputs + tuple(node.outputs)):
        raise Unbatchable(
            f"{batching.caller} cannot batch a TensorArray or a list appended to in a loop ({node.op} created at "
            f"{format_location(node.location)}) when it differs per entry; use map_fn, or return stacked tensors")
    rule = rules.rule_for(node.op)
    try:
        if rule is None:
            raise rules.NoRule("it has no batching rule")
        return rule(node, values, flags, batching)
    except rules.NoRule as why:
        return _per_entry(node, values, flags, batching, str(why))


def _per_entry(node, values, flags, batching, why):
    """The op run once per entry: a `map_fn` over its batched inputs."""
    if not batching.fallback:
        raise ValueError(f"vectorized_map cannot batch {node.op} (node {node.name}, created at "
                         f"{format_location(node.location)}): {why}. Pass fallback_to_while_loop=True to run it "
                         f"once per entry, or use map_fn")
    from autoloop.arguments import TensorSpec
    from autoloop.control_flow.functional import map_fn
    if batching.warn:
        import warnings
        warnings.warn(f"{batching.caller} runs {node.op} (created at {format_location(node.location)}) once per entry, "
                      f"in a loop: {why}", stacklevel=2)
    attrs = rules.public_attrs(node)

    def one_entry(entry):
        entry = iter(entry)
        return tuple(rules.outputs(apply(node.op, [next(entry) if flag else value for value, flag in zip(values, flags)],
                                         attrs)))

    signature = tuple(TensorSpec(v.shape, v.dtype) for v in node.outputs)
    graph = context.current_graph()
    known = set(map(id, graph.nodes)) if graph is not None else set()
    outputs = map_fn(one_entry, tuple(v for v, flag in zip(values, flags) if flag), fn_output_signature=signature)
    for loop in [n for n in graph.nodes if n.op == "While" and id(n) not in known] if graph is not None else ():
        loop.attrs["_batched"] = f"{batching.caller} runs {node.op} once per entry here: {why}"  # for --explain
    return list(outputs), [True] * len(node.outputs)


def batched_shape(shape: TensorShape, size) -> TensorShape:
    """The shape of a batched value whose entries have `shape`."""
    return TensorShape([size if isinstance(size, int) else None]).concatenate(shape)


def batch_graph(graph: Graph, batched: list, size=None, fallback: bool = True):
    """A new graph computing `graph` over entries: ``(new_graph, batched_outputs)``.

    Its inputs are `graph`'s (captures excluded: `graph` must have none),
    the batched ones (``batched[k]``) with a leading entry axis of `size`
    (an int, or None for any); its outputs are `graph`'s, batched where
    ``batched_outputs[k]``. The building block of `vectorized_map` and of
    a jacobian (reverse mode batched over the output cotangents).
    """
    if graph.captures:
        raise ValueError(f"batch_graph needs a graph without captures; {graph.name!r} captures "
                         f"{len(graph.captures)} outer values")
    new = Graph(f"{graph.name}_batched")
    with context.building(new):
        inputs = [Tensor(value=new.add_input(v.dtype, batched_shape(v.shape, size) if flag else v.shape))
                  for v, flag in zip(graph.inputs, batched)]
        first = next((t for t, flag in zip(inputs, batched) if flag), None)
        batching = Batching(size, None if size is not None else first, fallback=fallback) if first is not None else Batching(1)
        outputs, flags = batch_call(graph, inputs, batched, batching)
        new.outputs = [graph_value(new, t) for t in outputs]
    return new, flags
