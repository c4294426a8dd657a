"""What the JAX backend learns about a graph once, before lowering it: `ProgramFacts`.

- the order in which each (sub-)graph's needed nodes run (`schedule`);
- the run-time checks (`autoloop.backends.jax.checks.Sites`): every node
  whose JAX kernel is `checked` and needs a check;
- the buffer layout of every list (TensorArray flows, gradient stacks and
  gradient lists: `autoloop.backends.jax.layouts`), and the provisional
  capacity of each loop that needs one (`autoloop.backends.jax.growth`);
- whether the program has effects (prints, host calls) and 64-bit values;
- the variables it reads or writes (carried as extra inputs and outputs);
- that it holds nothing only a Session runs (`refuse_session_state`).

The facts belong to one `JaxProgram` and live as long as it does.
"""

from __future__ import annotations

import threading

import numpy as np

from autoloop import dtypes
from autoloop.backends.jax.checks import Sites
from autoloop.backends.jax.growth import FIRST_CAPACITY, capacity_site
from autoloop.backends.jax.interrupts import Watch
from autoloop.backends.jax.layouts import Layouts
from autoloop.backends.jax.scan import needs_capacity
from autoloop.backends.jax.marks import calls_host, unsupported
from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects
from autoloop.ops import registry
from autoloop.ops.v1_ops import cells_of, updates

_WIDE = (dtypes.int64, dtypes.float64)


class ProgramFacts:
    """The static facts of `graph` for lowering; see the module docstring."""

    def __init__(self, graph, capacities=None):
        refuse_session_state(graph)
        self.graph = graph
        # The variables it reads (extra inputs) and those it updates (extra outputs too), as their cells
        # (`autoloop.backends.jax.variables`).
        self.cells = cells_of(graph)
        self.written_cells = [cell for cell in self.cells if updates(graph, cell)]
        # The loops with a provisional capacity (`growth`; None: the program may not grow them), and their checks.
        self.capacities = capacities
        self.layouts = Layouts(graph, capacities)
        if capacities is not None:  # a scan that collects ys with no bound gets one too
            for node in graph.walk():
                if needs_capacity(node):
                    capacities.setdefault(node, FIRST_CAPACITY)
        self.sites = find_sites(graph)
        self.capacity_sites = {loop: self.sites.add(loop, *capacity_site(loop, capacity))
                               for loop, capacity in (capacities or {}).items()}
        # What the program does besides computing outputs, and the call must wait for (a variable's update
        # is an output of the program, not such an effect; a loop's effects are those of its body's nodes).
        self.has_effects = any(calls_host(node) or (has_effects(node) and node.op not in VARIABLE_OPS
                                                    and control_flow.lookup(node.op) is None)
                               for node in graph.walk())
        self.uses_64_bits = any(v.dtype in _WIDE for node in graph.walk() for v in node.outputs)
        # A program whose loops save values for a gradient keeps its products out of fused multiply-adds, so a
        # checkpointed gradient is the stored one bit for bit (`kernels.math.rounded`).
        self.rounds_products = any(node.op == "StackPush" for node in graph.walk())
        # Ctrl-C stops a loop that may run long (`interrupts`): it has a site, and the program a watch.
        growing = set(self.capacity_sites.values())
        loops = [site.node for site in self.sites.numbered if site.node.op == "While" and site not in growing]
        self.watch = Watch(loops[0].location) if loops else None
        # Whether the error state is a result: a watched loop's site alone is not (the watch knows what it
        # stopped), so the common loop keeps one bare output.
        self.reports_errors = len(loops) < len(self.sites.numbered)
        self._schedules: dict = {}
        self._lock = threading.Lock()

    def schedule(self, graph) -> list:
        """The nodes of `graph` that its outputs and effects need, in graph order, without placeholders."""
        nodes = self._schedules.get(id(graph))
        if nodes is None:
            from autoloop.backends.jax.lowering import folded_values
            nodes = [n for n in graph.live_nodes(is_leaf=lambda n: folded_values(n) is not None)
                     if n.op != "Placeholder"]
            with self._lock:
                self._schedules[id(graph)] = nodes  # sub-graphs live as long as `self.graph`: ids stay unique
        return nodes

    def carry_value(self, value, param):
        """`value` as the loop state holds it for the loop variable `param`: a JAX value of its dtype (a
        list is already its buffer)."""
        if hasattr(value, "refuse"):  # a stacked list of run-time length (buffers.Padded)
            raise value.refuse(param.node)
        if isinstance(value, np.ndarray | np.generic | bool | int | float):
            import jax.numpy as jnp
            return jnp.asarray(value, param.dtype.as_numpy_dtype)
        return value


# The ops of variables; a TF1 graph variable's value lives in a Session, which a compiled program cannot reach.
VARIABLE_OPS = {"VarHandleOp": "uses", "ReadVariableOp": "reads", "AssignVariableOp": "assigns",
                "AssignAddVariableOp": "adds to", "AssignSubVariableOp": "subtracts from"}


def refuse_session_state(graph) -> None:
    """A `BackendError` for the first TF1 variable `graph` uses: XLA programs keep no state between calls."""
    node = next((n for n in graph.walk() if n.op in VARIABLE_OPS and _graph_variable(n)), None)
    if node is None:
        return
    handle = node if node.op == "VarHandleOp" else node.inputs[0].node
    variable = handle.attrs.get("variable") or handle.attrs.get("value")
    name = getattr(variable, "name", None) or getattr(variable, "_name", "?")
    raise unsupported(node, f"the compat.v1 variable {name!r}, which the function {VARIABLE_OPS[node.op]}, holds "
                            f"state between calls, so the function", (
        "an XLA program keeps no state between calls. Pass the variable's value in as an argument and assign "
        "what the function returns to it after the call, or run on backend='numpy'"))


def _graph_variable(node) -> bool:
    """Whether `node` uses a TF1 graph variable (a ``VarHandleOp``), not an eager variable's cell."""
    return node.op == "VarHandleOp" or node.inputs[0].node.op == "VarHandleOp"


def find_sites(graph) -> Sites:
    """The run-time checks of `graph` and its sub-graphs, in graph order."""
    sites = Sites()
    for node in graph.walk():
        site = _site_rule(node.op)
        if site is None:
            continue
        found = site(node)
        if found is not None:
            witness, reproduce = found
            sites.add(node, witness, reproduce)
    return sites


def _site_rule(op_name):
    """The site rule of `op_name`'s JAX kernel (or control-flow rule), if it checks values at run time."""
    op = control_flow.lookup(op_name)
    try:
        rule = op.kernel_for("jax") if op is not None else registry.get(op_name).kernel_for("jax").fn
    except KeyError:  # an op without a JAX kernel (an error when lowered)
        return None
    return getattr(rule, "site", None)
