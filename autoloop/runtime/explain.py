"""What `autoloop run --explain` reports: for each loop and branch that ran,
whether it was staged as graph control flow or ran as Python, and why.

The runtime calls `record` for every statement it decides about; nothing is
kept unless a `recording()` block is active.
"""

from __future__ import annotations

import contextlib
import dataclasses


@dataclasses.dataclass(frozen=True)
class Decision:
    location: tuple  # the user's (file, line)
    statement: str  # "while loop", "for loop", "if statement"
    staged: bool
    reason: str


_active: list | None = None


@contextlib.contextmanager
def recording():
    """Collect the decisions made inside the block into the yielded list."""
    global _active
    saved, _active = _active, []
    try:
        yield _active
    finally:
        _active = saved


def active() -> bool:
    return _active is not None


def record(location, statement: str, staged: bool, reason: str) -> None:
    if _active is not None and location is not None:
        _active.append(Decision(tuple(location), statement, staged, reason))


def describe_value(value) -> str:
    from autoloop.runtime.values import is_graph_tensor
    if is_graph_tensor(value):
        return "a Tensor"
    from autoloop.tensor import Tensor
    if isinstance(value, Tensor):
        return "an eager Tensor (outside a trace)"
    return f"a Python {type(value).__name__}"


def describe_iterable(iterable) -> str:
    from autoloop.runtime import staged_loops
    if isinstance(iterable, staged_loops.TensorRange):
        return "a range with Tensor bounds"
    if staged_loops.is_staged_iterable(iterable):
        return f"{type(iterable).__name__ if not hasattr(iterable, 'is_symbolic') else 'a Tensor'}"
    return f"a Python {type(iterable).__name__}"
