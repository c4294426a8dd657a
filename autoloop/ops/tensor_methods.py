"""`Tensor`'s Python operators, indexing and iteration, given to it by the op library.

`autoloop.tensor` defines the value type and imports nothing of
`autoloop.ops` (the op library builds on it). Importing the op library runs
this module, which installs ``x + y`` as ``autoloop.add(x, y)``, ``x[i]`` as
``slice_tensor(x, i)``, ``x.T`` as ``transpose(x)``, and so on:

    >>> constant([1, 2]) + 1
    <autoloop.Tensor: shape=(2,), dtype=int32, numpy=[2 3]>
"""

from __future__ import annotations

import numpy as np

from autoloop.ops import math_ops
from autoloop.ops.array_ops import slice_tensor
from autoloop.ops.linalg_ops import matmul
from autoloop.ops.shape_ops import transpose, unstack
from autoloop.tensor import BOOL_HINT, Tensor

# Python's name for the operator -> the op, for operators that have a reflected form (__radd__).
_REFLECTED = {
    "add": math_ops.add, "sub": math_ops.subtract, "mul": math_ops.multiply, "truediv": math_ops.divide,
    "floordiv": math_ops.floordiv, "mod": math_ops.mod, "pow": math_ops.pow, "matmul": matmul,
    "and": math_ops.bitwise_and, "or": math_ops.bitwise_or, "xor": math_ops.bitwise_xor,
}
_COMPARISONS = {
    "lt": math_ops.less, "le": math_ops.less_equal, "gt": math_ops.greater, "ge": math_ops.greater_equal,
}  # == and != too, with None's rule: `_equality_method`
_UNARY = {"neg": math_ops.negative, "abs": math_ops.abs, "invert": math_ops.invert, "pos": math_ops.identity}


def _method(fn, python_name: str, node_name=None):
    """`node_name` names the node in a graph, as TensorFlow names an operator's (``x + y`` is ``add``)."""
    def method(self, other):
        return fn(self, other, name=node_name)
    method.__name__ = python_name
    return method


def _equality_method(fn, python_name: str, with_none: bool):
    """``==``/``!=``: element-wise, except against None, which no tensor equals (TensorFlow's rule:
    ``t == None`` is False, so ``None in (t,)`` and ``x is None or x == None`` work)."""
    def method(self, other):
        if other is None:
            return with_none
        return fn(self, other)
    method.__name__ = python_name
    return method


def _reflected_method(fn, python_name: str, node_name=None):
    def method(self, other):
        return fn(other, self, name=node_name)
    method.__name__ = python_name
    return method


def _unary_method(fn, python_name: str):
    def method(self):
        return fn(self)
    method.__name__ = python_name
    return method


def _iter(self):
    """The rows along axis 0 (``a, b = t`` for a tensor of 2 rows).

    A symbolic tensor can be iterated only when its first dimension is
    known while tracing; a loop over a tensor of unknown length needs
    conversion (``for row in t`` inside @autoloop.function).
    """
    if self.is_symbolic:
        rank, rows = self.shape.rank, self.shape[0] if self.shape.rank else None
        if rank == 0:
            raise TypeError("Cannot iterate over a scalar (rank 0) tensor.")
        if rows is None:
            raise TypeError(f"Iterating over a symbolic tensor ({self.name}) of unknown length is not "
                            f"allowed. {BOOL_HINT}.")
        return iter(unstack(self, num=rows))
    if np.ndim(self.numpy()) == 0:
        raise TypeError("Cannot iterate over a scalar (rank 0) tensor.")
    # An op, not fresh constants: a GradientTape recording here sees each row come from `self`.
    return iter(unstack(self, num=len(self.numpy())))


def install(cls=Tensor) -> None:
    """Give `cls` its operators, ``__getitem__`` and ``__iter__``."""
    for name, fn in _REFLECTED.items():
        setattr(cls, f"__{name}__", _method(fn, f"__{name}__", name))
        setattr(cls, f"__r{name}__", _reflected_method(fn, f"__r{name}__", name))
    for name, fn in _COMPARISONS.items():
        setattr(cls, f"__{name}__", _method(fn, f"__{name}__"))
    cls.__eq__ = _equality_method(math_ops.equal, "__eq__", with_none=False)
    cls.__ne__ = _equality_method(math_ops.not_equal, "__ne__", with_none=True)
    for name, fn in _UNARY.items():
        setattr(cls, f"__{name}__", _unary_method(fn, f"__{name}__"))
    cls.__getitem__ = slice_tensor
    cls.__iter__ = _iter
    cls.T = property(_transposed)


def _transposed(self):
    """The transpose: axes in reverse order (a matrix's rows become columns), as ``ndarray.T``."""
    return transpose(self)


install()
