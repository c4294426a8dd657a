"""`SparseTensor` and `IndexedSlices`: composites that may be loop variables.

Their shape invariants follow TensorFlow's `tf.while_loop` reference:

a) a SparseTensor's invariant is ``TensorShape([r])``, the shape of its
   ``dense_shape`` vector; its components then have shapes
   ``indices [None, r]``, ``values [None]``, ``dense_shape [r]``;
b) an IndexedSlices' invariant is an invariant ``S`` of its ``values``; its
   components then have shapes ``values S``, ``indices [S[0]]``,
   ``dense_shape [S.ndims]``.
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.control_flow.composite import CompositeTensor
from autoloop.errors import ShapeInvariantError
from autoloop.ops.dispatch import constant_value, convert
from autoloop.shapes import TensorShape, as_shape


class SparseTensor(CompositeTensor):
    """A sparse tensor: ``values[k]`` sits at ``indices[k]`` of a ``dense_shape`` array."""

    def __init__(self, indices, values, dense_shape):
        self.indices = convert(indices, dtypes.int64 if _is_python(indices) else None)
        self.values = convert(values)
        self.dense_shape = convert(dense_shape, dtypes.int64 if _is_python(dense_shape) else None)
        if self.indices.dtype is not dtypes.int64 or self.dense_shape.dtype is not dtypes.int64:
            raise TypeError("SparseTensor indices and dense_shape must be int64 tensors")
        if self.dense_shape.shape.rank not in (None, 1):
            raise ValueError(f"SparseTensor dense_shape must be a vector, got shape {self.dense_shape.shape}")

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def shape(self) -> TensorShape:
        """The static dense shape (partly unknown when dense_shape is not a constant)."""
        known = constant_value(self.dense_shape)
        if known is not None:
            return TensorShape([int(d) for d in known])
        rank = self.dense_shape.shape[0] if self.dense_shape.shape.rank == 1 else None
        return TensorShape(None if rank is None else [None] * rank)

    def get_shape(self):
        return self.shape

    def components(self):
        return [self.indices, self.values, self.dense_shape]

    def from_components(self, components):
        new = object.__new__(SparseTensor)
        new.indices, new.values, new.dense_shape = components
        return new

    def component_invariants(self, invariant):
        """Invariants of (indices, values, dense_shape) for the user's `invariant`: TensorShape([r]),
        the shape of the dense_shape vector (r = the dense rank), or TensorShape(None) (any rank)."""
        if invariant is None:
            rank = self.dense_shape.shape[0] if self.dense_shape.shape.rank == 1 else None
            invariant = TensorShape([rank])
        invariant = as_shape(invariant)
        if invariant.rank not in (1, None):
            raise ShapeInvariantError(
                f"the shape invariant of a SparseTensor must be TensorShape([r]), the shape of its "
                f"dense_shape vector (r = the dense rank), or TensorShape(None); got {invariant}")
        rank = invariant[0] if invariant.rank == 1 else None
        return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]

    def type_key(self):
        return ("SparseTensor", self.values.dtype)

    def __repr__(self):
        # The parts as they print (str), as TensorFlow shows a SparseTensor.
        return f"SparseTensor(indices={self.indices}, values={self.values}, dense_shape={self.dense_shape})"


class IndexedSlices(CompositeTensor):
    """Rows ``values[k]`` of a dense tensor, at rows ``indices[k]`` of it."""

    def __init__(self, values, indices, dense_shape=None):
        self.values = convert(values)
        self.indices = convert(indices, dtypes.int64 if _is_python(indices) else None)
        if self.indices.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"IndexedSlices indices must be int32 or int64, got {self.indices.dtype.name}")
        self.dense_shape = None
        if dense_shape is not None:
            self.dense_shape = convert(dense_shape, dtypes.int64 if _is_python(dense_shape) else None)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def shape(self) -> TensorShape:
        if self.dense_shape is None:
            return TensorShape(None)
        known = constant_value(self.dense_shape)
        if known is not None:
            return TensorShape([int(d) for d in known])
        return TensorShape([None] * self.values.shape.rank) if self.values.shape.rank is not None else TensorShape(None)

    def components(self):
        parts = [self.values, self.indices]
        return parts + ([self.dense_shape] if self.dense_shape is not None else [])

    def from_components(self, components):
        new = object.__new__(IndexedSlices)
        new.values, new.indices = components[0], components[1]
        new.dense_shape = components[2] if len(components) > 2 else None
        return new

    def component_invariants(self, invariant):
        values_shape = as_shape(invariant) if invariant is not None else self.values.shape
        if values_shape.rank is None:
            shapes = [values_shape, TensorShape([None]), TensorShape([None])]
        else:
            if values_shape.rank == 0:
                raise ShapeInvariantError(
                    f"the shape invariant of an IndexedSlices is one of its values, which have rank "
                    f">= 1; got {values_shape}")
            shapes = [values_shape, TensorShape([values_shape[0]]), TensorShape([values_shape.rank])]
        return shapes[:len(self.components())]

    def type_key(self):
        return ("IndexedSlices", self.values.dtype, self.dense_shape is None)

    def __repr__(self):
        return f"IndexedSlices(values={self.values!r}, indices={self.indices!r}, dense_shape={self.dense_shape!r})"


def _is_python(value) -> bool:
    return isinstance(value, list | tuple | int)
