"""Element types of tensors.

A `DType` names one numpy scalar type: ``bool``, ``int8``, ``int16``,
``int32``, ``int64``, ``uint8``, ``float16``, ``float32``, ``float64``.
Python values convert as TensorFlow converts them: ``bool`` -> ``bool``,
``int`` -> ``int32``, ``float`` -> ``float32``; numpy values keep their
dtype. ``variant`` is internal: the type of a TensorArray's list value.

    >>> as_dtype("float32") is float32
    True
    >>> infer_dtype(3)
    autoloop.int32
"""

from __future__ import annotations

import builtins
from typing import Union

import numpy as np


class DType:
    """One element type; compare with ``is`` or ``==``."""

    __slots__ = ("name", "as_numpy_dtype", "_np")

    def __init__(self, name: str, numpy_type):
        self.name = name
        self.as_numpy_dtype = numpy_type
        self._np = np.dtype(numpy_type) if numpy_type is not object else np.dtype(object)

    @property
    def is_floating(self) -> builtins.bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> builtins.bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> builtins.bool:
        return self._np.kind in "ub"

    @property
    def is_bool(self) -> builtins.bool:
        return self._np.kind == "b"

    @property
    def is_numeric(self) -> builtins.bool:
        return self.is_floating or self.is_integer

    @property
    def size(self) -> builtins.int:
        """Bytes per element."""
        return self._np.itemsize

    @property
    def min(self):
        """The lowest value of this dtype (-inf for floats)."""
        return self._limits()[0]

    @property
    def max(self):
        """The highest value of this dtype (inf for floats)."""
        return self._limits()[1]

    def _limits(self):
        if self.is_floating:
            return -np.inf, np.inf
        if self.is_integer:
            info = np.iinfo(self._np)
            return builtins.int(info.min), builtins.int(info.max)
        if self.is_bool:
            return False, True
        raise TypeError(f"{self.name} has no minimum or maximum")

    def __repr__(self) -> str:
        return f"autoloop.{self.name}"

    def __str__(self) -> str:
        # TensorFlow's spelling, so `print(x.dtype)` reads as it does there.
        return f"<dtype: {self.name!r}>"

    def __reduce__(self):
        return as_dtype, (self.name,)


bool_ = DType("bool", np.bool_)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
variant = DType("variant", object)

half = float16  # TensorFlow's other names
double = float64

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, float16, float32, float64)
_BY_NAME = {d.name: d for d in SUPPORTED + (variant,)}
_BY_NAME.update(half=float16, double=float64)
_BY_NUMPY = {d._np: d for d in SUPPORTED}


# from_numpy(array.dtype): the DType of a numpy dtype object, or None if unsupported. The dict's own
# lookup, for hot paths (an eager op reads its inputs' dtypes; a Python function would cost 60 ns);
# `as_dtype` takes anything that names a dtype and explains a failure.
from_numpy = _BY_NUMPY.get


DTypeLike = Union[DType, str, type, np.dtype]  # what `as_dtype` accepts: autoloop.float32, "float32", np.float32


def as_dtype(value: DTypeLike) -> DType:
    """The DType named by `value`: a DType, its name, a numpy dtype or type.

    Raises TypeError for anything else, naming the supported types.
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value is builtins.bool:
        return bool_
    if value is builtins.int:
        return int32
    if value is builtins.float:
        return float32
    try:
        found = _BY_NUMPY.get(np.dtype(value))
    except TypeError:
        found = None
    if found is None:
        names = ", ".join(d.name for d in SUPPORTED)
        raise TypeError(f"unsupported dtype {value!r}: autoloop supports {names}") from None
    return found


_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1
_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def infer_dtype(value) -> DType:
    """The dtype a Python or numpy value converts to (TensorFlow's defaults).

    Nested lists take the widest kind of their elements: any float makes
    float32, else any int makes int32 (int64 if a value does not fit int32),
    else bool. An int that fits no integer dtype is a TypeError.
    """
    if isinstance(value, np.ndarray | np.generic):
        return as_dtype(value.dtype)
    if isinstance(value, builtins.bool):
        return bool_
    if isinstance(value, builtins.int):
        if _INT32_MIN <= value <= _INT32_MAX:
            return int32
        if _INT64_MIN <= value <= _INT64_MAX:
            return int64
        raise TypeError(f"cannot convert int {value} to a tensor: it fits no integer dtype "
                        f"(int64 holds {_INT64_MIN} to {_INT64_MAX})")
    if isinstance(value, builtins.float):
        return float32
    if isinstance(value, list | tuple):
        kinds = {infer_dtype(item) for item in value}
        for candidate in (float64, float32, float16, int64, int32, int16, int8, uint8, bool_):
            if candidate in kinds:
                return candidate
        return float32  # an empty list, as in TensorFlow
    raise TypeError(f"cannot convert {type(value).__name__} {value!r} to a tensor")
