"""Checkpointed loop gradients: save some iterations' states, recompute the rest backwards.

``while_loop(..., checkpoint=True)`` (or ``set_loop_options(checkpoint=True)``)
makes the gradient of a loop keep, instead of every value the backward pass
reads at every iteration, only the loop state at a few iterations (the
checkpoints). The backward pass then goes over the stretches between
checkpoints (segments) from last to first: it recomputes a segment's
iterations from its checkpoint, saving their values on stacks as the
stacked gradient does (`autoloop.autodiff.while_grad`), and undoes them.

The number of iterations T is not known when the loop starts, so the
checkpoints are placed by a rule that works for any T:

- ``checkpoint=True`` (or ``"sqrt"``): at iterations 0, 1, 4, 9, 16, ...
  (the squares). A loop that ran T times keeps ⌈√T⌉ states, and a segment
  has at most 2√T + 1 iterations, so memory grows like √T whatever T
  turns out to be; each iteration is computed twice in all.
- ``checkpoint=n`` (an int): every n iterations; T/n states and segments
  of n iterations (n ≈ √T is best when T is known).

The gradient is the stacked one bit for bit: the recomputed values are the
same ops on the same inputs, and the gradients add up in the same order.

Reference semantics of the backward pass (`position(k)` the iteration of
checkpoint k, `n` checkpoints stored)::

    for k in reversed(range(n)):
        state = checkpoints[k]
        stop = min(position(k + 1), T)
        values = [saved values of iteration t] for t in range(position(k), stop), recomputed from state
        for t in reversed(range(position(k), stop)):
            adjoints = vjp(body, values[t])(adjoints)
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.autodiff.graph_backprop import value_in
from autoloop.autodiff.replay import inline
from autoloop.autodiff.residuals import Residuals, add_counter, captured_from, placeholder_like
from autoloop.autodiff.while_grad import LoopPlan, adjoint_invariants, stacked_backward
from autoloop.control_flow import stacks
from autoloop.control_flow.cond import cond
from autoloop.control_flow.while_loop import while_loop
from autoloop.ir import context, rewrite
from autoloop.ops.dispatch import constant_node, convert, on_values
from autoloop.ops.math_ops import cast, equal, minimum
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


class SquareSchedule:
    """Checkpoints at iterations k², for ``checkpoint=True`` or ``"sqrt"``."""

    def position(self, k):
        return k * k

    def __repr__(self):
        return "checkpoints at iterations 0, 1, 4, 9, ... (memory ~ √T)"


class StrideSchedule:
    """A checkpoint every `stride` iterations, for ``checkpoint=stride``."""

    def __init__(self, stride: int):
        self.stride = stride

    def position(self, k):
        return k * self.stride

    def __repr__(self):
        return f"a checkpoint every {self.stride} iterations"


def schedule_for(node):
    """The schedule a ``While`` node's ``checkpoint`` attr names, or None (save every iteration)."""
    return schedule_for_option(node.attrs.get("checkpoint"))


def schedule_for_option(option):
    """The schedule of a ``checkpoint`` option (`autoloop.control_flow.while_loop.checkpoint_option`)."""
    if option is None or option is False:
        return None
    if option is True or option == "sqrt":
        return SquareSchedule()
    return StrideSchedule(int(option))


def checkpointed_gradient(op, plan: LoopPlan, initial, schedule, record, memo) -> list:
    """The adjoints before the loop `op.node`, from those after it (`initial`); see the module docstring."""
    node = op.node
    body = node.attrs["body"]
    state = [m for m in range(record.loop_vars) if _read_by_body(body, m)]
    iterations, stored, saved = _add_checkpoints(node, schedule, state)
    trip, count = op.residuals.value(iterations), op.residuals.value(stored)
    checkpoints = [op.residuals.value(s) for s in saved]
    captured = {placeholder: op.residuals.value(captured_from(body, placeholder))
                for placeholder in body.captures.values()}

    def segment(s, *adjoints):
        k = s - 1
        start = schedule.position(k)
        length = minimum(schedule.position(k + 1), trip) - start
        values = {m: stacks.get(saved_m, k, body.inputs[m].dtype, body.inputs[m].shape)
                  for m, saved_m in zip(state, checkpoints)}
        states = [values[m] if m in values else placeholder_like(body.inputs[m]) for m in range(record.loop_vars)]
        replayed = _replay(node, record.loop_vars, states, length, captured)
        inner = LoopPlan(replayed, plan.active, [])
        positions = []  # where each capture of the original body is in the replayed one (or not read there)
        for placeholder in plan.captures:
            found = value_in(replayed.attrs["body"], captured[placeholder]) if placeholder in captured else None
            positions.append(found)
        inner.captures = [p for p in positions if p is not None]
        active = len(plan.active)
        carried = [a for a, p in zip(adjoints[active:], positions) if p is not None]
        count = record.loop_vars  # the replay's counter is its last loop variable
        counter = (replayed.outputs[count], replayed.attrs["body"].inputs[count])
        found = stacked_backward(inner, list(adjoints[:active]) + carried, Residuals(), record, memo,
                                 name=f"{node.name}_segment_grad", counter=counter)
        results, found_captures = list(found[:active]), iter(found[active:])
        for accumulator, position in zip(adjoints[active:], positions):
            results.append(next(found_captures) if position is not None else accumulator)
        return (k, *results)

    results = while_loop(lambda s, *adjoints: s > 0, segment, (count, *initial),
                         shape_invariants=(TensorShape([]), *adjoint_invariants(plan)), name=f"{node.name}_grad")
    return list(results[1:])


def _read_by_body(body, position: int) -> bool:
    """Whether loop variable `position`'s value at an iteration's start matters to the body's results."""
    parameter = body.inputs[position]
    if any(parameter in node.inputs for node in body.nodes):
        return True
    return any(output is parameter for j, output in enumerate(body.outputs) if j != position)


def _add_checkpoints(node, schedule, state):
    """Give the forward loop a counter, a count of checkpoints and, per state variable, a list
    of its checkpoints; their values after the loop."""
    iterations, counter = add_counter(node)
    body = node.attrs["body"]
    counter_tensor = Tensor(value=counter)
    is_checkpoint = {}

    def count(stored):
        is_checkpoint["now"] = equal(counter_tensor, schedule.position(stored))
        return stored + cast(is_checkpoint["now"], dtypes.int32)

    stored = rewrite.add_loop_var(node, constant_node(node.graph, np.int32(0)), on_values(count), name="checkpoints")
    index = Tensor(value=body.inputs[node.attrs["num_loop_vars"] - 1])
    saved = []
    for m in state:
        value = Tensor(value=body.inputs[m])

        def keep(checkpoints, value=value):
            return cond(is_checkpoint["now"], lambda: stacks.push(checkpoints, index, value), lambda: checkpoints)

        with context.building(node.graph):
            empty = stacks.new_stack()
        saved.append(rewrite.add_loop_var(node, empty._value, on_values(keep), name="checkpoint"))
    return iterations, stored, saved


def _replay(node, count: int, states, length, captured):
    """A ``While`` in the graph being built that reruns `node`'s body `length` times from `states`;
    its loop variables are the original ones and a counter, last."""
    body = node.attrs["body"]

    def replay_body(*values):
        inputs = {body.inputs[m]: values[m] for m in range(count)}
        outputs = inline(body, inputs, [body.outputs[m] for m in range(count)], lambda p: captured[p])
        return (*outputs, values[-1] + 1)

    invariants = [body.inputs[m].shape for m in range(count)] + [TensorShape([])]
    results = while_loop(lambda *values: values[-1] < length, replay_body, (*states, convert(np.int32(0))),
                         shape_invariants=tuple(invariants), name=f"{node.name}_replay")
    return results[0]._value.node
