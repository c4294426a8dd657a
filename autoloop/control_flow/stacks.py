"""Stacks: where a loop's gradient saves the values its backward pass reads.

A stack is a ``variant`` value holding a Python list. The forward loop
pushes one value per iteration at its iteration counter; the backward loop
reads them back at its own counter, from the last down (see
`autoloop.autodiff.residuals`):

    stack = StackNew()                              # before the loop
    stack = StackPush(stack, iteration, value)      # in the body, each iteration
    value = StackGet(stack, iteration)              # in the backward body

Unlike a TensorArray, a push appends to the list it is given: only the
gradient machinery makes stacks, and it uses each version exactly once (the
next iteration's push, or the backward loop), so no older version is ever
read again, and a push costs one ``list.append``. ``StackNew`` makes a new
list every time it runs, so every run of a graph starts with empty stacks.
The compiled executor inlines push and get (``stack.append(v) or stack``,
``stack[i]``); the interpreter runs the kernels, which also check that
pushes come in counter order.

A backend without lists (JAX, XLA) represents a stack as an array of
``maximum iterations`` rows written with a dynamic update at the counter.
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.control_flow.gradient_elements import grad_init, grad_read
from autoloop.errors import InvalidArgumentError
from autoloop.ops.dispatch import apply
from autoloop.ops.gradient_support import shape_int32
from autoloop.ops.registry import LINEAR, NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.shapes import TensorShape

_STACK = Spec(dtypes.variant, TensorShape([]))


def _push(stack, index, value):
    if int(index) != len(stack):
        raise InvalidArgumentError(f"StackPush: pushed at iteration {int(index)} onto a stack of {len(stack)} values")
    stack.append(value)
    return stack


def _get(stack, index, element_dtype, element_shape):
    return stack[int(index)]


def _check_index(op_name, index):
    if index.dtype not in (dtypes.int32, dtypes.int64) or index.shape.rank not in (0, None):
        raise TypeError(f"{op_name}: the index must be an integer scalar, got {index.dtype.name}{index.shape}")


def _push_infer(stack, index, value):
    _check_index("StackPush", index)
    return _STACK


def _get_infer(stack, index, element_dtype, element_shape):
    _check_index("StackGet", index)
    return Spec(element_dtype, element_shape)


def _push_gradient(op, grad):
    value = op.input_specs[2]
    shape = shape_int32(value, lambda: op.input_shape(2))
    return [apply("TensorListGradErase", [grad, op.inputs[1]]), None, grad_read(grad, op.inputs[1], shape, value.dtype)]


# A stack's ``bound`` attr (or None) is the most values ever pushed on it, when its maker knows it: a
# static-shape backend preallocates that many (a checkpointed loop's checkpoints).
register(OpDef("StackNew", kernel=lambda bound=None: [], infer=lambda bound=None: _STACK, expr="[]",
               gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.gradient_buffers:stack_new"}))
register(OpDef("StackPush", kernel=_push, infer=_push_infer, expr="({0}.append({2}) or {0})", gradient=_push_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:stack_push"}))
register(OpDef("StackGet", kernel=_get, infer=_get_infer, expr="{0}[{1}]",
               gradient=lambda op, grad: [apply("TensorListGradAccumulate", [grad_init(), op.inputs[1], grad]), None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:stack_get"}))


def new_stack(bound=None):
    """An empty stack; `bound`: the most values that will be pushed on it, if known."""
    return apply("StackNew", [], {"bound": bound} if bound is not None else {})


def push(stack, index, value):
    return apply("StackPush", [stack, index, value])


def get(stack, index, element_dtype, element_shape):
    return apply("StackGet", [stack, index], {"element_dtype": element_dtype, "element_shape": element_shape})

