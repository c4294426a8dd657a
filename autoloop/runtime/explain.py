"""What `autoloop run --explain` reports: for each loop and branch that ran,
whether it was staged as graph control flow or ran as Python, and why.

The runtime calls `record` for every statement it decides about; the
decisions are kept on the current trace (`trace.py`) and end up on the
`ConcreteFunction` that trace made (``concrete.decisions``). Outside a
trace nothing is kept.
"""

from __future__ import annotations

from autoloop.ir import context
from autoloop.runtime import trace as traces
from autoloop.runtime.values import is_graph_tensor
from autoloop.tensor import Tensor


def record(location, statement: str, staged: bool, reason: str) -> None:
    if context.current_graph() is not None:
        traces.current().record(location, statement, staged, reason)


def describe_value(value) -> str:
    if is_graph_tensor(value):
        return "a Tensor"
    if isinstance(value, Tensor):
        return "an eager Tensor (outside a trace)"
    return f"a Python {type(value).__name__}"
