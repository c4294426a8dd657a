"""The gradient of ``While``: a backward loop that undoes the forward iterations in reverse.

For ``v = while cond(v): v = body(v, c)`` (loop variables `v`, captured
outer values `c`), given the gradients of the loop's results:

1. the forward loop gets an iteration counter, and a stack for every
   body value the backward pass reads (`autoloop.autodiff.residuals`): each
   iteration pushes it at the counter;
2. a backward ``While`` runs as many times as the forward one did, counting
   down: each iteration is the body differentiated (`backprop` on the body
   graph, reading forward values from the stacks at its counter), taking
   the gradients of the body's results to those of its loop variables, and
   adding the gradients of the captured values to accumulators;
3. the backward loop's results are the gradients of the loop variables'
   initial values and of the captured values.

Reference semantics of the backward loop (T forward iterations)::

    k, dv, dc = T, grads_of_results, zeros
    while k > 0:
        k = k - 1
        dv_next, dc_k = vjp(body, saved_values[k])(dv)
        dv, dc = dv_next, dc + dc_k
    return dv, dc

Only loop variables on a path between what is differentiated take part
(`LoopPlan`), and only values some rule reads are saved: ``x = x + c``
saves nothing. With ``checkpoint`` set, `autoloop.autodiff.checkpoint`
saves only some iterations' states and recomputes the rest. A loop built
with ``back_prop=False`` raises ValueError here, naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autoloop.autodiff import paths
from autoloop.autodiff.residuals import LoopResiduals, add_counter, captured_from
from autoloop.autodiff.rules import add, is_differentiable
from autoloop.control_flow.while_loop import while_loop
from autoloop.ir import context, control_flow
from autoloop.ir.trips import trip_count
from autoloop.ops.dispatch import apply
from autoloop.ops.gradient_support import zeros_for
from autoloop.ops.location import format_location
from autoloop.ops.registry import Spec
from autoloop.shapes import TensorShape


@dataclass
class GradientRecord:
    """What differentiating a loop did, kept on the forward node (``attrs["_gradient"]``) for
    ``autoloop run --explain``: the body values saved per iteration and the checkpoint schedule."""

    saved: list = field(default_factory=list)
    schedule: object = None
    loop_vars: int = 0  # the loop's own variables, before differentiating gave it more

    def __repr__(self):
        names = ", ".join(v.name for v in self.saved)
        kept = f", {self.schedule}" if self.schedule is not None else ""
        return f"<saves {len(self.saved)} per iteration: {names}{kept}>"


@dataclass
class LoopPlan:
    """Which loop variables and captures the backward loop carries gradients for.

    `active`: loop variables whose gradient can be non-zero (a result's
    gradient reaches it) and is wanted (it leads to a wanted input);
    `captures`: the body's capture placeholders whose outer values want a
    gradient and that an active variable depends on.
    """

    node: object
    active: list
    captures: list

    @classmethod
    def make(cls, op, grads, memo) -> LoopPlan:
        node = op.node
        body = node.attrs["body"]
        count = node.attrs["num_loop_vars"]
        start = control_flow.group_start(node, "body_captures")
        inner = paths.graph_connections(body, memo)
        differentiable = [is_differentiable(body.inputs[j].dtype) for j in range(count)]
        nonzero = {j for j in range(count) if grads[j] is not None and differentiable[j]}
        _grow(nonzero, lambda j: [m for m in inner[j] if m < count and differentiable[m]])
        wanted_captures = {m for m in range(count, len(body.inputs)) if op.needs_gradient(start + m - count)}
        wanted = {j for j in range(count) if differentiable[j] and
                  (op.needs_gradient(j) or wanted_captures & inner[j])}
        _grow_backwards(wanted, count, inner, differentiable)
        active = sorted(nonzero & wanted)
        captures = sorted({m for j in active for m in inner[j] if m in wanted_captures})
        return cls(node, active, [body.inputs[m] for m in captures])


def _grow(found: set, successors) -> None:
    stack = list(found)
    while stack:
        for m in successors(stack.pop()):
            if m not in found:
                found.add(m)
                stack.append(m)


def _grow_backwards(wanted: set, count: int, inner, differentiable) -> None:
    """Add every loop variable whose gradient flows (through the body) into a wanted one."""
    changed = True
    while changed:
        changed = False
        for j in range(count):
            if j not in wanted and differentiable[j] and any(m in wanted for m in inner[j] if m < count):
                wanted.add(j)
                changed = True


def while_gradient(op, *grads):
    """The ``gradient`` rule of ``While`` (see the module docstring)."""
    node = op.node
    if not node.attrs.get("back_prop", True):
        raise ValueError(
            f"cannot differentiate through the while loop {node.name!r} at {format_location(node.location)}: "
            f"it was built with back_prop=False. Build it with back_prop=True, or put stop_gradient on "
            f"its inputs if no gradient should flow through it")
    memo: dict = {}
    plan = LoopPlan.make(op, grads, memo)
    if not plan.active:
        return [None] * len(node.inputs)
    from autoloop.autodiff.checkpoint import checkpointed_gradient, schedule_for
    schedule = schedule_for(node)
    record = node.attrs.setdefault("_gradient", GradientRecord(schedule=schedule,
                                                               loop_vars=node.attrs["num_loop_vars"]))
    initial = initial_adjoints(op, plan, grads)
    if schedule is not None:
        found = checkpointed_gradient(op, plan, initial, schedule, record, memo)
    else:
        found = stacked_backward(plan, initial, op.residuals, record, memo)
    return input_gradients(node, plan, found)


def stacked_backward(plan: LoopPlan, initial, outer, record, memo, name=None, counter=None) -> list:
    """Every value the backward pass needs saved on stacks in the forward loop `plan.node`; one
    backward loop pops them. `initial` are the adjoints after the loop (`initial_adjoints`),
    `outer` the residuals of the level around the loop; returns the adjoints before it.
    `counter` is the loop's own iteration counter ``(after the loop, body parameter)``, if it has one."""
    node = plan.node
    iterations, counter = counter if counter is not None else add_counter(node)
    trip = outer.value(iterations)

    def body(k, *adjoints):
        index = k - 1
        residuals = LoopResiduals(node, counter, index, context.current_graph(), outer, record)
        return (index, *backward_iteration(plan, residuals, adjoints, memo))

    # The forward loop's bound, when the graph knows one, bounds the backward loop too (it runs as many
    # times): a backend that preallocates what the backward loop saves (its own gradient's) needs it.
    results = while_loop(lambda k, *adjoints: k > 0, body, (trip, *initial),
                         shape_invariants=(TensorShape([]), *adjoint_invariants(plan)),
                         maximum_iterations=trip_count(node).upper, name=name or f"{node.name}_grad")
    return list(results[1:])


def initial_adjoints(op, plan: LoopPlan, grads) -> list:
    """The results' gradients (zeros where none arrived), then zeros for each capture's accumulator."""
    node = op.node
    body = node.attrs["body"]
    adjoints = [_shaped(grads[j], body.inputs[j].shape) if grads[j] is not None
                else zero_gradient(node.outputs[j], op.residuals) for j in plan.active]
    for placeholder in plan.captures:
        adjoints.append(zero_gradient(placeholder, op.residuals, outer=outer_of(node, placeholder)))
    return adjoints


def _shaped(grad, invariant: TensorShape):
    """`grad` with the static shape its loop variable is known to have: a rule before the loop may
    have lost what tracing knew (a sum's gradient over an unknown batch is ``(None, None)`` where the
    loop carries ``(None, 2)``), and the backward loop's invariant must hold for its initial value."""
    merged = grad.shape.merge_with(invariant) if grad.shape.is_compatible_with(invariant) else grad.shape
    return grad if merged == grad.shape else apply("EnsureShape", [grad], {"shape": merged})


def adjoint_invariants(plan: LoopPlan) -> list:
    body = plan.node.attrs["body"]
    return [body.inputs[j].shape for j in plan.active] + [p.shape for p in plan.captures]


def backward_iteration(plan: LoopPlan, residuals, adjoints, memo) -> list:
    """One forward iteration undone: the adjoints before it, from those after it (in the backward body)."""
    from autoloop.autodiff.graph_backprop import backprop
    body = plan.node.attrs["body"]
    active = len(plan.active)
    variables, accumulators = adjoints[:active], adjoints[active:]
    wrt = [body.inputs[j] for j in plan.active] + list(plan.captures)
    found = backprop(body, [body.outputs[j] for j in plan.active], list(variables), wrt, residuals, memo=memo)
    before = [_shaped(g, body.inputs[j].shape) if g is not None else zero_gradient(body.inputs[j], residuals)
              for j, g in zip(plan.active, found[:active])]
    totals = [c if g is None else _shaped(add(c, g), p.shape)
              for c, g, p in zip(accumulators, found[active:], plan.captures)]
    return before + totals


def zero_gradient(value, residuals, outer=None):
    """A zero gradient for `value`: zeros of its shape, or an empty gradient list for a TensorArray.

    `outer`, when given, is where to read the shape if it is only known at
    run time (a capture's outer value).
    """
    if not value.dtype.is_floating:
        return apply("TensorListGradInit", [])
    source = value if outer is None else outer
    zeros = zeros_for(Spec(value.dtype, value.shape), lambda: residuals.shape(source))
    zeros.set_shape(value.shape)  # the dims known while tracing, which zeros of a run-time shape lose
    return zeros


def outer_of(node, placeholder):
    """The outer value that loop `node`'s body captured as `placeholder`."""
    return captured_from(node.attrs["body"], placeholder)


def input_gradients(node, plan: LoopPlan, found) -> list:
    """`found` (gradients of the active loop variables, then of the captures) laid out as `node`'s inputs."""
    grads = [None] * len(node.inputs)
    for j, grad in zip(plan.active, found):
        grads[j] = grad
    start = control_flow.group_start(node, "body_captures")
    size = node.attrs["body_nconsts"]
    outer_values = list(node.inputs[start:start + size])
    for placeholder, grad in zip(plan.captures, found[len(plan.active):]):
        grads[start + outer_values.index(outer_of(node, placeholder))] = grad
    return grads
