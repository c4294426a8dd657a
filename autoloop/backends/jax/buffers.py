"""Lists on XLA: preallocated buffers written with dynamic updates, and the kernels of the list ops.

A list value (a TensorArray's flow, a gradient's stack, a gradient list)
is a `Buffer`: its elements stacked on a leading axis of the capacity that
`autoloop.backends.jax.layouts` found, and its length (an int32 scalar). A
write is ``lax.dynamic_update_index_in_dim`` (in place inside a loop), a
read ``lax.dynamic_index_in_dim``. Element ``k`` of a stack of lists (an
inner loop's stacks saved per outer iteration) is itself a `Buffer`: the
leaves of the outer buffer carry one more leading axis.

What numpy reports when a list op runs (an index out of range, a fixed
size exceeded) is checked at run time with the same messages
(`autoloop.backends.jax.checks`); so is a write past what XLA
preallocated, which names the bound. A gradient list (``TensorListGrad*``,
sparse on numpy) is a dense buffer of gradients, zeros where nothing was
added.

The kernels of gradient stacks and gradient lists are in
`autoloop.backends.jax.gradient_buffers`.

``stack(l)`` of a list whose length the graph does not fix is a `Padded`
value: the buffer and the length. As a result of the function it comes
back trimmed to its length; anything else reading it is a `BackendError`
(XLA has no arrays of run-time shape).

    >>> empty = Buffer.empty(BufferLayout(ElementSpec(float32, (3,)), capacity=10), length=0)
"""

from __future__ import annotations

import numpy as np

from autoloop.backends.jax.layouts import BufferLayout, ElementSpec
from autoloop.backends.jax.marks import checked, is_static, unsupported, with_node
from autoloop.control_flow import tensor_array
from autoloop.control_flow.array_elements import ArrayElements
from autoloop.errors import InvalidArgumentError
from autoloop.ops.location import format_location


class Buffer:
    """A list on XLA: `items` (a leading axis of capacity rows) and its `length`; a JAX pytree."""

    __slots__ = ("items", "length")

    def __init__(self, items, length):
        self.items = items
        self.length = length

    @classmethod
    def empty(cls, layout: BufferLayout, length=0, leading: tuple = ()) -> Buffer:
        """Zeros in every slot; `leading` axes come first (the rows of an enclosing stack)."""
        import jax.numpy as jnp
        rows = leading + (layout.capacity,)
        if isinstance(layout.element, ElementSpec):
            items = jnp.zeros(rows + layout.element.shape, layout.element.dtype)
        else:
            items = cls.empty(layout.element, 0, rows)
        if layout.host:
            items = _in_host_memory(items)
        return cls(items, jnp.full(leading, length, jnp.int32))

    @property
    def capacity(self) -> int:
        import jax
        return jax.tree.leaves(self.items)[0].shape[0]

    def element(self, index):
        import jax
        from jax import lax
        return jax.tree.map(lambda rows: _on_device(lax.dynamic_index_in_dim(rows, index, keepdims=False)),
                            self.items)

    def with_element(self, index, value) -> Buffer:
        import jax
        from jax import lax
        items = jax.tree.map(lambda rows, new: lax.dynamic_update_index_in_dim(rows, _placed_as(rows, new), index, 0),
                             self.items, value)
        return Buffer(items, self.length)

    def tree_flatten(self):
        return (self.items, self.length), None

    @classmethod
    def tree_unflatten(cls, _, children):
        return cls(*children)

    def elements(self) -> ArrayElements:
        """On the host: the list as the numpy executor gives it."""
        import jax
        length = int(np.asarray(self.length))
        leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(self.items)]
        if len(leaves) != 1:
            raise NotImplementedError("a stack of lists as a function's result")
        return ArrayElements([leaves[0][k] for k in range(length)], dynamic_size=True)


class Padded:
    """A stacked list whose length is known only at run time: `items` and `length`; `origin` the stack node."""

    __slots__ = ("items", "length", "origin")

    def __init__(self, items, length, origin):
        self.items, self.length, self.origin = items, length, origin

    def tree_flatten(self):
        return (self.items, self.length), self.origin

    @classmethod
    def tree_unflatten(cls, origin, children):
        return cls(*children, origin)

    def trimmed(self):
        return self.items[:int(np.asarray(self.length))]

    def refuse(self, node) -> Exception:
        """The error for `node` reading this value."""
        return unsupported(node, f"the list stacked at {format_location(self.origin.location)} has a length "
                                 f"known only when the graph runs, so {node.op}", (
            "XLA compiles arrays of static shape only. Give the TensorArray a fixed size, append in a loop whose "
            "number of iterations is known when compiling (a for loop over a tensor or a range of known "
            "length, without break), return the stacked list from the function (results are trimmed to their "
            "length after the call), or run on backend='numpy'"))


def register_pytrees() -> None:
    import jax
    jax.tree_util.register_pytree_node(Buffer, Buffer.tree_flatten, Buffer.tree_unflatten)
    jax.tree_util.register_pytree_node(Padded, Padded.tree_flatten, Padded.tree_unflatten)


def _in_host_memory(items):
    """`items` placed in host memory (``swap_memory``) where the platform has memory kinds, else as they are."""
    import jax
    device = jax.devices()[0]
    if device.platform == "cpu" or "pinned_host" not in {m.kind for m in device.addressable_memories()}:
        return items  # a CPU's memory is the host's: nothing to move
    return jax.device_put(items, jax.memory.Space.Host)


def _in_host(value) -> bool:
    """Whether the traced `value` lives in host memory (a ``swap_memory`` buffer on a GPU)."""
    import jax
    return getattr(jax.typeof(value), "memory_space", None) == jax.memory.Space.Host


def _placed_as(rows, value):
    """`value` in the memory of `rows`: XLA updates a buffer in host memory only with a value in host memory."""
    import jax
    return jax.device_put(value, jax.memory.Space.Host) if _in_host(rows) and not _in_host(value) else value


def _on_device(value):
    """`value` (read from a buffer) in the device's memory, where the kernels reading it compute."""
    import jax
    return jax.device_put(value, jax.memory.Space.Device) if _in_host(value) else value


def constant_buffer(lowering, node) -> Buffer:
    """A TensorArray constant (traced from an eager TensorArray) as a buffer."""
    import jax.numpy as jnp
    elements = node.attrs["value"]
    layout = lowering.layout(node.outputs[0])
    buffer = Buffer.empty(layout, len(elements))
    for index, item in enumerate(elements.to_list()):
        if item is not None:
            buffer = buffer.with_element(index, jnp.asarray(item, layout.element.dtype))
    return buffer


def as_index(value):
    """An index or length as XLA takes it: an int32 value."""
    import jax.numpy as jnp
    return jnp.asarray(value, jnp.int32)


# -- checks: the witness values and the numpy kernel that raises for them ------------------------------
_INDEX_WITNESS = ((np.int32, ()), (np.int32, ()), (np.int32, ()))  # index, length, capacity
_WRITE_WITNESS = _INDEX_WITNESS + ((np.bool_, ()),)  # and whether the list grows


def _beyond(node, index, capacity):
    raise InvalidArgumentError(
        f"{node.op}: index {index} is past the {capacity} elements XLA preallocated for this list (the bound "
        f"found when compiling the loops that append to it); give those loops a larger capacity "
        f"(capacity=N), or run on backend='numpy'")


def _write_site(node):
    def reproduce(index, length, capacity, growable):
        tensor_array._write(ArrayElements([None] * int(length), bool(growable)), int(index), None)
        _beyond(node, index, capacity)
    return _WRITE_WITNESS, reproduce


def _read_site(node):
    def reproduce(index, length, capacity):
        tensor_array._read(ArrayElements([None] * int(length)), int(index), node.attrs["element_dtype"],
                           node.attrs["element_shape"])
    return _INDEX_WITNESS, reproduce


def _gather_site(node):
    indices = node.inputs[1]
    if not indices.shape.is_fully_defined():
        return None

    def reproduce(indices, length):
        for index in np.ravel(indices):
            tensor_array._read(ArrayElements([None] * int(length)), int(index), node.attrs["element_dtype"],
                               node.attrs["element_shape"])
    return ((np.int32, tuple(indices.shape.as_list())), (np.int32, ())), reproduce


def _scatter_site(node):
    indices = node.inputs[1]
    if not indices.shape.is_fully_defined():
        return None

    def reproduce(indices, length, capacity, growable):
        items = ArrayElements([None] * int(length), dynamic_size=bool(growable))
        for index in np.ravel(indices):
            items = tensor_array._write(items, int(index), None)
            if int(index) >= capacity:
                _beyond(node, int(index), capacity)
    return ((np.int32, tuple(indices.shape.as_list())),) + _WRITE_WITNESS[1:], reproduce


# -- TensorArray ops -----------------------------------------------------------------------------------
@with_node
def reserve(lowering, node, size, dynamic_size):
    return Buffer.empty(lowering.layout(node.outputs[0]), as_index(size))


@checked(_write_site)
def write(lowering, node, values, index, value):
    import jax.numpy as jnp
    index = as_index(index)
    capacity = values.capacity
    growable = lowering.facts.layouts.growable(node.inputs[0])
    if growable:
        failed = (index < 0) | (index >= capacity)
        length = jnp.maximum(values.length, index + 1)
    else:
        failed = (index < 0) | (index >= values.length)
        length = values.length
    lowering.check(node, failed, (index, values.length, jnp.int32(capacity), jnp.bool_(growable)))
    return Buffer(values.with_element(index, value).items, length)


@checked(_read_site)
def read(lowering, node, values, index, element_dtype, element_shape):
    import jax.numpy as jnp
    index = as_index(index)
    lowering.check(node, (index < 0) | (index >= values.length), (index, values.length, jnp.int32(values.capacity)))
    return values.element(index)


@with_node
def stack(lowering, node, values, element_dtype, element_shape):
    length = lowering.facts.layouts.exact_length(node.inputs[0])
    if length is None:
        return Padded(values.items, values.length, node)
    return values.items[:length]


@checked(_gather_site)
def gather(lowering, node, values, indices, element_dtype, element_shape):
    import jax.numpy as jnp
    indices = as_index(indices)
    lowering.check(node, jnp.any((indices < 0) | (indices >= values.length)), (indices, values.length))
    return jnp.take(values.items, indices, axis=0, mode="clip")


def _exact(lowering, node):
    length = lowering.facts.layouts.exact_length(node.inputs[0])
    if length is None:
        raise unsupported(node, "joining a list whose length is known only when the graph runs", (
            "XLA compiles arrays of static shape only. Give the TensorArray a fixed size, or run on "
            "backend='numpy'"))
    return length


@with_node
def concat(lowering, node, values, element_dtype, element_shape):
    length = _exact(lowering, node)
    items = values.items[:length]
    if items.ndim < 2:
        return lowering.fail_always(node, InvalidArgumentError(
            "TensorArray concat: elements must have rank >= 1, got scalars"))[0]
    return items.reshape((-1,) + items.shape[2:])


@with_node
def lengths(lowering, node, values, element_dtype, element_shape):
    import jax.numpy as jnp
    length = _exact(lowering, node)
    return jnp.full((length,), values.items.shape[1] if values.items.ndim > 1 else 0, jnp.int32)


@with_node
def split(lowering, node, values, value, piece_lengths):
    import jax.numpy as jnp
    pieces = int(np.size(piece_lengths)) if is_static(piece_lengths) else node.inputs[2].shape[0]
    rows = value.shape[0]
    counts = np.ravel(piece_lengths) if is_static(piece_lengths) else None
    if counts is not None and (np.any(counts < 0) or int(np.sum(counts)) != rows):
        return lowering.fail_always(node, InvalidArgumentError(
            f"TensorArray split: lengths {[int(n) for n in counts]} must be >= 0 and add up to the {rows} rows "
            f"of the value"))
    items = jnp.reshape(value, (pieces, rows // max(pieces, 1)) + value.shape[1:])
    return _from_rows(lowering, node, values, items, pieces)


@checked(_scatter_site)
def scatter(lowering, node, values, indices, value):
    import jax.numpy as jnp
    indices = as_index(indices).reshape(-1)
    capacity = values.capacity
    growable = lowering.facts.layouts.growable(node.inputs[0])
    if growable:
        failed = jnp.any((indices < 0) | (indices >= capacity))
        length = jnp.maximum(values.length, jnp.max(indices, initial=-1) + 1)
    else:
        failed = jnp.any((indices < 0) | (indices >= values.length))
        length = values.length
    lowering.check(node, failed, (indices.reshape(node.inputs[1].shape.as_list()), values.length,
                                  jnp.int32(capacity), jnp.bool_(growable)))
    return Buffer(values.items.at[indices].set(value, mode="drop"), length)


@with_node
def unstack(lowering, node, values, value):
    return _from_rows(lowering, node, values, value, value.shape[0])


def _from_rows(lowering, node, values, rows, count):
    """A list whose elements are the `count` rows of `rows` (unstack, split)."""
    import jax.numpy as jnp
    layouts = lowering.facts.layouts
    if not layouts.growable(node.inputs[0]):
        size = layouts.exact_length(node.inputs[0])
        if size and count != size:
            return lowering.fail_always(node, InvalidArgumentError(
                f"TensorArray unstack: {count} rows do not fit a TensorArray of fixed size {size}"))
    items = jnp.zeros_like(values.items).at[:count].set(rows.astype(values.items.dtype))
    return Buffer(items, jnp.int32(count))


def size(values):
    return values.length
