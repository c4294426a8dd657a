"""Forward-mode rules of ``While``, ``Cond`` and ``Scan``: tangents ride along, nothing is stored.

- ``While``: each loop variable whose tangent can be non-zero gets its
  tangent as one more loop variable of the same loop (`rewrite.add_loop_vars`);
  the body computes the new tangents beside the new values (`forward_sweep`
  over the body), reading the tangents of captured values from outside. No
  stack and no second loop: forward mode through a data-dependent loop
  costs O(1) extra memory. Reference semantics::

      v, t = v0, t0
      while cond(v):
          v, t = body(v), jvp(body, v)(t)

- ``Cond``: each output with a possible tangent gets it as one more output,
  each branch computing its own (`rewrite.add_cond_output`).
- ``Scan``: its masked reference semantics as a ``While`` of ordinary ops
  (`autoloop.autodiff.scan_grad`), whose tangents are those of the Scan;
  that loop recomputes the values the Scan computes.
"""

from __future__ import annotations

from autoloop.autodiff import paths
from autoloop.autodiff.jvp_rules import zero_like, zero_tangent
from autoloop.autodiff.residuals import captured_from
from autoloop.autodiff.rules import is_differentiable
from autoloop.ir import context, rewrite
from autoloop.ops.dispatch import graph_value
from autoloop.tensor import Tensor


def while_jvp(op, *tangents):
    """The ``jvp`` rule of ``While`` (see the module docstring)."""
    from autoloop.autodiff.forward import forward_sweep
    node = op.node
    count = node.attrs["num_loop_vars"]
    body = node.attrs["body"]
    outer_tangent = _tangents_by_value(node, tangents)
    captured = {m: outer_tangent.get(captured_from(body, body.inputs[m])) for m in range(count, len(body.inputs))}
    inner = paths.graph_connections(body, {})
    active = {j for j in range(count) if tangents[j] is not None and is_differentiable(body.inputs[j].dtype)}
    changed = True
    while changed:  # a variable gets a tangent from a variable or capture with one, in some iteration
        changed = False
        for j in range(count):
            if j in active or not is_differentiable(body.inputs[j].dtype):
                continue
            if any(m in active if m < count else captured.get(m) is not None for m in inner[j]):
                active.add(j)
                changed = True
    active = sorted(active)
    # Keyed by placeholder: adding loop variables moves the captures' positions in the body's inputs.
    capture_tangents = {body.inputs[m]: t for m, t in captured.items() if t is not None}
    if not active:
        return [None] * len(node.outputs)
    initial = [graph_value(node.graph, tangents[j] if tangents[j] is not None else zero_tangent(op, j))
               for j in active]

    def update(parameters):
        env = {body.inputs[j]: Tensor(value=p) for j, p in zip(active, parameters)}
        env.update(capture_tangents)
        forward_sweep(list(body.nodes), env)
        return [graph_value(body, _or_zero(env.get(body.outputs[j]), body.outputs[j])) for j in active]

    after = rewrite.add_loop_vars(node, initial, update, [body.inputs[j].shape for j in active],
                                  [f"tangent_{j}" for j in active])
    found = [None] * count
    for j, value in zip(active, after):
        found[j] = Tensor(value=value)
    return found


def cond_jvp(op, *tangents):
    """The ``jvp`` rule of ``Cond`` (see the module docstring)."""
    from autoloop.autodiff.forward import forward_sweep
    node = op.node
    outer_tangent = _tangents_by_value(node, tangents)
    with_tangent = {k for k, t in enumerate(tangents) if t is not None}
    connections = paths.node_connections(node, {})
    branch_tangents: dict = {}  # per branch: its outputs' tangents, computed once, in the branch

    def tangent_in(key, j):
        def build():
            branch = node.attrs[key]
            if key not in branch_tangents:
                env = {inner: outer_tangent[outer] for outer, inner in branch.captures.items()
                       if outer_tangent.get(outer) is not None}
                forward_sweep(list(branch.nodes), env)
                branch_tangents[key] = [env.get(v) for v in branch.outputs]
            return graph_value(branch, _or_zero(branch_tangents[key][j], branch.outputs[j]))
        return build

    found = []
    for j, value in enumerate(list(node.outputs)):
        if not is_differentiable(value.dtype) or not connections[j] & with_tangent:
            found.append(None)
            continue
        found.append(Tensor(value=rewrite.add_cond_output(node, tangent_in("true_graph", j),
                                                          tangent_in("false_graph", j))))
    return found


def scan_jvp(op, *tangents):
    """The ``jvp`` rule of ``Scan`` (see the module docstring)."""
    from autoloop.autodiff.forward import forward_sweep
    from autoloop.autodiff.scan_grad import as_loop
    node = op.node
    graph = context.current_graph()
    before = {id(n) for n in graph.nodes}
    outputs = as_loop(node)
    made = [n for n in graph.nodes if id(n) not in before]
    env = forward_sweep(made, dict(_tangents_by_value(node, tangents)))
    return [env.get(t._value) for t in outputs]


def _tangents_by_value(node, tangents) -> dict:
    return {value: tangent for value, tangent in zip(node.inputs, tangents) if tangent is not None}


def _or_zero(tangent, value):
    """`tangent`, or a zero tangent for `value` (of the graph being built)."""
    return tangent if tangent is not None else zero_like(Tensor(value=value), f"the loop or branch {value.name}")
