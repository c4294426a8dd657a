"""The reference interpreter: a graph run node by node, the oracle for every executor.

    outputs = interpret(graph, *input_arrays)     # a tuple, like CompiledGraph

Each node that an output or an effect needs runs in graph order (a
topological order of data and ordering edges): an ordinary op through its
numpy kernel in the op registry, with no inline templates and no constants
folded while tracing; a control-flow op through its ``interpret`` rule in
`autoloop.ir.control_flow`, which runs its sub-graphs with the
`run_graph` it is given. No code is generated, so what this computes is
what the registry says, and the compiled executor, the dataflow executor and
the JAX backend must give identical results and raise the same errors
(`autoloop.execute.errors`).
"""

from __future__ import annotations

import numpy as np

from autoloop.execute.errors import raise_for_node
from autoloop.ir import control_flow
from autoloop.ir.graph import Graph
from autoloop.ops import registry
from autoloop.ir.graph import op_attrs_of


def interpret(graph: Graph, *inputs) -> tuple:
    """Run `graph` on numpy values for its inputs; its outputs as a tuple."""
    with np.errstate(all="ignore"):
        return tuple(_Run().graph(graph, list(inputs)))


class _Run:
    """One interpretation; knows each graph's live nodes once it has looked."""

    def __init__(self):
        self._schedules: dict[int, tuple[Graph, list]] = {}

    def graph(self, graph: Graph, inputs: list) -> list:
        """`graph`'s outputs for `inputs` (the `run_graph` control-flow rules receive)."""
        env = dict(zip(graph.inputs, inputs))
        for node in self._schedule(graph):
            args = [env[v] for v in node.inputs]
            op = control_flow.lookup(node.op)
            if op is not None:
                results = op.interpreter_rule()(node, args, self.graph)
            else:
                results = run_kernel(node, args)
            env.update(zip(node.outputs, results))
        return [env[v] for v in graph.outputs]

    def _schedule(self, graph: Graph) -> list:
        entry = self._schedules.get(id(graph))
        if entry is None:
            nodes = [n for n in graph.live_nodes() if n.op != "Placeholder"]
            entry = self._schedules[id(graph)] = (graph, nodes)  # the graph kept alive: ids stay unique
        return entry[1]


def run_kernel(node, args) -> list:
    """`node`'s numpy kernel from the registry applied to `args`: its outputs as a list.

    A failure is raised as the node's (`autoloop.execute.errors`).
    """
    return kernel_of(node)(args)


def kernel_of(node):
    """``run(args) -> outputs as a list``: `node`'s numpy kernel with its attrs, looked up once.

    A control-flow node runs by its op's interpreter rule. Shared by every
    executor that runs ops one node at a time; a failure is raised as the
    node's (`autoloop.execute.errors`).
    """
    if node.op == "Const":
        value = [node.attrs["value"]]
        return lambda args: value
    declared = control_flow.lookup(node.op)
    if declared is not None:  # a control-flow op run as one node: its interpreter rule
        rule = declared.interpreter_rule()
        return lambda args: rule(node, list(args), _Run().graph)
    kernel = registry.get(node.op).kernel_for("numpy").fn
    attrs = op_attrs_of(node.attrs)
    outputs = len(node.outputs)
    tuple_result = node.tuple_result

    def run(args):
        try:
            result = kernel(*args, **attrs)
        except Exception as error:  # noqa: BLE001 - every failure is reported as the node's
            raise_for_node(node, error)
        if not outputs:
            return []
        return list(result) if tuple_result else [result]

    return run


# -- control flow: the "interpret" rules of the ops in autoloop.ir.control_flow -------------
def run_while(node, inputs: list, run_graph) -> list:
    """Reference semantics of ``While``: test, stop or run the body, at most `maximum_iterations` times."""
    cond, body = node.attrs["cond"], node.attrs["body"]
    groups = control_flow.split(node, inputs)
    loop_vars = list(groups.loop_vars)
    limit = groups.maximum_iterations[0] if groups.maximum_iterations else None
    iterations = 0
    while limit is None or iterations < limit:
        (test,) = run_graph(cond, loop_vars + list(groups.cond_captures))
        if not test:
            break
        loop_vars = run_graph(body, loop_vars + list(groups.body_captures))
        iterations += 1
    return loop_vars


def run_cond(node, inputs: list, run_graph) -> list:
    """Reference semantics of ``Cond``: run the branch the predicate picks."""
    groups = control_flow.split(node, inputs)
    if groups.pred[0]:
        return run_graph(node.attrs["true_graph"], list(groups.true_captures))
    return run_graph(node.attrs["false_graph"], list(groups.false_captures))
