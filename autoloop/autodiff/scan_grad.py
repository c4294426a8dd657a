"""The gradient of ``Scan``: the scan put back as a loop of ops, then differentiated.

A ``Scan`` node runs on its own frame loop, made of numpy calls. To
differentiate one, its rule writes the scan's masked reference semantics as
a ``While`` of ordinary ops in the Scan's place (`scan_by_while`; the
sub-graphs are copied in), makes the Scan's readers read that loop's
results (the Scan is then dead and pruned), and differentiates those new
nodes with the gradients the Scan's outputs received: a ``While`` gradient,
with its stacks and its backward loop. The forward values are the Scan's
bit for bit. A batched scan that compacts takes `scan_compacted_grad`
instead, where the backward pass is compacted too.
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.autodiff import scan_compacted_grad
from autoloop.autodiff.replay import inline
from autoloop.autodiff.residuals import captured_from
from autoloop.control_flow.scan_by_while import scan_by_while
from autoloop.ir import context, control_flow, rewrite
from autoloop.ops.array_ops import shape
from autoloop.ops.math_ops import cast, minimum
from autoloop.tensor import Tensor


def scan_gradient(op, *grads):
    """The ``gradient`` rule of ``Scan`` (see the module docstring)."""
    from autoloop.autodiff.graph_backprop import backprop
    node = op.node
    graph = node.graph
    if scan_compacted_grad.applies(node):
        with context.building(graph):
            outputs, starts = scan_compacted_grad.forward(node)
        for old, new in zip(node.outputs, outputs):
            new.set_shape(old.shape)
            rewrite.replace_all_uses(old, new._value)
        return scan_compacted_grad.backward(node, outputs, starts, list(grads), op.residuals)
    before = {id(n) for n in graph.nodes}
    with context.building(graph):
        outputs = as_loop(node)
    for old, new in zip(node.outputs, outputs):
        new.set_shape(old.shape)
        rewrite.replace_all_uses(old, new._value)
    made = {id(n) for n in graph.nodes} - before
    _explain_masked(node, [n for n in graph.nodes if id(n) in made and n.op == "While"])
    inputs = list(dict.fromkeys(node.inputs))  # each value once: a capture may be in both sub-graphs' groups
    found = backprop(graph, [t._value for t in outputs], list(grads), inputs, op.residuals,
                     node_filter=lambda n: id(n) in made)
    by_value = dict(zip(inputs, found))
    input_grads, seen = [], set()
    for value in node.inputs:
        input_grads.append(by_value[value] if value not in seen else None)
        seen.add(value)
    return input_grads


def _explain_masked(node, loops) -> None:
    """On a backend with static shapes, the loops standing for a batched Scan `node` say for ``--explain`` why its
    gradient is masked there (`autoloop.backends.jax.scan_form.jax_gradient_form`)."""
    if not node.attrs["cond_dims"].rank or not scan_compacted_grad.static_shapes(node):
        return
    from autoloop.backends.jax.scan_form import jax_gradient_form  # the static-shape backend's cost rule (IR only)
    for loop in loops:
        loop.attrs["_batched"] = f"the forward of batched scan {node.name!r}; on XLA {jax_gradient_form(node)[1]}"


def as_loop(node) -> list:
    """`node`'s outputs, computed by `scan_by_while` from its inputs in the graph being built."""
    groups = control_flow.operands(node)
    cond, body = node.attrs["cond"], node.attrs["body"]
    num_xs, num_state, num_ys = len(groups.xs), len(groups.initial), node.attrs["num_ys"]

    def run(graph, outputs, x, state):
        parameters = dict(zip(graph.inputs[:num_xs + num_state], list(x) + list(state)))
        return inline(graph, parameters, outputs, lambda p: Tensor(value=captured_from(graph, p)))

    def cond_fn(x, state):
        return run(cond, cond.outputs, x, state)[0]

    def body_fn(x, state):
        results = run(body, body.outputs, x, state)
        return results[:num_ys], results[num_ys:]

    ys_specs = [(y.dtype, frame) for y, frame in zip(body.outputs, node.attrs["ys_frames"])]
    return scan_by_while(cond_fn, body_fn, [Tensor(value=v) for v in groups.initial],
                         [Tensor(value=v) for v in groups.xs], _limit(groups), has_cond=node.attrs["has_cond"],
                         cond_before_body=node.attrs["cond_before_body"], entry_rank=node.attrs["cond_dims"].rank or 0,
                         ys_specs=ys_specs, return_tensor_arrays=node.attrs["return_tensor_arrays"],
                         name=f"{node.name}_loop")


def _limit(groups):
    """The most frames: the length of xs, spatial_dim and max_seq_len, whichever are given (None: none)."""
    counts = [shape(Tensor(value=x))[0] for x in groups.xs[:1]]
    counts += [cast(Tensor(value=v), dtypes.int32) for v in groups.spatial_dim + groups.max_seq_len]
    limit = None
    for count in counts:
        limit = count if limit is None else minimum(limit, count)
    return limit
