"""Constants, placeholders and conversion to tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from autoloop import dtypes
from autoloop.dtypes import DTypeLike
from autoloop.ir import context
from autoloop.ops.dispatch import constant_node, convert
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, eager, to_numpy_value


def _const_infer(value):
    if isinstance(value, np.ndarray | np.generic):
        return Spec(dtypes.as_dtype(value.dtype), TensorShape(np.shape(value)), value)
    return Spec(dtypes.variant, TensorShape([]))


def _placeholder_kernel(dtype, shape):
    raise RuntimeError("a Placeholder is given its value by the executor, never computed")


register(OpDef("Const", kernel=lambda value: value, infer=_const_infer, gradient=NOT_DIFFERENTIABLE))
register(OpDef("Placeholder", kernel=_placeholder_kernel, infer=lambda dtype, shape: Spec(dtype, shape),
               gradient=NOT_DIFFERENTIABLE))


def constant(value: Any, dtype: DTypeLike | None = None, shape: Any = None, name: str | None = None) -> Tensor:
    """A tensor holding `value` (a Python number, nested list or numpy array).

    With `shape`, a scalar is filled into that shape and other values are
    reshaped to it. Inside a traced function the result is a graph constant.

        >>> constant([1, 2]).dtype
        autoloop.int32
    """
    if isinstance(value, Tensor):
        value = value.numpy()
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    array = np.array(to_numpy_value(value, dtype))  # a copy: the caller may change theirs
    if shape is not None:
        shape = list(shape)
        if array.size == 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        else:
            try:
                array = array.reshape(shape)
            except ValueError:
                raise ValueError(f"constant: {array.size} values cannot take shape {shape}") from None
    graph = context.current_graph()
    if graph is None:
        return eager(array)
    constant_value = array[()] if array.ndim == 0 else array
    return Tensor(value=constant_node(graph, constant_value, name))


def convert_to_tensor(value: Any, dtype: DTypeLike | None = None, dtype_hint: DTypeLike | None = None,
                      name: str | None = None) -> Tensor:
    """`value` as a Tensor of `dtype` (TypeError when it cannot be one).

    `dtype_hint` is used for Python values when it fits them.
    """
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if dtype is None and dtype_hint is not None and not isinstance(value, Tensor | np.ndarray | np.generic):
        try:
            return convert(value, dtypes.as_dtype(dtype_hint))
        except (TypeError, ValueError):
            pass
    if hasattr(value, "__autoloop_tensor__"):
        value = value.__autoloop_tensor__()
    return convert(value, dtype)
