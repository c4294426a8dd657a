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

import sys
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from autoloop import dtypes
from autoloop.dtypes import DType
from autoloop.ir.graph import Value
from autoloop.shapes import TensorShape, as_shape

NUMPY_VALUES = (np.ndarray, np.generic)  # a tuple: `np.ndarray | np.generic` is built anew on every use

BOOL_HINT = (
    "Python control flow (if, while, and, or, not) on a tensor inside a traced function "
    "needs conversion: use @autoloop.function (with autograph=True, the default), or "
    "autoloop.cond / autoloop.while_loop")


_new_object = object.__new__


class Operators:
    """What `Tensor` and `Variable` get from `autoloop.ops.tensor_methods` (``x + y`` is ``add(x, y)``,
    ``x[i]``, ``x.T``, iteration), declared for type checkers: the methods are installed when the op
    library loads, so at run time this class is empty."""

    __slots__ = ()

    if TYPE_CHECKING:
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __floordiv__(self, other: Any) -> Tensor: ...
        def __rfloordiv__(self, other: Any) -> Tensor: ...
        def __mod__(self, other: Any) -> Tensor: ...
        def __rmod__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __and__(self, other: Any) -> Tensor: ...
        def __rand__(self, other: Any) -> Tensor: ...
        def __or__(self, other: Any) -> Tensor: ...
        def __ror__(self, other: Any) -> Tensor: ...
        def __xor__(self, other: Any) -> Tensor: ...
        def __rxor__(self, other: Any) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __eq__(self, other: object) -> Any: ...  # a Tensor; False against None
        def __ne__(self, other: object) -> Any: ...  # a Tensor; True against None
        def __neg__(self) -> Tensor: ...
        def __pos__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __getitem__(self, index: Any) -> Tensor: ...
        def __iter__(self) -> Iterator[Tensor]: ...
        @property
        def T(self) -> Tensor: ...  # noqa: N802 - numpy's name


class Tensor(Operators):
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

    @staticmethod
    def of_value(numpy_value) -> Tensor:
        """``Tensor(numpy_value)`` made without calling `__init__` (what a cached call returns, made on every
        call: 0.2 µs less of a 6 µs JAX call). Sets every slot `__init__` sets, to the same values."""
        tensor = _new_object(Tensor)
        tensor._numpy = numpy_value
        tensor._value = None
        tensor._name = "Const"
        tensor._weak = False
        return tensor

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
        if not isinstance(self._numpy, NUMPY_VALUES):
            return dtypes.variant  # a TensorArray's list
        return dtypes.from_numpy(self._numpy.dtype) or dtypes.as_dtype(self._numpy.dtype)

    @property
    def shape(self) -> TensorShape:
        if self._value is not None:
            return self._value.shape
        if not isinstance(self._numpy, NUMPY_VALUES):
            return TensorShape([])
        return TensorShape.of_ints(self._numpy.shape)

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
            from autoloop.symbolic_errors import escaped_error, value_error
            escaped = escaped_error(self)  # AttributeError, as TensorFlow's graph tensors have no numpy()
            raise escaped if escaped is not None else value_error(self, sys._getframe(1))
        return self._numpy

    def __array__(self, dtype=None, copy=None):
        array = np.asarray(self.numpy())
        return array.astype(dtype) if dtype is not None else array

    def __bool__(self):
        if self._value is not None:
            raise TypeError(f"Using a symbolic autoloop.Tensor ({self.name}) as a Python bool is "
                            f"not allowed. {BOOL_HINT}.")
        return bool(self._numpy)

    def __index__(self):
        if self._value is not None and self.dtype.is_integer:
            from autoloop.symbolic_errors import index_error
            raise index_error(self, sys._getframe(1))
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

    def __hash__(self):
        if self._value is not None and _root(self._value.graph).tf1_style:
            return id(self)  # a TF1 graph's tensors key feed_dict, as in TensorFlow
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
        if self._value is not None:  # TensorFlow's str of a graph tensor (what a trace-time print shows)
            return f'Tensor("{self.name}", shape={self.shape}, dtype={self.dtype.name})'
        text = str(self._numpy)
        if "\n" in text:  # as TensorFlow prints it: a matrix starts on its own line
            text = "\n" + text
        return f"autoloop.Tensor({text}, shape={self.shape}, dtype={self.dtype.name})"

    # Filled by autoloop.compat.v1: ``evaluate(tensor, feed_dict)`` in the default Session, or
    # NotImplemented when there is none. A plugin hook set once at import, not state a trace learns.
    default_session_evaluate = None

    def eval(self, feed_dict=None, session=None):
        """The value of this tensor in `session`, or in the default `compat.v1.Session` (TF1 style).

        Raises NotImplementedError for an eager tensor when no default
        Session is registered (use ``.numpy()``), ValueError for a symbolic
        one.
        """
        if session is not None:
            return session.run(self, feed_dict=feed_dict)
        if Tensor.default_session_evaluate is not None:
            result = Tensor.default_session_evaluate(self, feed_dict)
            if result is not NotImplemented:
                return result
        if self._value is None:
            raise NotImplementedError(
                "Tensor.eval() evaluates in the default autoloop.compat.v1.Session, and none is "
                "registered; this tensor is eager: use .numpy() to get its value")
        raise ValueError(
            f"Cannot evaluate {self.name} with eval(): no default autoloop.compat.v1.Session is "
            f"registered. Return the tensor from the traced function to get its value.")

# Python operators (``x + y``), indexing and iteration are given to Tensor by the op library
# (autoloop.ops.tensor_methods), so this module imports nothing of autoloop.ops.


def _root(graph):
    while graph.parent is not None:
        graph = graph.parent
    return graph


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
    if dtype is not None and not isinstance(value, NUMPY_VALUES):
        check_conversion(array, target, value)
    elif dtype is not None and dtypes.as_dtype(array.dtype) is not target:
        raise TypeError(f"Expected {target.name}, but got a numpy value of dtype {array.dtype}: {value!r}")
    array = array.astype(target.as_numpy_dtype, copy=False)
    return array[()] if array.ndim == 0 else array


def check_conversion(array, target: DType, original):
    """Raise TypeError if converting `array` (made from `original`) to `target` loses information
    (floats to an integer dtype, numbers to bool), ValueError if it is out of the dtype's range."""
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
