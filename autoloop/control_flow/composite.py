"""Composite values: objects made of several tensors (SparseTensor, ...).

Control flow carries a composite as its component tensors. A composite
class says how it splits into components, how to rebuild it from them, and
which component shapes a user's shape invariant stands for:

- `components()` -> list of Tensors;
- `from_components(components)` -> a new value like this one;
- `component_invariants(invariant)` -> one TensorShape per component, for the
  invariant the user gave (None: the default);
- `type_key()` -> what must not change across a loop iteration (class and
  static properties), compared with ``==``.
"""

from __future__ import annotations

import numpy as np

from autoloop.ops.dispatch import convert
from autoloop.tensor import Tensor


class CompositeTensor:
    """Base class; see the module docstring."""

    def components(self) -> list:
        raise NotImplementedError

    def from_components(self, components):
        raise NotImplementedError

    def component_invariants(self, invariant) -> list:
        raise NotImplementedError

    def type_key(self):
        return (type(self).__name__,)


def as_loop_value(value, label: str):
    """`value` as a Tensor or composite; TypeError for what cannot be one."""
    if isinstance(value, Tensor | CompositeTensor):
        return value
    if value is None:
        raise TypeError(f"{label} is None; a loop variable or branch output must be a tensor, "
                        f"TensorArray, SparseTensor or IndexedSlices (or a Python number or "
                        f"numpy array, which becomes a tensor)")
    if isinstance(value, bool | int | float | np.ndarray | np.generic | list) or hasattr(
            type(value), "_as_autoloop_tensor"):  # a TF1 variable: its value now
        return convert(value)
    raise TypeError(f"{label} is a {type(value).__name__} ({value!r}); expected a tensor, "
                    f"TensorArray, SparseTensor or IndexedSlices")


def components_of(value) -> list:
    return value.components() if isinstance(value, CompositeTensor) else [value]


def rebuild(template, components: list):
    """A value like `template` made of `components`."""
    if isinstance(template, CompositeTensor):
        return template.from_components(components)
    return components[0]


def type_key(value):
    if isinstance(value, CompositeTensor):
        return value.type_key()
    return ("Tensor",)


def describe_kind(value) -> str:
    return type(value).__name__ if isinstance(value, CompositeTensor) else "Tensor"
