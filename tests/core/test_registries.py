"""The two registries: control-flow ops (ir/control_flow) and ordinary ops (ops/registry)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import autoloop as al
from autoloop import dtypes
from autoloop.execute import CompiledGraph, dataflow
from autoloop.execute.interpreter import interpret
from autoloop.ir import context, control_flow, rewrite
from autoloop.ir.control_flow import ControlFlowOp, OperandGroup
from autoloop.ir.graph import Graph
from autoloop.ir.verify import GraphError
from autoloop.ops import registry
from autoloop.ops.dispatch import graph_value, verify
from autoloop.ops.registry import OpDef, Spec
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor
from tests.execute.equivalence import assert_equivalent


def traced(fn, *args):
    return al.function(fn, autograph=False).get_concrete_function(*args).graph


# -- the operand layout ---------------------------------------------------------------------
def test_operands_names_the_groups_of_a_while():
    def loop(n, x):
        return al.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + x), (0, 0), maximum_iterations=n)[1]

    graph = traced(loop, al.constant(3), al.constant(2))
    n, x = graph.inputs
    (node,) = [v for v in graph.nodes if v.op == "While"]
    groups = control_flow.operands(node)
    assert list(groups) == ["loop_vars", "cond_captures", "body_captures", "maximum_iterations"]
    assert len(groups.loop_vars) == 2
    assert groups.cond_captures == (n,) and groups.body_captures == (x,) and groups.maximum_iterations == (n,)
    assert (node.attrs["num_loop_vars"], node.attrs["cond_nconsts"], node.attrs["body_nconsts"],
            node.attrs["has_maximum_iterations"]) == (2, 1, 1, True)


def test_operands_of_a_cond_and_split_of_parallel_items():
    graph = traced(lambda p, x, y: al.cond(p, lambda: x + 1, lambda: y * 2), al.constant(True),
                   al.constant(1), al.constant(2))
    p, x, y = graph.inputs
    (node,) = [v for v in graph.nodes if v.op == "Cond"]
    assert dict(control_flow.operands(node)) == {"pred": (p,), "true_captures": (x,), "false_captures": (y,)}
    assert control_flow.split(node, ["a", "b", "c"]).false_captures == ("c",)
    with pytest.raises(ValueError, match="take 3 inputs, it has 2"):
        control_flow.split(node, ["a", "b"])


def test_join_builds_inputs_and_size_attrs():
    inputs, sizes = control_flow.join("Cond", pred=["p"], true_captures=["x", "y"], false_captures=[])
    assert inputs == ["p", "x", "y"] and sizes == {"true_nconsts": 2, "false_nconsts": 0}
    with pytest.raises(ValueError, match="no operand group"):
        control_flow.join("Cond", pred=["p"], captures=[])
    with pytest.raises(ValueError, match="group pred takes 1 inputs, got 2"):
        control_flow.join("Cond", pred=["p", "q"])


def test_a_layout_that_does_not_add_up_is_a_graph_error():
    graph = traced(lambda n: al.while_loop(lambda i: i < n, lambda i: i + 1, [0])[0], al.constant(3))
    (node,) = [v for v in graph.nodes if v.op == "While"]
    node.attrs["cond_nconsts"] = 0
    with pytest.raises(GraphError, match="operand layout"):
        verify(graph)


def test_every_control_flow_op_names_rules_that_resolve():
    for op in control_flow.all_control_flow_ops().values():
        assert callable(op.interpreter_rule()) and callable(op.kernel_for("numpy"))
        assert op.subgraphs and op.capture_groups()
        assert isinstance(op.kernels["jax"], str)  # named: resolving it imports JAX
        if importlib.util.find_spec("jax") is not None:
            assert callable(op.kernel_for("jax"))
        with pytest.raises(KeyError, match="no 'dataflow-x' rule"):
            op.kernel_for("dataflow-x")


def test_node_subgraphs_are_the_registered_attrs_in_their_order():
    graph = traced(lambda n: al.while_loop(lambda i: i < n, lambda i: al.cond(i > 2, lambda: i + 2, lambda: i + 1),
                                           [al.constant(0)]), al.constant(5))
    loop = next(n for n in graph.nodes if n.op == "While")
    assert loop.subgraphs() == [loop.attrs["cond"], loop.attrs["body"]]
    branch = next(n for n in loop.attrs["body"].nodes if n.op == "Cond")
    assert branch.subgraphs() == [branch.attrs["true_graph"], branch.attrs["false_graph"]]
    assert control_flow.subgraph_attrs("Add") == () and graph.nodes[0].subgraphs() == []
    for name, op in control_flow.all_control_flow_ops().items():
        assert control_flow.subgraph_attrs(name) == op.subgraphs


# -- a new control-flow op is one registration -----------------------------------------------
def _call_infer(node):
    return [(v.dtype, v.shape) for v in node.attrs["fn"].outputs]


def _call_problems(node):
    args = control_flow.operands(node).args
    if control_flow.leading_inputs(node, "fn") != len(args):
        yield "fn takes another number of arguments"


def _interpret_call(node, inputs, run_graph):
    groups = control_flow.split(node, inputs)
    return run_graph(node.attrs["fn"], list(groups.args) + list(groups.fn_captures))


def _write_call(gen, node, indent):
    groups = control_flow.split(node, [gen.names[v] for v in node.inputs])
    results = gen.graph_body(node.attrs["fn"], indent, list(groups.args) + list(groups.fn_captures))
    for value, name in zip(node.outputs, results):
        gen.names[value] = name


@pytest.fixture
def call_op():
    """``Call``: run the sub-graph `fn` once on `args` (a toy op, registered for one test)."""
    op = control_flow.register(ControlFlowOp(
        "Call", subgraphs=("fn",),
        operands=(OperandGroup("args", "num_args"), OperandGroup("fn_captures", "fn_nconsts", captures_of="fn")),
        infer=_call_infer, verify=_call_problems, interpret=_interpret_call, kernels={"numpy": _write_call}))
    yield op
    del control_flow._REGISTRY["Call"]


def test_a_new_control_flow_op_needs_only_its_registration(call_op, capsys):
    graph = Graph("uses_call")
    x = graph.add_input(dtypes.int32, TensorShape([]))
    y = graph.add_input(dtypes.int32, TensorShape([]))
    fn = Graph("fn", graph)
    arg = fn.add_input(dtypes.int32, TensorShape([]))
    with context.building(fn):
        unused = Tensor(value=arg) - 1  # noqa: F841 - pruned
        al.print("called")
        fn.outputs = [graph_value(fn, Tensor(value=arg) * Tensor(value=y))]
    inputs, sizes = control_flow.join("Call", args=[x], fn_captures=fn.captures)
    node = graph.add_node("Call", inputs, dict(fn=fn, **sizes), [(dtypes.int32, TensorShape([]))])
    graph.outputs = list(node.outputs)
    assert node.subgraphs() == [fn]  # the registration says where the sub-graphs are
    verify(graph)
    rewrite.remove_dead_nodes(graph)
    verify(graph)
    (outcome,) = assert_equivalent(graph, [np.int32(6), np.int32(7)])
    assert outcome.results == (42,) and outcome.stdout == "called\n"
    assert interpret(graph, np.int32(2), np.int32(3)) == (6,)
    assert "# While" not in CompiledGraph(graph).source
    with pytest.raises(NotImplementedError, match=r"Call node Call cannot be lowered to the dataflow form yet \(its "
                                                  r"`lower` slot in autoloop.ir.control_flow is empty\)"):
        dataflow.lower(graph)  # its `lower` slot is empty: a clear error, not a wrong graph


# -- OpDef ---------------------------------------------------------------------------------------
def test_opdef_keeps_its_keyword_constructor_and_holds_kernels_by_backend():
    opdef = OpDef("Twice", kernel=lambda x: x * 2, infer=lambda x: Spec(x.dtype, x.shape), expr="({0} * 2)",
                  kernels={"jax": "a_backend_that_is_not_installed:twice"})
    assert opdef.kernel(3) == 6 and opdef.expr == "({0} * 2)"
    numpy_kernel = opdef.kernel_for("numpy")
    assert numpy_kernel.fn is opdef.kernel and numpy_kernel.expr == opdef.expr
    with pytest.raises(ModuleNotFoundError):  # named, imported only when asked for
        opdef.kernel_for("jax")
    with pytest.raises(KeyError, match="no 'tpu' kernel"):
        opdef.kernel_for("tpu")
    assert opdef.gradient is None and opdef.gradient_rule() is None


def test_registered_stateful_ops_have_effects_and_control_flow_ops_are_not_opdefs():
    assert registry.get("PrintV2").stateful and registry.get("AssertTrue").stateful
    assert "While" not in registry.all_ops() and "Cond" not in registry.all_ops()
    assert set(control_flow.all_control_flow_ops()) >= {"While", "Cond"}
