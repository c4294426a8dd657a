"""The dataflow form and its executor (what ``compat.v1.Session`` runs).

- `lower(graph)`: functional ``While``/``Cond`` -> Enter/Merge/Switch/NextIteration/Exit (form.py, lower.py);
- `verify(lowered)`: the form's own checks (verify.py);
- `Plan(lowered, fetches, fed, targets)`: what a run needs, each loop compiled or as frames (plan.py);
- `run(lowered, fetches, feeds, targets)`, `call(lowered, *inputs)` and `execute(plan, feed_values)`:
  the executor (executor.py), its chains summed block by block (fused.py) and its pool's threads,
  the process's, lent to one run at a time (workers.py).
"""

from autoloop.execute.dataflow.executor import DEAD, call, execute, run
from autoloop.execute.dataflow.form import DataflowGraph, Frame
from autoloop.execute.dataflow.lower import lower
from autoloop.execute.dataflow.plan import FramePlan, Plan
from autoloop.execute.dataflow.verify import DataflowGraphError, verify

__all__ = ["DEAD", "DataflowGraph", "DataflowGraphError", "Frame", "FramePlan", "Plan", "call", "execute", "lower",
           "run", "verify"]
