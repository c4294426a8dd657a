"""Reverse mode over a traced graph: `backprop` (the sweep) and `gradients` (the public function).

`backprop(graph, ys, grad_ys, xs, residuals)` visits the nodes of `graph`
from last to first. A node on a path from some `xs` to some `ys` whose
outputs received gradients gets its rule called (`autoloop.autodiff.rules`);
the rule builds the backward ops in the graph being built (the current
`autoloop.ir.context` graph) and reads forward values through `residuals`
(`autoloop.autodiff.residuals`). The ``While`` and ``Cond`` rules call
`backprop` again on their sub-graphs, one level deeper.

    @autoloop.function
    def f(x):
        y = x * x
        return autoloop.gradients(y, [x])[0]     # 2 * x
"""

from __future__ import annotations

from typing import Any

from autoloop import nest
from autoloop.autodiff import paths
from autoloop.autodiff.forward_op import GraphOp
from autoloop.autodiff.jacobian import UnconnectedGradients, unconnected_option
from autoloop.autodiff.residuals import Residuals
from autoloop.autodiff.rules import Accumulator, call_rule, is_differentiable
from autoloop.ir import context, rewrite
from autoloop.ops.creation_ops import ones_like, zeros, zeros_like
from autoloop.ops.dispatch import convert, graph_value
from autoloop.tensor import Tensor


def backprop(graph, ys, grad_ys, xs, residuals, node_filter=None, memo=None) -> list:
    """Gradients of ``sum(ys[k] * grad_ys[k])`` with respect to each of `xs` (Values of `graph`).

    `grad_ys` are Tensors of the graph being built (None: that y contributes
    nothing). Returns one Tensor or None (no path) per x. `node_filter`
    limits the paths to the nodes it accepts (a traced `GradientTape`'s
    recording window).
    """
    memo = {} if memo is None else memo
    nodes = list(graph.nodes)  # the sweep builds into this graph at the top level: fix the order now
    reached = paths.reachable(nodes, xs, memo, node_filter)
    accumulator = Accumulator()
    for y, grad in zip(ys, grad_ys):
        if grad is not None and y in reached:
            accumulator.add(y, grad)
    for node in reversed(nodes):
        if node.op == "Placeholder" or (node_filter is not None and not node_filter(node)):
            continue
        if not any(v in reached and accumulator.has(v) for v in node.outputs):
            continue
        output_grads = [accumulator.total(v) if v in reached else None for v in node.outputs]
        inputs = node.inputs
        op = GraphOp(node, residuals, lambda k, inputs=inputs: inputs[k] in reached)
        input_grads = call_rule(op, output_grads)
        for value, grad in zip(node.inputs, input_grads):  # `node.inputs` as the rule left them
            if grad is not None and value in reached and is_differentiable(value.dtype):
                accumulator.add(value, grad)
    return [accumulator.total(x) for x in xs]


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients", stop_gradients: Any = None,
              unconnected_gradients: UnconnectedGradients | str = "none") -> list[Any]:
    """The gradients of the sum of `ys` with respect to each of `xs`, inside a traced function.

    `ys` and `xs` are a tensor or a list of tensors of the function being
    traced; `grad_ys` (one per y, default ones) weights each y. Returns a
    list with one entry per x: a tensor of x's shape and dtype, or None
    where no path connects x to any y (``unconnected_gradients="zero"``
    gives zeros instead). Paths through `stop_gradient` (and through the
    tensors in `stop_gradients`) are blocked. A path through a
    ``while_loop(..., back_prop=False)`` raises ValueError naming the loop.

        @autoloop.function
        def f(x):
            y = autoloop.reduce_sum(x * x)
            return autoloop.gradients(y, [x])[0]     # 2 * x

    Eagerly, use `GradientTape`: ``gradients`` raises RuntimeError.
    """
    graph = context.current_graph()
    if graph is None:
        raise RuntimeError("autoloop.gradients is not supported when eager execution is enabled: use "
                           "autoloop.GradientTape, or call gradients inside an @autoloop.function")
    return graph_gradients(graph, ys, xs, grad_ys, stop_gradients, unconnected_gradients)


def graph_gradients(graph, ys, xs, grad_ys=None, stop_gradients=None, unconnected_gradients="none",
                    node_filter=None) -> list:
    """`gradients` in `graph` (the one being traced); `node_filter` limits the paths."""
    unconnected = unconnected_option(unconnected_gradients)
    ys = tensor_list(ys, "ys")
    xs, variables = _sources(graph, xs)
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    grad_ys = list(grad_ys) if isinstance(grad_ys, list | tuple) else [grad_ys]
    if len(grad_ys) != len(ys):
        raise ValueError(f"gradients: grad_ys has {len(grad_ys)} entries but ys has {len(ys)}; give one per y")
    y_values = [graph_value(graph, y) for y in ys]
    seeds = [seed_for(y, grad) for y, grad in zip(ys, grad_ys)]
    x_values = [value_in(graph, x) if x is not None else None for x in xs]
    blocked = {id(graph_value(graph, t).node) for t in tensor_list(stop_gradients or [], "stop_gradients")}
    if blocked:
        node_filter = _also_blocking(node_filter, blocked)
    known = [x for x in x_values if x is not None]
    # The backward ops go into `graph`, or into the graph being built inside it (a Jacobian's row loop).
    current = context.current_graph()
    with context.building(current if current is not None and graph.is_ancestor_of(current) else graph):
        found = backprop(graph, y_values, seeds, known, Residuals(), node_filter)
    by_value = dict(zip(known, found))
    results = []
    for k, (x, value) in enumerate(zip(xs, x_values)):
        grad = by_value.get(value) if value is not None else None
        if grad is None and unconnected is UnconnectedGradients.ZERO:
            source = variables.get(k, x)
            with context.building(graph):
                grad = zeros(source.shape.as_list(), source.dtype) if k in variables else zeros_like(x)
        results.append(grad)
    return results


def _sources(graph, xs) -> tuple[list, dict]:
    """`xs` as tensors; a variable among them is replaced by its watch point (`_watch_reads`), and the dict
    maps its position to the variable."""
    flat = nest.flatten(xs) if isinstance(xs, list | tuple | dict) else [xs]
    tensors, variables = [], {}
    for k, x in enumerate(flat):
        if hasattr(type(x), "_reads_in"):  # an autoloop.Variable
            variables[k] = x
            tensors.append(_watch_reads(graph, x))
            continue
        tensors.extend(tensor_list([x], "xs"))
    return tensors, variables


def _watch_reads(graph, variable):
    """A zero of `variable`'s shape that every read of it in `graph` (its loops and branches included) now
    adds, so that the gradient for it is the sum over the reads, as TensorFlow's; None if nothing reads it.

    The graph is edited: in each sub-graph that reads the variable the read's readers read
    ``read + point``, the point captured from the top (what a `GradientTape` does while tracing).
    """
    reads = variable._reads_in(graph)
    if not reads:
        return None
    if not variable.shape.is_fully_defined():
        raise ValueError(f"gradients with respect to the variable {variable.name!r}: its shape {variable.shape} is "
                         f"partly known; give the variable a full shape")
    with context.building(graph):
        point = zeros(variable.shape.as_list(), variable.dtype)
    for read in reads:
        with context.building(read.graph):
            watched = Tensor(value=read) + Tensor(value=read.graph.capture(point._value))
        rewrite.replace_all_uses(read, watched._value)
        rewrite.built_into(read.graph)
    return point


def _also_blocking(node_filter, blocked):
    def accept(node):
        return id(node) not in blocked and (node_filter is None or node_filter(node))
    return accept


def tensor_list(values, what: str) -> list:
    values = nest.flatten(values) if isinstance(values, list | tuple | dict) else [values]
    tensors = []
    for value in values:
        if hasattr(value, "components") and not isinstance(value, Tensor):  # a TensorArray
            value = value.components()[0]
        if not isinstance(value, Tensor):
            value = convert(value)
        tensors.append(value)
    return tensors


def seed_for(y: Tensor, grad):
    """The gradient `y` starts with: `grad` (checked against y) or ones; None for an integer y."""
    if not is_differentiable(y.dtype):
        return None
    if grad is None:
        return ones_like(y)
    grad = convert(grad, y.dtype if not isinstance(grad, Tensor) else None)
    if grad.dtype is not y.dtype:
        raise TypeError(f"gradients: grad_ys entry for {y.name} is {grad.dtype.name}, but the y is {y.dtype.name}")
    if not grad.shape.is_compatible_with(y.shape):
        raise ValueError(f"gradients: grad_ys entry for {y.name} has shape {grad.shape}, but the y has "
                         f"shape {y.shape}")
    return grad


def value_in(graph, x: Tensor):
    """The value standing for `x` in `graph`: x itself, the placeholder that captured it, or None."""
    value = x._value
    if value is None:
        return None  # an eager tensor: a constant of the graph, which no y depends on
    if value.graph is graph:
        return value
    if not value.graph.is_ancestor_of(graph):
        return None
    chain = []
    current = graph
    while current is not value.graph:
        chain.append(current)
        current = current.parent
    for inner in reversed(chain):
        value = inner.captures.get(value)
        if value is None:
            return None
    return value
