"""What kind of value the runtime is looking at."""

from __future__ import annotations

import numbers

import numpy as np

from autoloop.tensor import Tensor


def is_graph_tensor(value) -> bool:
    """A symbolic tensor: its value is known only when a traced graph runs."""
    return isinstance(value, Tensor) and value.is_symbolic


def is_tensor(value) -> bool:
    return isinstance(value, Tensor)


def is_number(value) -> bool:
    """A Python or numpy number (or numpy array): a value graph control flow converts to a tensor."""
    return isinstance(value, (numbers.Number, np.number, np.bool_, np.ndarray)) and not isinstance(value, Tensor)


def is_python_scalar(value) -> bool:
    """A Python ``bool``/``int``/``float``: it has no dtype until it must become a tensor."""
    return isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)
