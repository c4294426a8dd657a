"""`Tensor`: autoloop's value type, eager or symbolic.

An *eager* tensor holds a numpy value (a numpy scalar for rank 0, an
ndarray otherwise). A *symbolic* tensor refers to a `Value` of the graph
being traced. Every op accepts both: outside a trace it computes at once,
inside one it adds a node (eager inputs become constants).

    >>> t = constant([[1., 2.], [3., 4.]])
    >>> t.shape, t.dtype
    (TensorShape([2, 2]), autoloop.float32)
    >>> (t * 2)[1, 0].numpy()
    np.float32(6.0)
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.dtypes import DType
from autoloop.ir.graph import Value
from autoloop.shapes import TensorShape, as_shape

_BOOL_HINT = (
    "Python control flow (if, while, and, or, not) on a tensor inside a traced function "
    "needs conversion: use @autoloop.function (with autograph=True, the default), or "
    "autoloop.cond / autoloop.while_loop")


class Tensor:
    """A tensor; see the module docstring."""

    __slots__ = ("_numpy", "_value", "_name", "_weak", "__weakref__")
    __array_priority__ = 100  # numpy defers to our operators

    def __init__(self, numpy_value=None, value: Value | None = None, name: str = "Const"):
        self._numpy = numpy_value
        self._value = value
        self._name = name
        # A Python number that graph control flow had to make a tensor: in arithmetic it still
        # takes the other operand's dtype, as the number would (JAX calls this weakly typed).
        self._weak = False

    # -- kind ------------------------------------------------------------
    @property
    def is_symbolic(self) -> bool:
        return self._value is not None

    @property
    def graph(self):
        return self._value.graph if self._value is not None else None

    # -- static information ------------------------------------------------
    @property
    def dtype(self) -> DType:
        if self._value is not None:
            return self._value.dtype
        if not isinstance(self._numpy, np.ndarray | np.generic):
            return dtypes.variant  # a TensorArray's list
        return dtypes.as_dtype(self._numpy.dtype)

    @property
    def shape(self) -> TensorShape:
        if self._value is not None:
            return self._value.shape
        if not isinstance(self._numpy, np.ndarray | np.generic):
            return TensorShape([])
        return TensorShape(self._numpy.shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self):
        return self.shape.rank

    @property
    def name(self) -> str:
        return self._value.name if self._value is not None else f"{self._name}:0"

    @property
    def op(self):
        """The graph node that produced a symbolic tensor."""
        return self._value.node if self._value is not None else None

    def set_shape(self, shape) -> None:
        """Declare a more specific static shape; ValueError if incompatible."""
        shape = as_shape(shape)
        if not self.shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {shape}")
        if self._value is not None:
            self._value.shape = self._value.shape.merge_with(shape)

    # -- eager values ------------------------------------------------------
    def numpy(self):
        if self._value is not None:
            raise TypeError(
                f"{self.name} is a symbolic tensor of a graph being traced; it has no value "
                f"until the graph runs. Return it from the traced function to get its value.")
        return self._numpy

    def __array__(self, dtype=None, copy=None):
        array = np.asarray(self.numpy())
        return array.astype(dtype) if dtype is not None else array

    def __bool__(self):
        if self._value is not None:
            raise TypeError(f"Using a symbolic autoloop.Tensor ({self.name}) as a Python bool is "
                            f"not allowed. {_BOOL_HINT}.")
        return bool(self._numpy)

    def __index__(self):
        if self._value is not None or not self.dtype.is_integer:
            raise TypeError(f"only eager integer scalar tensors can be used as an index, got {self!r}")
        return int(self._numpy)

    def __int__(self):
        return int(self.numpy())

    def __float__(self):
        return float(self.numpy())

    def __len__(self):
        if self._value is not None:
            raise TypeError(f"len() of a symbolic tensor is not defined; use autoloop.shape({self.name})[0]")
        if np.ndim(self._numpy) == 0:
            raise TypeError("len() of a scalar (rank 0) tensor")
        return len(self._numpy)

    def __iter__(self):
        """The rows along axis 0 (``a, b = t`` for a tensor of 2 rows).

        A symbolic tensor can be iterated only when its first dimension is
        known while tracing; a loop over a tensor of unknown length needs
        conversion (``for row in t`` inside @autoloop.function).
        """
        from autoloop.ops import api
        if self._value is not None:
            rank, rows = self.shape.rank, self.shape[0] if self.shape.rank else None
            if rank == 0:
                raise TypeError("Cannot iterate over a scalar (rank 0) tensor.")
            if rows is None:
                raise TypeError(f"Iterating over a symbolic tensor ({self.name}) of unknown length is not "
                                f"allowed. {_BOOL_HINT}.")
            return iter(api.unstack(self, num=rows))
        if np.ndim(self._numpy) == 0:
            raise TypeError("Cannot iterate over a scalar (rank 0) tensor.")
        return iter([api.constant(row) for row in self._numpy])

    def __hash__(self):
        raise TypeError("Tensor is unhashable: == compares element-wise. Use id(tensor) as a key.")

    def __repr__(self):
        if self._value is not None:
            return f"<autoloop.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"
        value = self._numpy
        text = str(value) if np.ndim(value) == 0 else repr(np.asarray(value))
        if "\n" in text:
            text = "\n" + text
        return f"<autoloop.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={text}>"

    def __str__(self):
        if self._value is not None:
            return repr(self)
        return f"autoloop.Tensor({self._numpy}, shape={self.shape}, dtype={self.dtype.name})"

    def __getitem__(self, key):
        from autoloop.ops import api
        return api.slice_tensor(self, key)

    def eval(self, feed_dict=None, session=None):
        """The value in the default `compat.v1.Session` (TF1 style)."""
        from autoloop.compat.v1 import session as session_module
        return session_module.evaluate(self, feed_dict, session)


def _binary(op_name, reverse=False):
    def method(self, other):
        from autoloop.ops import api
        fn = getattr(api, op_name)
        return fn(other, self) if reverse else fn(self, other)
    method.__name__ = f"__{'r' if reverse else ''}{op_name}__"
    return method


def _unary(op_name):
    def method(self):
        from autoloop.ops import api
        return getattr(api, op_name)(self)
    return method


for _py, _op in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
                 ("floordiv", "floordiv"), ("mod", "mod"), ("pow", "pow"), ("matmul", "matmul"),
                 ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")]:
    setattr(Tensor, f"__{_py}__", _binary(_op))
    setattr(Tensor, f"__r{_py}__", _binary(_op, reverse=True))
for _py, _op in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
                 ("eq", "equal"), ("ne", "not_equal")]:
    setattr(Tensor, f"__{_py}__", _binary(_op))
for _py, _op in [("neg", "negative"), ("abs", "abs"), ("invert", "invert"), ("pos", "identity")]:
    setattr(Tensor, f"__{_py}__", _unary(_op))
del _py, _op


def is_tensor(value) -> bool:
    return isinstance(value, Tensor)


def eager(value) -> Tensor:
    """An eager tensor over a numpy value (rank 0 stored as a numpy scalar)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    return Tensor(value)


def to_numpy_value(value, dtype: DType | None = None):
    """`value` (Python or numpy) as a numpy value of `dtype`, TF conversion rules.

    Raises TypeError when the conversion would lose information (1.5 to
    int32) or mixes ragged nesting.
    """
    target = dtype or dtypes.infer_dtype(value)
    if target is dtypes.variant:
        raise TypeError(f"cannot convert {value!r} to a variant tensor")
    try:
        array = np.asarray(value)
    except ValueError as error:
        raise ValueError(f"cannot convert {value!r} to a tensor: {error}") from None
    if array.dtype == object:
        raise TypeError(f"cannot convert {type(value).__name__} {value!r} to a tensor")
    if dtype is not None and not isinstance(value, np.ndarray | np.generic):
        _check_python_conversion(array, target, value)
    elif dtype is not None and dtypes.as_dtype(array.dtype) is not target:
        raise TypeError(f"Expected {target.name}, but got a numpy value of dtype {array.dtype}: {value!r}")
    array = array.astype(target.as_numpy_dtype, copy=False)
    return array[()] if array.ndim == 0 else array


def _check_python_conversion(array, target: DType, original):
    if array.size == 0:
        return  # [] is float64 to numpy, but holds no value that could be lost
    kind = array.dtype.kind
    if target.is_bool and kind != "b":
        raise TypeError(f"Cannot convert {original!r} to autoloop tensor of dtype bool")
    if target.is_integer and kind == "f":
        raise TypeError(f"Cannot convert {original!r} to autoloop tensor of dtype {target.name}: "
                        f"it has floating-point values")
    if target.is_integer and kind in "iu" and array.size:
        info = np.iinfo(target.as_numpy_dtype)
        if array.min() < info.min or array.max() > info.max:
            raise ValueError(f"{original!r} is out of range for {target.name}")
