"""The rule table every backward sweep reads, and how gradients add up.

- `is_differentiable(dtype)`: gradients flow through floating-point values
  and through ``variant`` ones (a TensorArray's list, whose gradient is a
  list of gradients); integers and bools get none.
- `rule_for(op_name)`: an ordinary op's rule from its registration
  (`autoloop.ops.registry`), a control-flow op's from its declaration
  (`autoloop.ir.control_flow`); `NOT_DIFFERENTIABLE` for ops declared so.
- `call_rule(rule, op, output_grads)`: run a rule and check what it gives.
- `Accumulator`: the gradient contributions of each value, summed in the
  order they arrived (so two sweeps that visit ops in one order give
  bitwise identical sums).
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.ir import control_flow
from autoloop.ir.lazy import resolve
from autoloop.ops import registry
from autoloop.ops.dispatch import apply
from autoloop.ops.location import format_location
from autoloop.ops.registry import NOT_DIFFERENTIABLE


def is_differentiable(dtype) -> bool:
    return dtype.is_floating or dtype is dtypes.variant


def rule_for(op_name: str):
    """The gradient rule of `op_name`, `NOT_DIFFERENTIABLE`, or None when it has neither."""
    declared = control_flow.lookup(op_name)
    if declared is not None:
        return resolve(declared.gradient)
    opdef = registry.get(op_name)
    if not opdef.differentiable:
        return NOT_DIFFERENTIABLE
    return opdef.gradient_rule()


def is_blocked(op_name: str) -> bool:
    """Whether no gradient flows through op `op_name` (declared `NOT_DIFFERENTIABLE`)."""
    return control_flow.lookup(op_name) is None and not registry.get(op_name).differentiable


def call_rule(op, output_grads) -> list:
    """The input gradients of `op` (a view from `autoloop.autodiff.forward_op`), one per input.

    Raises LookupError naming the op and the user's line if the op has no
    rule; a rule that gives the wrong number of gradients or a wrong dtype
    is an internal error (AssertionError).
    """
    rule = rule_for(op.op_name)
    if rule is NOT_DIFFERENTIABLE:
        return [None] * len(op.input_specs)
    if rule is None:
        raise LookupError(f"autoloop has no gradient for op {op.op_name}"
                          f"{_where(op)}; it is neither given a gradient rule nor declared "
                          f"NOT_DIFFERENTIABLE in its registration")
    grads = rule(op, *output_grads)
    grads = list(grads) if isinstance(grads, list | tuple) else [grads]
    # A control-flow rule may give its node more inputs (stacks): its gradients follow them.
    input_dtypes = [v.dtype for v in op.node.inputs] if op.node is not None else [s.dtype for s in op.input_specs]
    if len(grads) != len(input_dtypes):
        raise AssertionError(f"the gradient rule of {op.op_name} gave {len(grads)} gradients for "
                             f"{len(input_dtypes)} inputs")
    for position, (grad, dtype) in enumerate(zip(grads, input_dtypes)):
        if grad is not None and grad.dtype is not dtype:
            raise AssertionError(f"the gradient rule of {op.op_name} gave a {grad.dtype.name} gradient for "
                                 f"input {position}, a {dtype.name} tensor")
    return grads


def _where(op) -> str:
    return f" (created at {format_location(op.location)})" if op.location else ""


def add(a, b):
    """The sum of two gradients of one value."""
    if a.dtype is dtypes.variant:
        return apply("TensorListGradAdd", [a, b])
    return apply("Add", [a, b])


class Accumulator:
    """Gradient contributions per value (any hashable key), summed when first read."""

    def __init__(self):
        self._parts: dict = {}

    def add(self, key, grad) -> None:
        self._parts.setdefault(key, []).append(grad)

    def has(self, key) -> bool:
        return key in self._parts

    def total(self, key):
        """The sum of `key`'s contributions (left to right), or None if it has none."""
        parts = self._parts.get(key)
        if not parts:
            return None
        total = parts[0]
        for part in parts[1:]:
            total = add(total, part)
        self._parts[key] = [total]
        return total

    def discard(self, key) -> None:
        self._parts.pop(key, None)

    def move(self, source, target) -> None:
        """Hand `source`'s contributions, unsummed, to `target` (which has none)."""
        parts = self._parts.pop(source, None)
        if parts:
            self._parts.setdefault(target, []).extend(parts)
