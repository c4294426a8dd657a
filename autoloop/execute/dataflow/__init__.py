"""The dataflow form and its executor (what ``compat.v1.Session`` runs).

- `lower(graph)`: functional ``While``/``Cond`` -> Enter/Merge/Switch/NextIteration/Exit (form.py, lower.py);
- `verify(lowered)`: the form's own checks (verify.py);
- `run(lowered, fetches, feeds, targets)` and `call(lowered, *inputs)`: the executor (executor.py).
"""

from autoloop.execute.dataflow.executor import DEAD, call, run
from autoloop.execute.dataflow.form import DataflowGraph, Frame
from autoloop.execute.dataflow.lower import lower
from autoloop.execute.dataflow.verify import DataflowGraphError, verify

__all__ = ["DEAD", "DataflowGraph", "DataflowGraphError", "Frame", "call", "lower", "run", "verify"]
