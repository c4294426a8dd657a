"""Element types of tensors.

A `DType` names one numpy scalar type. Python values convert as TensorFlow
converts them: ``bool`` -> ``bool``, ``int`` -> ``int32`` (``int64`` when the
value does not fit int32; ValueError when it fits no integer dtype),
``float`` -> ``float32``. ``variant`` is internal: the type of a
TensorArray's list value.

    >>> as_dtype("float32") is float32
    True
    >>> infer_dtype(3), infer_dtype(2**40)
    (autoloop.int32, autoloop.int64)
"""

from __future__ import annotations

import builtins

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
        return self._np.kind == "i"

    @property
    def is_bool(self) -> builtins.bool:
        return self._np.kind == "b"

    @property
    def is_numeric(self) -> builtins.bool:
        return self.is_floating or self.is_integer

    def __repr__(self) -> str:
        return f"autoloop.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)


bool_ = DType("bool", np.bool_)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
variant = DType("variant", object)

_BY_NAME = {d.name: d for d in (bool_, int32, int64, float32, float64, variant)}
_BY_NUMPY = {d._np: d for d in (bool_, int32, int64, float32, float64)}


def as_dtype(value) -> DType:
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
        raise TypeError(
            f"unsupported dtype {value!r}: autoloop supports bool, int32, int64, "
            f"float32 and float64") from None
    return found


_INT32 = np.iinfo(np.int32)
_INT64 = np.iinfo(np.int64)


def integer_dtype(value: int) -> DType:
    """int32 for a Python int that fits it, else int64; ValueError when it fits neither."""
    if _INT32.min <= value <= _INT32.max:
        return int32
    if _INT64.min <= value <= _INT64.max:
        return int64
    raise ValueError(f"the Python int {value} does not fit any integer dtype: int64 holds "
                     f"{_INT64.min} to {_INT64.max}")


def infer_dtype(value) -> DType:
    """The dtype a Python or numpy value converts to (TensorFlow's defaults).

    Nested lists take the widest kind of their elements: any float makes
    float32, else any int makes int32 (int64 if one does not fit int32),
    else bool.
    """
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype == np.float16:
            return float32
        return as_dtype(value.dtype)
    if isinstance(value, builtins.bool):
        return bool_
    if isinstance(value, builtins.int):
        return integer_dtype(value)
    if isinstance(value, builtins.float):
        return float32
    if isinstance(value, list | tuple):
        kinds = {infer_dtype(item) for item in value}
        for candidate in (float64, float32, int64, int32, bool_):
            if candidate in kinds:
                return candidate
        return float32  # an empty list, as in TensorFlow
    raise TypeError(f"cannot convert {type(value).__name__} {value!r} to a tensor")
