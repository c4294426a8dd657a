"""The gradient of ``Cond``: a backward ``Cond`` on the same predicate.

For ``outputs = true_fn(c_t) if pred else false_fn(c_f)``, the backward
``Cond`` differentiates the branch that ran, each branch giving the
gradients of every captured outer value that wants one (zeros for values
the branch does not read). Values a branch computes and its gradient reads
become extra outputs of the forward ``Cond`` (`BranchResiduals`).

Reference semantics::

    d_captures = vjp(true_fn)(d_outputs) if pred else vjp(false_fn)(d_outputs)
"""

from __future__ import annotations

from autoloop.autodiff import paths
from autoloop.autodiff.residuals import BranchResiduals
from autoloop.autodiff.while_grad import zero_gradient
from autoloop.control_flow.cond import cond


def cond_gradient(op, *grads):
    """The ``gradient`` rule of ``Cond`` (see the module docstring)."""
    from autoloop.autodiff.graph_backprop import backprop
    node = op.node
    memo: dict = {}
    active = [j for j, grad in enumerate(grads) if grad is not None]
    targets = _targets(op, active, memo)  # [(input position, outer value)], each value once
    if not active or not targets:
        return [None] * len(node.inputs)

    def branch_gradient(key):
        def build():
            branch = node.attrs[key]
            residuals = BranchResiduals(node, key, op.residuals)
            placeholders = {outer: inner for outer, inner in branch.captures.items()}
            wrt = [placeholders[outer] for _, outer in targets if outer in placeholders]
            found = backprop(branch, [branch.outputs[j] for j in active], [grads[j] for j in active], wrt,
                             residuals, memo=memo)
            by_placeholder = dict(zip(wrt, found))
            results = []
            for _, outer in targets:
                grad = by_placeholder.get(placeholders.get(outer))
                results.append(grad if grad is not None else zero_gradient(outer, op.residuals))
            return results
        return build

    results = cond(op.inputs[0], branch_gradient("true_graph"), branch_gradient("false_graph"),
                   name=f"{node.name}_grad")
    input_grads = [None] * len(node.inputs)
    for (position, _), grad in zip(targets, results):
        input_grads[position] = grad
    return input_grads


def _targets(op, active, memo) -> list:
    """The captured outer values that want a gradient and some active output depends on."""
    node = op.node
    connections = paths.node_connections(node, memo)
    connected = set().union(*(connections[j] for j in active)) if active else set()
    targets, seen = [], set()
    for position, value in enumerate(node.inputs):
        if position in connected and op.needs_gradient(position) and value not in seen:
            seen.add(value)
            targets.append((position, value))
    return targets
