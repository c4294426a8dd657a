"""``autoloop.types.experimental``: `TraceType`, `SupportsTracingProtocol` and `TensorLike`, TensorFlow's names.

Code written for TensorFlow subclasses `TraceType` and gives its classes a
``__tf_tracing_type__`` method to say when two arguments may share a trace.
autoloop accepts such code but keys an argument by its own rule (API.md:
an object by identity and a snapshot of its attributes), never by the trace
type: an object gets a trace of its own, never another object's, so the
results are those of the plain Python code (with more traces, not fewer).
"""

from __future__ import annotations

import abc
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from autoloop.tensor import Tensor
from autoloop.variables import Variable


class TraceType(abc.ABC):
    """TensorFlow's base class of an argument's trace type; subclasses define these five methods."""

    @abc.abstractmethod
    def is_subtype_of(self, other: TraceType) -> bool:
        """Whether every value of this type is a value of `other`."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others) -> TraceType | None:
        """The narrowest type that this one and each of `others` are subtypes of, or None."""

    @abc.abstractmethod
    def placeholder_value(self, placeholder_context=None) -> Any:
        """The value a trace for this type is made with."""

    @abc.abstractmethod
    def __eq__(self, other) -> bool: ...

    @abc.abstractmethod
    def __hash__(self) -> int: ...


@runtime_checkable
class SupportsTracingProtocol(Protocol):
    """An object that names its own trace type (``__tf_tracing_type__(context)``)."""

    def __tf_tracing_type__(self, context) -> TraceType: ...


# What converts to a tensor (TensorFlow's ``tf.types.experimental.TensorLike``; no strings or complex here).
TensorLike = Union[Tensor, Variable, int, float, bool, tuple, list, np.ndarray, np.generic]
