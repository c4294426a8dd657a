"""`TensorArray`: a list of same-dtype tensors that loops can grow.

A TensorArray is a composite of one ``variant`` tensor, its *flow*, whose
value at run time is an `ArrayElements`, a sequence of numpy values. Every op
returns a new one (the old one never changes), so a TensorArray can be a loop
variable and the results are the same eagerly and in graphs; writes still
take O(1) amortised time (see `autoloop.control_flow.array_elements`).
TensorArray ops have no effects and need no ordering edges. As in TensorFlow
2, ``write``/``scatter``/``unstack`` return the new TensorArray: write
``ta = ta.write(i, x)``.

    >>> ta = TensorArray(float32, size=2).write(0, 1.0).write(1, 2.0)
    >>> ta.stack().numpy()
    array([1., 2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autoloop import dtypes
from autoloop.control_flow.array_elements import ArrayElements
from autoloop.control_flow.composite import CompositeTensor
from autoloop.errors import InvalidArgumentError
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import identity
from autoloop.control_flow.gradient_elements import grad_gather, grad_init, grad_read
from autoloop.ops.gradient_support import row_shape, shape_int32
from autoloop.ops.registry import LINEAR, NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.shapes import TensorShape, as_shape
from autoloop.tensor import Tensor


# -- kernels -------------------------------------------------------------------
def _reserve(size, dynamic_size):
    return ArrayElements([None] * int(size), dynamic_size)


def _write(values, index, value):
    index = int(index)
    if index < 0 or (index >= len(values) and not values.dynamic_size):
        raise InvalidArgumentError(
            f"TensorArray write: index {index} is out of range for a TensorArray of size {len(values)} "
            f"that is not resizeable (create it with dynamic_size=True to grow it)")
    return values.write(index, value)


def _element(values, index, element_dtype, element_shape):
    if index < 0 or index >= len(values):
        raise InvalidArgumentError(
            f"TensorArray read: index {index} is out of range for a TensorArray of size {len(values)}")
    value = values[index]
    if value is None:
        if not element_shape.is_fully_defined():
            raise InvalidArgumentError(
                f"TensorArray read: element {index} was never written and its shape is unknown")
        return np.zeros(element_shape.as_list(), element_dtype.as_numpy_dtype)[()]
    return value


def _read(values, index, element_dtype, element_shape):
    return _element(values, int(index), element_dtype, element_shape)


def _stack(values, element_dtype, element_shape):
    if not len(values):
        if not element_shape.is_fully_defined():
            raise InvalidArgumentError("TensorArray stack: the array is empty and its element shape is unknown")
        return np.zeros([0] + element_shape.as_list(), element_dtype.as_numpy_dtype)
    items = values.to_list()
    if any(item is None for item in items):
        items = [_element(values, i, element_dtype, element_shape) for i in range(len(values))]
    try:
        return np.stack(items)
    except ValueError:
        shapes = sorted({np.shape(item) for item in items})
        raise InvalidArgumentError(f"TensorArray stack: elements have different shapes {shapes}") from None


def _gather(values, indices, element_dtype, element_shape):
    items = [_element(values, int(i), element_dtype, element_shape) for i in np.ravel(indices)]
    if not items:
        return np.zeros([0] + list(element_shape.as_list()), element_dtype.as_numpy_dtype)
    return np.stack(items)


def _concat(values, element_dtype, element_shape):
    if not len(values):
        if element_shape.rank is None or not element_shape[1:].is_fully_defined():
            raise InvalidArgumentError("TensorArray concat: the array is empty and its element shape is unknown")
        return np.zeros([0] + element_shape[1:].as_list(), element_dtype.as_numpy_dtype)
    items = [_element(values, i, element_dtype, element_shape) for i in range(len(values))]
    if any(np.ndim(item) == 0 for item in items):
        raise InvalidArgumentError("TensorArray concat: elements must have rank >= 1, got scalars")
    try:
        return np.concatenate(items)
    except ValueError:
        shapes = sorted({np.shape(item) for item in items})
        raise InvalidArgumentError(f"TensorArray concat: elements differ beyond axis 0: {shapes}") from None


def _split(values, value, lengths):
    lengths = [int(n) for n in np.ravel(lengths)]
    if any(n < 0 for n in lengths) or sum(lengths) != np.shape(value)[0]:
        raise InvalidArgumentError(f"TensorArray split: lengths {lengths} must be >= 0 and add up to the "
                                   f"{np.shape(value)[0]} rows of the value")
    pieces = np.split(value, np.cumsum(lengths)[:-1])
    return _unstack(values, pieces)


def _scatter(values, indices, value):
    new = values
    for position, index in enumerate(np.ravel(indices)):
        new = _write(new, index, value[position])
    return new


def _unstack(values, value):
    new = ArrayElements(list(value), values.dynamic_size)
    if not values.dynamic_size and len(values) and len(new) != len(values):
        raise InvalidArgumentError(
            f"TensorArray unstack: {len(new)} rows do not fit a TensorArray of fixed size {len(values)}")
    return new


# -- registrations ---------------------------------------------------------------
_LIST = Spec(dtypes.variant, TensorShape([]))


def _element_spec(op, element_dtype, element_shape, *leading):
    return Spec(element_dtype, TensorShape(list(leading)).concatenate(element_shape))


def _lengths(values, element_dtype, element_shape):
    return np.array([np.shape(_element(values, i, element_dtype, element_shape))[0] for i in range(len(values))],
                    np.int32)


# -- gradients: a list's gradient is a GradientElements (autoloop.control_flow.gradient_elements) --
def _write_gradient(op, grad):
    index, value = op.inputs[1], op.input_specs[2]
    shape = shape_int32(value, lambda: op.input_shape(2))
    return [apply("TensorListGradErase", [grad, index]), None, grad_read(grad, index, shape, value.dtype)]


def _scatter_gradient(op, grad):
    indices, value = op.inputs[1], op.input_specs[2]
    return [apply("TensorListGradErase", [grad, indices]), None,
            grad_gather(grad, indices, row_shape(op, 2), value.dtype)]


def _unstack_gradient(op, grad):
    value = op.input_specs[1]
    count = shape_int32(value, lambda: op.input_shape(1))[0]
    return [None, apply("TensorListGradStack", [grad, count, row_shape(op, 1)], {"element_dtype": value.dtype})]


def _split_gradient(op, grad):
    value = op.input_specs[1]
    return [None, apply("TensorListGradConcat", [grad, op.inputs[2], row_shape(op, 1)],
                        {"element_dtype": value.dtype}), None]


def _concat_gradient(op, grad):
    lengths = apply("TensorListLengths", [op.inputs[0]], op.attrs)
    return [apply("TensorListGradSplit", [grad, lengths])]


register(OpDef("TensorListReserve", kernel=_reserve, infer=lambda size, dynamic_size: _LIST,
               gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.buffers:reserve"}))
register(OpDef("TensorListWrite", kernel=_write, infer=lambda values, index, value: _LIST, gradient=_write_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.buffers:write"}))
register(OpDef("TensorListRead", kernel=_read,
               infer=lambda values, index, element_dtype, element_shape:
               _element_spec("TensorListRead", element_dtype, element_shape),
               gradient=lambda op, grad: [apply("TensorListGradAccumulate", [grad_init(), op.inputs[1], grad]), None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.buffers:read"}))
register(OpDef("TensorListStack", kernel=_stack,
               infer=lambda values, element_dtype, element_shape:
               _element_spec("TensorListStack", element_dtype, element_shape, None),
               gradient=lambda op, grad: [apply("TensorListGradUnstack", [grad])],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.buffers:stack"}))
register(OpDef("TensorListGather", kernel=_gather,
               infer=lambda values, indices, element_dtype, element_shape:
               _element_spec("TensorListGather", element_dtype, element_shape, indices.shape[0] if indices.shape.rank else None),
               gradient=lambda op, grad: [apply("TensorListGradScatterAdd", [grad_init(), op.inputs[1], grad]), None],
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.buffers:gather"}))
register(OpDef("TensorListConcat", kernel=_concat,
               infer=lambda values, element_dtype, element_shape:
               Spec(element_dtype, TensorShape([None]).concatenate(element_shape[1:])
                    if element_shape.rank else TensorShape(None)),
               gradient=_concat_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.buffers:concat"}))
register(OpDef("TensorListLengths", kernel=_lengths,
               infer=lambda values, element_dtype, element_shape: Spec(dtypes.int32, TensorShape([None])),
               gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.buffers:lengths"}))
register(OpDef("TensorListSplit", kernel=_split, infer=lambda values, value, lengths: _LIST, gradient=_split_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.buffers:split"}))
register(OpDef("TensorListScatter", kernel=_scatter, infer=lambda values, indices, value: _LIST,
               gradient=_scatter_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.buffers:scatter"}))
register(OpDef("TensorListUnstack", kernel=_unstack, infer=lambda values, value: _LIST, gradient=_unstack_gradient,
               jvp=LINEAR, kernels={"jax": "autoloop.backends.jax.buffers:unstack"}))
register(OpDef("TensorListSize", kernel=lambda values: np.int32(len(values)),
               infer=lambda values: Spec(dtypes.int32, TensorShape([])), gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.buffers:size"}))


class TensorArray(CompositeTensor):
    """A list of tensors of one dtype; see the module docstring.

    `size` is the initial length; with `dynamic_size` writes past the end grow
    it. `element_shape` is learned from the first write when not given, and
    every later element must be compatible with it. `clear_after_read` is
    accepted for TensorFlow compatibility; reads never clear (as in TF2).
    """

    def __init__(self, dtype: dtypes.DTypeLike, size: Any = 0, dynamic_size: bool = False,
                 clear_after_read: bool = True, element_shape: Any = None, infer_shape: bool = True,
                 name: str | None = None, flow: Any = None):
        self.dtype = dtypes.as_dtype(dtype)
        self.dynamic_size = bool(dynamic_size)
        self.clear_after_read = clear_after_read
        self.infer_shape = infer_shape
        self.element_shape = as_shape(element_shape)
        if flow is None:
            size = convert(size, dtypes.int32 if isinstance(size, int) else None)
            if size.dtype not in (dtypes.int32, dtypes.int64) or size.shape.rank != 0:
                raise TypeError(f"TensorArray size must be a scalar integer, got {size!r}")
            flow = apply("TensorListReserve", [size], {"dynamic_size": self.dynamic_size})
        self.flow = flow

    # -- composite protocol ---------------------------------------------------
    def components(self):
        return [self.flow]

    def from_components(self, components):
        return self._with_flow(components[0])

    def component_invariants(self, invariant):
        return [TensorShape([])]

    def type_key(self):
        return ("TensorArray", self.dtype)

    def learn_from(self, other: TensorArray) -> None:
        """Take the element shape `other` (the same array after a loop body) learned."""
        if self.element_shape.rank is None:
            self.element_shape = other.element_shape

    def _with_flow(self, flow, element_shape=None) -> TensorArray:
        new = object.__new__(TensorArray)
        new.__dict__.update(self.__dict__)
        new.flow = flow
        if element_shape is not None:
            new.element_shape = element_shape
        return new

    def _element_attrs(self):
        return {"element_dtype": self.dtype, "element_shape": self.element_shape}

    def _merge_element_shape(self, shape: TensorShape, what: str) -> TensorShape:
        if not self.element_shape.is_compatible_with(shape):
            raise ValueError(f"TensorArray {what}: element of shape {shape} is not compatible with the "
                             f"array's element shape {self.element_shape}")
        return self.element_shape.merge_with(shape) if self.infer_shape else self.element_shape

    # -- operations -------------------------------------------------------------
    def write(self, index, value, name=None) -> TensorArray:
        """A TensorArray with `value` at `index`."""
        value = convert(value, self.dtype if not hasattr(value, "dtype") else None)
        self._check_dtype(value, "write")
        shape = self._merge_element_shape(value.shape, "write")
        flow = apply("TensorListWrite", [self.flow, _index(index), value])
        return self._with_flow(flow, shape)

    def read(self, index, name=None) -> Tensor:
        """The element at `index` (zeros if never written and its shape is known)."""
        return apply("TensorListRead", [self.flow, _index(index)], self._element_attrs())

    def stack(self, name=None) -> Tensor:
        """All elements stacked along a new axis 0."""
        return apply("TensorListStack", [self.flow], self._element_attrs())

    def gather(self, indices, name=None) -> Tensor:
        """The elements at `indices`, stacked."""
        indices = convert(indices, dtypes.int32 if isinstance(indices, list | tuple) else None)
        return apply("TensorListGather", [self.flow, indices], self._element_attrs())

    def scatter(self, indices, value, name=None) -> TensorArray:
        """A TensorArray with ``value[k]`` at ``indices[k]``."""
        indices = convert(indices, dtypes.int32 if isinstance(indices, list | tuple) else None)
        value = convert(value, self.dtype if not hasattr(value, "dtype") else None)
        self._check_dtype(value, "scatter")
        shape = self._merge_element_shape(value.shape[1:], "scatter")
        return self._with_flow(apply("TensorListScatter", [self.flow, indices, value]), shape)

    def unstack(self, value, name=None) -> TensorArray:
        """A TensorArray whose elements are the rows of `value`."""
        value = convert(value, self.dtype if not hasattr(value, "dtype") else None)
        self._check_dtype(value, "unstack")
        shape = self._merge_element_shape(value.shape[1:], "unstack")
        return self._with_flow(apply("TensorListUnstack", [self.flow, value]), shape)

    def concat(self, name=None) -> Tensor:
        """All elements joined along their axis 0 (their first dimensions may differ)."""
        return apply("TensorListConcat", [self.flow], self._element_attrs())

    def split(self, value, lengths, name=None) -> TensorArray:
        """A TensorArray whose elements are consecutive pieces of `value`, ``lengths[i]`` rows each."""
        value = convert(value, self.dtype if not hasattr(value, "dtype") else None)
        self._check_dtype(value, "split")
        lengths = convert(lengths, dtypes.int32 if isinstance(lengths, list | tuple) else None)
        shape = self._merge_element_shape(TensorShape([None]).concatenate(value.shape[1:])
                                          if value.shape.rank else TensorShape(None), "split")
        return self._with_flow(apply("TensorListSplit", [self.flow, value, lengths]), shape)

    def identity(self, name=None) -> TensorArray:
        """A TensorArray with the same elements (TensorFlow uses it to order reads)."""
        return self._with_flow(identity(self.flow))

    def close(self, name=None):
        """Accepted for TensorFlow compatibility; does nothing (the array is freed with its last reference)."""
        return None

    def size(self, name=None) -> Tensor:
        """The number of elements, as an int32 scalar tensor."""
        return apply("TensorListSize", [self.flow])

    def _check_dtype(self, value, what):
        if value.dtype is not self.dtype:
            raise TypeError(f"TensorArray {what}: the array holds {self.dtype.name} but the value is "
                            f"{value.dtype.name}; cast it with autoloop.cast")

    def __repr__(self):
        return f"<autoloop.TensorArray dtype={self.dtype.name} element_shape={self.element_shape}>"


def _index(index):
    index = convert(index, dtypes.int32 if isinstance(index, int) else None)
    if index.dtype not in (dtypes.int32, dtypes.int64) or index.shape.rank not in (0, None):
        raise TypeError(f"a TensorArray index must be a scalar integer, got {index!r}")
    return index
