"""The kernels of what reverse mode adds on XLA: stacks of saved values and dense gradient lists.

A loop's gradient pushes, each forward iteration, the values its backward
pass reads onto a *stack* (``StackNew``/``StackPush``/``StackGet``, in
`autoloop.control_flow.stacks`), pushed at the loop counter: on XLA a
`Buffer` whose capacity is the loop's bound (`autoloop.backends.jax.layouts`),
so a loop whose trip count depends on the data needs one. A *gradient list*
(``TensorListGrad*``, the gradient of a TensorArray; sparse on numpy) is a
dense `Buffer` of gradients, zeros where nothing was added; reads and
gathers past its end give zeros, as numpy's gradient lists do.

    >>> stack = stack_push(stack, counter, value)   # element `counter` set, length counter + 1
"""

from __future__ import annotations

import numpy as np

from autoloop.backends.jax.buffers import Buffer, as_index
from autoloop.backends.jax.marks import is_static, unsupported, with_node


# -- stacks: where a gradient saves values, pushed at the loop counter ------------------------------
@with_node
def stack_new(lowering, node, bound=None):
    return Buffer.empty(lowering.layout(node.outputs[0]), 0)


def stack_push(stack, index, value):
    index = as_index(index)
    return Buffer(stack.with_element(index, value).items, index + 1)


def stack_get(stack, index, element_dtype, element_shape):
    return stack.element(as_index(index))


# -- gradient lists: dense buffers of gradients --------------------------------------------------
@with_node
def grad_init(lowering, node):
    return Buffer.empty(lowering.layout(node.outputs[0]), 0)


def grad_add(a, b):
    import jax
    return Buffer(jax.tree.map(lambda x, y: x + y, a.items, b.items), a.length)


def grad_read(gradients, index, shape, element_dtype):
    import jax.numpy as jnp
    index = as_index(index)
    row = gradients.element(index)
    return jnp.where((index >= 0) & (index < gradients.capacity), row, jnp.zeros_like(row))


def grad_accumulate(gradients, index, value):
    index = as_index(index)
    return Buffer(gradients.items.at[index].add(value, mode="drop"), gradients.length)


def grad_scatter_add(gradients, indices, values):
    indices = as_index(indices).reshape(-1)
    return Buffer(gradients.items.at[indices].add(values, mode="drop"), gradients.length)


def grad_erase(gradients, indices):
    indices = as_index(indices).reshape(-1)
    return Buffer(gradients.items.at[indices].set(0, mode="drop"), gradients.length)


def grad_gather(gradients, indices, shape, element_dtype):
    import jax.numpy as jnp
    return jnp.take(gradients.items, as_index(indices), axis=0, mode="fill", fill_value=0)


@with_node
def grad_stack(lowering, node, gradients, count, shape, element_dtype):
    import jax.numpy as jnp
    count = int(np.asarray(count)) if is_static(count) else None
    if count is None:
        raise unsupported(node, "the gradient of a list whose length is known only when the graph runs", (
            "XLA compiles arrays of static shape only; give the TensorArray a fixed size"))
    items = gradients.items[:count]
    if items.shape[0] < count:
        items = jnp.concatenate([items, jnp.zeros((count - items.shape[0],) + items.shape[1:], items.dtype)])
    return items


@with_node
def grad_unstack(lowering, node, value):
    import jax.numpy as jnp
    layout = lowering.layout(node.outputs[0])
    if value.shape[0] > layout.capacity:
        raise unsupported(node, f"the gradient of a list of {value.shape[0]} elements, more than the "
                                f"{layout.capacity} found when compiling,", "give the list a static length")
    items = jnp.zeros((layout.capacity,) + value.shape[1:], value.dtype).at[:value.shape[0]].set(value)
    return Buffer(items, jnp.int32(value.shape[0]))


@with_node
def grad_split(lowering, node, value, piece_lengths):
    import jax.numpy as jnp
    pieces = int(np.size(piece_lengths))
    layout = lowering.layout(node.outputs[0])
    rows = jnp.reshape(value, (pieces, value.shape[0] // max(pieces, 1)) + value.shape[1:])
    items = jnp.zeros((layout.capacity,) + rows.shape[1:], value.dtype).at[:pieces].set(rows)
    return Buffer(items, jnp.int32(pieces))


@with_node
def grad_concat(lowering, node, gradients, piece_lengths, row, element_dtype):
    if not is_static(piece_lengths):
        raise unsupported(node, "the gradient of joining a list of run-time length", (
            "XLA compiles arrays of static shape only; give the TensorArray a fixed size"))
    count = int(np.size(piece_lengths))
    items = gradients.items[:count]
    return items.reshape((-1,) + items.shape[2:])
