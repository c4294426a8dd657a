"""What kind of value the runtime is looking at."""

from __future__ import annotations

from autoloop.tensor import Tensor


def is_graph_tensor(value) -> bool:
    """A symbolic tensor: its value is known only when a traced graph runs."""
    return isinstance(value, Tensor) and value.is_symbolic


def is_tensor(value) -> bool:
    return isinstance(value, Tensor)
