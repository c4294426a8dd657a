"""`TensorShape`: a possibly partial shape.

A shape has an unknown rank (``TensorShape(None)``) or a known rank whose
dimensions are ints or ``None`` (unknown). Partial shapes order by
generality: ``[11, None]`` is more general than ``[11, 17]``; ``[11, 21]``
and ``[11, 17]`` are incompatible.

    >>> TensorShape([None, 2]).is_compatible_with(TensorShape([2048, 2]))
    True
    >>> TensorShape([2, 2]).most_specific_compatible_shape(TensorShape([4, 2]))
    TensorShape([None, 2])
"""

from __future__ import annotations

from typing import Any


class TensorShape:
    """An immutable, possibly partial shape."""

    __slots__ = ("_dims",)
    _dims: tuple[int | None, ...] | None  # None: unknown rank

    def __init__(self, dims: Any = None):
        if isinstance(dims, TensorShape):
            dims = dims._dims
        if dims is None:
            self._dims = None
        elif isinstance(dims, int):
            self._dims = (_dim(dims),)
        else:
            self._dims = tuple(_dim(d) for d in dims)

    @classmethod
    def of_ints(cls, dims: tuple) -> TensorShape:
        """The fully known shape `dims`, a tuple of ints >= 0 taken as it is (a numpy ``shape``).

        For hot paths: an eager op makes one per input, and checking each
        dimension would cost more than the op.
        """
        shape = object.__new__(cls)
        shape._dims = dims
        return shape

    # -- reading ---------------------------------------------------------
    @property
    def rank(self):
        """The number of dimensions, or None when unknown."""
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape")
        return list(self._dims)

    def as_tuple(self):
        """The dims as a tuple, or None for an unknown rank."""
        return self._dims

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        count = 1
        for d in self._dims:
            count *= d
        return count

    # -- relations -------------------------------------------------------
    def is_compatible_with(self, other) -> bool:
        """True when some concrete shape satisfies both."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def is_subtype_of(self, invariant) -> bool:
        """True when every dim of `invariant` is None or equal to ours.

        This is the shape-invariant rule: a loop variable's shape after an
        iteration must be at least as specific as its invariant.
        """
        invariant = as_shape(invariant)
        if invariant._dims is None:
            return True
        if self._dims is None or len(self._dims) != len(invariant._dims):
            return False
        return all(b is None or a == b for a, b in zip(self._dims, invariant._dims))

    def most_specific_compatible_shape(self, other) -> TensorShape:
        """The most specific shape that both shapes are instances of."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def merge_with(self, other) -> TensorShape:
        """The shape with the known dims of both; ValueError if incompatible."""
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    # -- Python protocol -------------------------------------------------
    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other):
        if type(other) is TensorShape:  # the common case, first: shapes are compared on hot paths
            return self._dims == other._dims
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("None" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


def _dim(d):
    if d is None:
        return None
    if hasattr(d, "__index__"):
        d = d.__index__()
        if d < 0:
            raise ValueError(f"a dimension must be >= 0 or None, got {d}")
        return d
    raise TypeError(f"a dimension must be an int or None, got {d!r}")


def as_shape(value) -> TensorShape:
    """`value` as a TensorShape (a TensorShape, list, tuple, int or None)."""
    return value if isinstance(value, TensorShape) else TensorShape(value)
