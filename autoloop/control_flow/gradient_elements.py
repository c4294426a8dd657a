"""The gradient of a TensorArray: `GradientElements` and the ops that build and read it.

The gradient of a TensorArray's list is a list of gradients, one per
element, most of them often zero (a loop that reads one element per
iteration contributes to one index each time). A `GradientElements` is that
list kept sparse: ``index -> array``, a missing index meaning zeros. Like
`ArrayElements` it is persistent (every op returns a new version and the old
one stays as it was) and cheap where it matters: the versions of one value
share a store of per-index histories, and the newest version (the head)
sets an index in O(1), so a backward loop that adds to or clears one index
per iteration costs O(1) per iteration. Setting through an older version
copies the entries it sees.

The ops (all ``TensorListGrad*``) are what the TensorList ops' gradient
rules (`autoloop.control_flow.tensor_array`) are made of; each is linear in
its gradient-list input, and each has a gradient rule itself.

    >>> g = GradientElements().add_at(2, np.ones(3))
    >>> g.get(2), g.get(0)
    (array([1., 1., 1.]), None)
"""

from __future__ import annotations

import threading

import numpy as np

from autoloop import dtypes
from autoloop.errors import InvalidArgumentError
from autoloop.ops.dispatch import apply
from autoloop.ops.gradient_support import row_shape, shape_int32
from autoloop.ops.registry import LINEAR, NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.shapes import TensorShape


class _Store:
    __slots__ = ("history", "head", "lock")

    def __init__(self, entries: dict):
        self.history = {index: [(0, value)] for index, value in entries.items()}
        self.head = 0
        self.lock = threading.Lock()


class GradientElements:
    """One version of a sparse list of gradients; see the module docstring."""

    __slots__ = ("_store", "_version")

    def __init__(self, entries=None):
        self._store = _Store(dict(entries or {}))
        self._version = 0

    def get(self, index: int):
        """The gradient at `index` in this version, or None (zeros)."""
        history = self._store.history.get(index)
        if not history:
            return None
        for version, value in reversed(history):
            if version <= self._version:
                return value
        return None

    def entries(self) -> dict:
        """``{index: gradient}`` of this version (zeros left out)."""
        found = {}
        for index in self._store.history:
            value = self.get(index)
            if value is not None:
                found[index] = value
        return found

    def size_hint(self) -> int:
        return len(self._store.history)

    def set(self, index: int, value) -> GradientElements:
        """A version with `value` (None: zeros) at `index`."""
        store = self._store
        with store.lock:
            if self._version == store.head:
                store.head += 1
                store.history.setdefault(index, []).append((store.head, value))
                new = object.__new__(GradientElements)
                new._store, new._version = store, store.head
                return new
        entries = self.entries()
        entries[index] = value
        return GradientElements({k: v for k, v in entries.items() if v is not None})

    def add_at(self, index: int, value) -> GradientElements:
        current = self.get(index)
        return self.set(index, value if current is None else _sum(current, value))

    def __repr__(self):
        return f"GradientElements({self.entries()!r})"


def _sum(a, b):
    if isinstance(a, GradientElements):
        return _add_lists(a, b)
    return a + b


def _add_lists(a: GradientElements, b: GradientElements) -> GradientElements:
    """Element-wise sum; the smaller list's entries are added into the larger one."""
    if a.size_hint() < b.size_hint():
        a, b = b, a
    result = a
    for index, value in b.entries().items():
        result = result.add_at(index, value)
    return result


# -- kernels -----------------------------------------------------------------------------
def _zeros(shape, element_dtype):
    return np.zeros(tuple(int(d) for d in np.ravel(shape)), element_dtype.as_numpy_dtype)[()]


def _read(gradients, index, shape, element_dtype):
    value = gradients.get(int(index))
    return _zeros(shape, element_dtype) if value is None else value


def _gather(gradients, indices, shape, element_dtype):
    rows = [_read(gradients, i, shape, element_dtype) for i in np.ravel(indices)]
    if not rows:
        return np.zeros((0,) + tuple(int(d) for d in np.ravel(shape)), element_dtype.as_numpy_dtype)
    return np.stack(rows)


def _stack(gradients, count, shape, element_dtype):
    return _gather(gradients, np.arange(int(count)), shape, element_dtype)


def _scatter_add(gradients, indices, values):
    for position, index in enumerate(np.ravel(indices)):
        gradients = gradients.add_at(int(index), values[position])
    return gradients


def _erase_all(gradients, indices):
    for index in np.ravel(indices):
        if gradients.get(int(index)) is not None:
            gradients = gradients.set(int(index), None)
    return gradients


def _split(value, lengths):
    lengths = [int(n) for n in np.ravel(lengths)]
    if sum(lengths) != np.shape(value)[0]:
        raise InvalidArgumentError(f"TensorListGradSplit: lengths {lengths} do not add up to the "
                                   f"{np.shape(value)[0]} rows of the gradient")
    return GradientElements(dict(enumerate(np.split(value, np.cumsum(lengths)[:-1]))))


def _concat(gradients, lengths, row, element_dtype):
    rows = tuple(int(d) for d in np.ravel(row))
    pieces = []
    for index, length in enumerate(np.ravel(lengths)):
        value = gradients.get(index)
        pieces.append(np.zeros((int(length),) + rows, element_dtype.as_numpy_dtype) if value is None else value)
    if not pieces:
        return np.zeros((0,) + rows, element_dtype.as_numpy_dtype)
    return np.concatenate(pieces)


# -- registrations: every op with the gradient of its gradient-list input (all are linear) --------
_LIST = Spec(dtypes.variant, TensorShape([]))


def _element_spec(shape: Spec, element_dtype, *leading) -> Spec:
    if shape.value is not None:
        dims = TensorShape([int(d) for d in np.ravel(shape.value)])
    else:
        dims = TensorShape(None if shape.shape.rank != 1 or shape.shape[0] is None else [None] * shape.shape[0])
    return Spec(element_dtype, TensorShape(list(leading)).concatenate(dims))


def _rows(spec: Spec):
    return spec.shape[0] if spec.shape.rank else None


def grad_init():
    """An empty gradient list (zeros everywhere)."""
    return apply("TensorListGradInit", [])


def grad_read(gradients, index, shape, element_dtype):
    return apply("TensorListGradRead", [gradients, index, shape], {"element_dtype": element_dtype})


def grad_gather(gradients, indices, shape, element_dtype):
    return apply("TensorListGradGather", [gradients, indices, shape], {"element_dtype": element_dtype})


register(OpDef("TensorListGradInit", kernel=lambda: GradientElements(), infer=lambda: _LIST,
               gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_init"}))
register(OpDef("TensorListGradAdd", kernel=_add_lists, infer=lambda a, b: _LIST,
               gradient=lambda op, grad: [grad, grad],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_add"}))
register(OpDef("TensorListGradRead", kernel=_read,
               infer=lambda gradients, index, shape, element_dtype: _element_spec(shape, element_dtype),
               gradient=lambda op, grad: [apply("TensorListGradAccumulate", [grad_init(), op.inputs[1], grad]),
                                          None, None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_read"}))
register(OpDef("TensorListGradAccumulate", kernel=lambda gradients, index, value: gradients.add_at(int(index), value),
               infer=lambda gradients, index, value: _LIST,
               gradient=lambda op, grad: [grad, None, grad_read(
                   grad, op.inputs[1], shape_int32(op.input_specs[2], lambda: op.input_shape(2)),
                   op.input_specs[2].dtype)],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_accumulate"}))
register(OpDef("TensorListGradScatterAdd", kernel=_scatter_add, infer=lambda gradients, indices, values: _LIST,
               gradient=lambda op, grad: [grad, None, grad_gather(grad, op.inputs[1], row_shape(op, 2),
                                                                  op.input_specs[2].dtype)],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_scatter_add"}))
register(OpDef("TensorListGradErase", kernel=_erase_all, infer=lambda gradients, indices: _LIST,
               gradient=lambda op, grad: [apply("TensorListGradErase", [grad, op.inputs[1]]), None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_erase"}))
register(OpDef("TensorListGradGather", kernel=_gather,
               infer=lambda gradients, indices, shape, element_dtype:
               _element_spec(shape, element_dtype, _rows(indices)),
               gradient=lambda op, grad: [apply("TensorListGradScatterAdd", [grad_init(), op.inputs[1], grad]),
                                          None, None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_gather"}))
register(OpDef("TensorListGradStack", kernel=_stack,
               infer=lambda gradients, count, shape, element_dtype: _element_spec(shape, element_dtype, None),
               gradient=lambda op, grad: [apply("TensorListGradUnstack", [grad]), None, None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_stack"}))
register(OpDef("TensorListGradUnstack", kernel=lambda value: GradientElements(dict(enumerate(value))),
               infer=lambda value: _LIST,
               gradient=lambda op, grad: [apply("TensorListGradStack", [
                   grad, shape_int32(op.input_specs[0], lambda: op.input_shape(0))[0], row_shape(op, 0)],
                   {"element_dtype": op.input_specs[0].dtype})],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_unstack"}))
register(OpDef("TensorListGradSplit", kernel=_split, infer=lambda value, lengths: _LIST,
               gradient=lambda op, grad: [apply("TensorListGradConcat", [grad, op.inputs[1], row_shape(op, 0)],
                                                {"element_dtype": op.input_specs[0].dtype}), None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_split"}))
register(OpDef("TensorListGradConcat", kernel=_concat,
               infer=lambda gradients, lengths, row, element_dtype:
               _element_spec(row, element_dtype, None),
               gradient=lambda op, grad: [apply("TensorListGradSplit", [grad, op.inputs[1]]), None, None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.gradient_buffers:grad_concat"}))
