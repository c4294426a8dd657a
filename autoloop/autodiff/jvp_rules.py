"""The rule table forward mode reads, and the rules that follow from an op's registration.

- `call_jvp(op, tangents)`: the output tangents of `op` (a view from
  `autoloop.autodiff.forward_op`) given its input tangents (None: zero).
  The rule is the op's ``jvp`` (`autoloop.ops.registry`), a control-flow
  op's from its declaration (`autoloop.ir.control_flow`), or derived:

  - `LINEAR`: the op itself applied to the tangents (its other inputs,
    indices and shapes, as they are), since ``f(x + e t) = f(x) + e f(t)``;
  - `ELEMENTWISE`: the gradient rule applied to the tangent (for one input
    and an output of its shape the Jacobian is diagonal: its own transpose);
  - otherwise `transposed_gradient`: the gradient rule is linear in the
    output gradients, ``rule(u) = J^T u``, so ``J t`` is the gradient of
    ``<rule(u), t>`` with respect to `u`: reverse mode over the rule's own
    ops. Exact for every op with a gradient; it costs a few more ops than a
    hand-written rule, which an op may give.

An op that has neither a ``jvp`` nor a ``gradient`` raises LookupError
naming it and the user's line; ``NOT_DIFFERENTIABLE`` ops give no tangent.
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.autodiff.rules import call_rule, is_differentiable, rule_for
from autoloop.ir import control_flow
from autoloop.ir.graph import op_attrs_of
from autoloop.ir.lazy import resolve
from autoloop.ops import registry
from autoloop.ops.creation_ops import zeros_like
from autoloop.ops.dispatch import apply
from autoloop.ops.location import format_location
from autoloop.ops.registry import ELEMENTWISE, LINEAR, NOT_DIFFERENTIABLE
from autoloop.ops.reduction_ops import reduce_sum
from autoloop.tensor import Tensor


def jvp_rule_for(op_name: str):
    """The forward rule of `op_name`: a function, `LINEAR`, `ELEMENTWISE`, `NOT_DIFFERENTIABLE` or None."""
    declared = control_flow.lookup(op_name)
    if declared is not None:
        return resolve(declared.jvp) if declared.jvp is not None else None
    opdef = registry.get(op_name)
    if not opdef.differentiable:
        return NOT_DIFFERENTIABLE
    if opdef.jvp is None:
        return None
    return opdef.jvp if opdef.jvp in (LINEAR, ELEMENTWISE) else resolve(opdef.jvp)


def call_jvp(op, tangents) -> list:
    """The tangents of `op`'s outputs (None: zero), one per output; see the module docstring."""
    rule = jvp_rule_for(op.op_name)
    if rule is NOT_DIFFERENTIABLE:
        return [None] * len(op.output_specs)
    if rule is LINEAR:
        found = linear(op, tangents)
    elif rule is ELEMENTWISE:
        found = call_rule(op, [tangents[0]])[:1]
    elif rule is not None:
        found = rule(op, *tangents)
    elif rule_for(op.op_name) is not None:
        found = transposed_gradient(op, tangents)
    else:
        raise LookupError(f"autoloop has no forward-mode rule for op {op.op_name}{_where(op)}: it has neither a "
                          f"jvp rule nor a gradient rule in its registration")
    found = list(found) if isinstance(found, list | tuple) else [found]
    if len(found) < len(op.output_specs):
        raise AssertionError(f"the forward rule of {op.op_name} gave {len(found)} tangents for "
                             f"{len(op.output_specs)} outputs")
    return [t if t is not None and is_differentiable(spec.dtype) else None
            for t, spec in zip(found, op.output_specs)]


def _where(op) -> str:
    return f" (created at {format_location(op.location)})" if op.location else ""


def linear(op, tangents) -> list:
    """The op applied to the tangents (zeros for a differentiable input without one)."""
    inputs = []
    for position, (value, tangent, spec) in enumerate(zip(op.inputs, tangents, op.input_specs)):
        if not is_differentiable(spec.dtype):
            inputs.append(value)
        elif tangent is not None:
            inputs.append(tangent)
        else:
            inputs.append(zero_tangent(op, position))
    result = apply(op.op_name, inputs, dict(op.attrs))
    return list(result) if isinstance(result, tuple) else [result]


def zero_tangent(op, position: int):
    """A zero tangent for input `position` of `op`: zeros, or an empty list or stack of its kind."""
    return zero_like(op.inputs[position], f"op {op.op_name}{_where(op)}")


def zero_like(value, reader: str = "forward mode"):
    """A zero tangent for the Tensor `value`; `reader` names what needs it, for the error."""
    if value.dtype is not dtypes.variant:
        return zeros_like(value)
    if not value.is_symbolic:
        return _eager_zero_list(value, reader)
    node = value._value.node
    if node.op.startswith("TensorList") and not node.op.startswith("TensorListGrad"):
        # Unwritten elements read as zeros: a list of the same length with none written.
        return apply("TensorListReserve", [apply("TensorListSize", [value])], {"dynamic_size": True})
    if node.op.startswith("TensorListGrad"):
        return apply("TensorListGradInit", [])
    if node.op == "StackNew":  # a new empty stack (pushes append in place: never share the primal's)
        return apply("StackNew", [], op_attrs_of(node.attrs))
    raise NotImplementedError(f"forward mode: {reader} reads a list or stack (made by {node.op}) whose tangent "
                              f"is not known; forward mode does not support that yet")


def _eager_zero_list(value, reader: str):
    from autoloop.control_flow.array_elements import ArrayElements
    from autoloop.control_flow.gradient_elements import GradientElements
    elements = value._numpy
    if isinstance(elements, ArrayElements):
        return Tensor(ArrayElements([None] * len(elements), elements.dynamic_size))
    if isinstance(elements, GradientElements):
        return Tensor(GradientElements())
    if isinstance(elements, list) and not elements:
        return Tensor([])
    raise NotImplementedError(f"forward mode: {reader} reads a {type(elements).__name__} whose tangent is not "
                              f"known; forward mode does not support that yet")


def transposed_gradient(op, tangents) -> list:
    """``J t`` from the gradient rule ``u -> J^T u`` (see the module docstring)."""
    from autoloop.autodiff.tape import GradientTape
    for spec in list(op.input_specs) + list(op.output_specs):
        if spec.dtype is dtypes.variant:
            raise NotImplementedError(f"forward mode: op {op.op_name}{_where(op)} works on TensorArrays and has no "
                                      f"jvp rule of its own; forward mode through it is not supported yet")
    cotangents = [zeros_like(value) if is_differentiable(spec.dtype) else None
                  for value, spec in zip(op.outputs, op.output_specs)]
    watched = [u for u in cotangents if u is not None]
    with GradientTape() as tape:
        tape.watch(watched)
        grads = call_rule(op, cotangents)
        terms = [reduce_sum(grad * tangent) for grad, tangent in zip(grads, tangents)
                 if grad is not None and tangent is not None]
        total = terms[0] if len(terms) == 1 else apply("AddN", terms) if terms else None
    if total is None:
        return [None] * len(cotangents)
    found = iter(tape.gradient(total, watched))
    return [next(found) if u is not None else None for u in cotangents]
