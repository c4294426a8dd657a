"""Which values graph control flow can carry, and the dtype and shape they travel with.

A value is *tensor-like* when a graph loop or branch can carry it: a tensor,
a number, a TensorArray or TensorList, a SparseTensor-like composite, or a
non-empty nested structure of those. A `LeafSpec` is the dtype and shape of
one tensor; `unify` finds the one spec a variable can have on every path:

    >>> unify("x", [constant(1.5), 2], "")      # the Python int takes the tensor's dtype
    LeafSpec(float32, ())
    >>> unify("x", [0, 3.75], "")               # Python numbers only: the widest kind
    LeafSpec(float32, ())
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes, nest
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.ops import api
from autoloop.ops.dispatch import convert
from autoloop.runtime.lists import TensorList
from autoloop.runtime.undefined import MaybeUndefined, Undefined
from autoloop.runtime.values import is_number, is_python_scalar
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


class SpecError(Exception):
    """The paths of graph control flow give a variable values no single tensor can hold.

    `structures`, when the nested structures differ: the two that do.
    """

    def __init__(self, message, structures=None):
        super().__init__(message)
        self.structures = structures


def is_composite(value) -> bool:
    return hasattr(value, "components") and hasattr(value, "from_components")


def is_tensor_like(value) -> bool:
    """A value graph control flow can carry (possibly nested; a TensorList as its array)."""
    if isinstance(value, (Undefined, MaybeUndefined)) or value is None:
        return False
    if isinstance(value, (Tensor, TensorArray, TensorList)) or is_number(value) or is_composite(value):
        return True
    if isinstance(value, (list, tuple, dict)):
        leaves = nest.flatten(value)
        return bool(leaves) and all(is_tensor_like(leaf) for leaf in leaves)
    return False


def kind_name(value) -> str:
    """How a message names what a variable holds: ``a float32 Tensor``, ``a Python str``."""
    if isinstance(value, Undefined):
        return "not assigned"
    if isinstance(value, MaybeUndefined):
        return f"assigned on some paths only ({kind_name(value.value)})"
    if value is None:
        return "None"
    if isinstance(value, Tensor):
        return f"a {value.dtype.name} Tensor"
    if isinstance(value, TensorList):
        return f"a list of {value.array.dtype.name} tensors built in graph control flow"
    if is_python_scalar(value):
        return f"the Python {type(value).__name__} {value!r}"
    if isinstance(value, list | tuple | dict):  # two of one type differ by their length
        return f"a Python {type(value).__name__} of {len(value)} item{'' if len(value) == 1 else 's'}"
    return f"a Python {type(value).__name__}"


class LeafSpec:
    """dtype and shape of one tensor (a leaf of a possibly nested value)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, TensorShape(shape) if not isinstance(shape, TensorShape) else shape

    def __eq__(self, other):
        return isinstance(other, LeafSpec) and (self.dtype, self.shape) == (other.dtype, other.shape)

    def __hash__(self):
        return hash((self.dtype, self.shape))

    def __repr__(self):
        return f"LeafSpec({self.dtype.name}, {self.shape})"


def leaf_spec(value) -> LeafSpec | None:
    """The spec of one leaf; None for a composite (it travels as it is)."""
    if isinstance(value, TensorList):
        return LeafSpec(value.array.dtype, value.array.element_shape)
    if isinstance(value, TensorArray) or is_composite(value):
        return None
    tensor = value if isinstance(value, Tensor) else convert(value)
    return LeafSpec(tensor.dtype, tensor.shape)


def spec_of(value):
    """The `LeafSpec` of a tensor-like value, or the same structure of them for a nested one."""
    if isinstance(value, MaybeUndefined):
        value = value.value
    return nest.map_structure(leaf_spec, value)


def zeros_for(spec):
    """Zeros of `spec` (a placeholder value for a variable that is not yet defined)."""
    if spec is None:
        raise NotImplementedError("a TensorArray or SparseTensor assigned on some paths of graph control "
                                  "flow only: assign it before the loop or if statement")
    if not isinstance(spec, LeafSpec):
        return nest.map_structure(zeros_for, spec)
    shape = spec.shape
    dims = [0 if d is None else d for d in (shape.as_list() if shape.rank is not None else [])]
    return api.zeros(dims, dtype=spec.dtype)


def to_bool(value):
    """`value` as a boolean scalar tensor."""
    if isinstance(value, Tensor):
        if value.dtype is dtypes.bool_:
            return value
        return api.not_equal(value, api.zeros_like(value))
    return api.constant(bool(value))


def as_spec(value, spec: LeafSpec | None):
    """`value` (one leaf) as a tensor of `spec`'s dtype; SpecError if that would change its value.

    A weak tensor (a Python number made a tensor) is cast, as the number would convert.
    """
    if spec is None or isinstance(value, (TensorArray, TensorList)) or is_composite(value):
        return value
    if isinstance(value, Tensor):
        if value.dtype is spec.dtype:
            return value
        if value._weak and _fits_kind(value.dtype, spec.dtype):
            return api.cast(value, spec.dtype)
        raise SpecError(f"a {value.dtype.name} Tensor where {spec.dtype.name} is expected")
    try:
        return convert(value, spec.dtype)
    except (TypeError, ValueError) as error:
        raise SpecError(str(error)) from None


def _fits_kind(source, target) -> bool:
    """Whether a Python number of `source`'s kind converts to `target` (never a float to an int)."""
    return not (source.is_floating and not target.is_floating) and not (source.is_integer and target.is_bool)


def is_weak(value) -> bool:
    """A Python number, or a tensor that stands for one (``Tensor._weak``)."""
    return is_python_scalar(value) or isinstance(value, Tensor) and value._weak


def weak(tensor: Tensor) -> Tensor:
    """`tensor`, marked as standing for a Python number (see `math_ops.binary_inputs`)."""
    tensor._weak = True
    return tensor


def unify(name: str, values, where: str):
    """The one spec (structure) that every value in `values` fits; SpecError if there is none.

    Tensors decide the dtype and must agree on it; Python numbers take the
    tensors' dtype when they fit it, and without tensors the widest kind of
    them (bool < int < float), as a Python value would widen. Shapes become
    the most specific shape compatible with every value's.
    """
    values = [v.value if isinstance(v, MaybeUndefined) else v for v in values]
    first = values[0]
    for other in values[1:]:
        try:
            nest.assert_same_structure(first, other, check_types=False)
        except (TypeError, ValueError):
            raise SpecError(f"'{name}' has the nested structure {nest.map_structure_up_to_leaves(first)!r} "
                            f"on one path and {nest.map_structure_up_to_leaves(other)!r} on another{where}",
                            (first, other)) from None
    columns = zip(*[nest.flatten(v) for v in values])
    leaves = [_unify_leaf(name, list(column), where) for column in columns]
    return nest.pack_sequence_as(first, leaves)


def _unify_leaf(name, leaves, where):
    if any(isinstance(leaf, (TensorArray, TensorList)) or is_composite(leaf) for leaf in leaves):
        return None
    weak = [leaf for leaf in leaves if is_weak(leaf)]
    specs = [leaf if isinstance(leaf, LeafSpec) else leaf_spec(leaf) for leaf in leaves
             if isinstance(leaf, (LeafSpec, Tensor, np.ndarray, np.generic)) and not is_weak(leaf)]
    if specs:
        dtype = specs[0].dtype
        for spec in specs[1:]:
            if spec.dtype is not dtype:
                raise SpecError(f"'{name}' is {spec.dtype.name} on one path and {dtype.name} on another{where}; "
                                f"a graph value has one dtype on every path (use autoloop.cast)")
        for value in weak:
            if not _fits_kind(_weak_dtype(value), dtype) or is_python_scalar(value) and not _converts(value, dtype):
                raise SpecError(f"'{name}' is a {dtype.name} Tensor on one path and the Python "
                                f"{_weak_kind(value)} {_weak_text(value)} on another{where}, which does not fit "
                                f"{dtype.name}; make both the same dtype (for example "
                                f"autoloop.cast(..., autoloop.float32))")
    else:
        dtype = _python_dtype(weak)
    shapes = [spec.shape for spec in specs] + [leaf.shape if isinstance(leaf, Tensor) else TensorShape([])
                                              for leaf in weak]
    shape = None
    for leaf_shape in shapes:
        if leaf_shape.rank is None and shape is None:
            continue
        shape = leaf_shape if shape is None else shape.most_specific_compatible_shape(leaf_shape)
    return LeafSpec(dtype, shape if shape is not None else TensorShape(None))


def _converts(scalar, dtype) -> bool:
    try:
        convert(scalar, dtype)
        return True
    except (TypeError, ValueError):
        return False


def _weak_dtype(value):
    return value.dtype if isinstance(value, Tensor) else dtypes.infer_dtype(value)


def _weak_kind(value) -> str:
    dtype = _weak_dtype(value)
    return "float" if dtype.is_floating else "bool" if dtype.is_bool else "int"


def _weak_text(value) -> str:
    return repr(value) if is_python_scalar(value) else f"(a {value.dtype.name} value)"


def _python_dtype(values):
    """The dtype Python numbers (and weak tensors) widen to: bool < int < float."""
    kinds = [_weak_dtype(v) for v in values]
    if all(k.is_bool for k in kinds):
        return dtypes.bool_
    floats = [k for k in kinds if k.is_floating]
    if floats:
        return max(floats, key=lambda d: d.as_numpy_dtype().itemsize)
    return max((k for k in kinds if not k.is_bool), key=lambda d: d.as_numpy_dtype().itemsize)