"""The IR verifier accepts what tracing builds and names the node of a broken graph."""

import numpy as np
import pytest

import autoloop as al
from autoloop import dtypes
from autoloop.ir.graph import Graph
from autoloop.ir.verify import GraphError
from autoloop.ops.dispatch import constant_node, verify
from autoloop.shapes import TensorShape


def traced_graph(fn, *args):
    return al.function(fn, autograph=False).get_concrete_function(*args).graph


def loop_and_branch(n):
    def body(i, total):
        return i + 1, al.cond(i % 2 == 0, lambda: total + i, lambda: total - 1)
    return al.while_loop(lambda i, total: i < n, body, (al.constant(0), al.constant(0)))[1]


def test_traced_graphs_verify():
    verify(traced_graph(loop_and_branch, al.constant(5)))


def test_a_wrong_recorded_dtype_is_reported_with_the_node():
    graph = traced_graph(lambda x: x * 2.0, al.constant([1.0, 2.0]))
    node = next(n for n in graph.nodes if n.op == "Mul")
    node.outputs[0].dtype = dtypes.int32
    with pytest.raises(GraphError, match=r"node mul \(Mul\).*recorded as int32, the op gives float32"):
        verify(graph)


def test_a_wrong_recorded_shape_is_reported():
    graph = traced_graph(lambda x: x + 1.0, al.constant([1.0, 2.0]))
    node = next(n for n in graph.nodes if n.op == "Add")
    node.outputs[0].shape = TensorShape([3])
    with pytest.raises(GraphError, match=r"recorded with shape \(3,\), the op gives \(2,\)"):
        verify(graph)


def test_a_value_used_before_it_is_defined_is_reported():
    graph = traced_graph(lambda x: x + 1.0, al.constant(1.0))
    graph.nodes.reverse()
    with pytest.raises(GraphError, match="used before it is defined"):
        verify(graph)


def test_a_graph_in_an_attr_the_op_does_not_register_is_reported():
    # every walker (cloning, pruning, lowering) visits only the registered sub-graph attrs
    graph = traced_graph(lambda x: x + 1.0, al.constant(1.0))
    node = next(n for n in graph.nodes if n.op == "Add")
    node.attrs["body"] = Graph("stray", graph)
    with pytest.raises(GraphError, match=r"node add \(Add\).*attr 'body' holds a graph, but Add registers "
                                         r"sub-graphs only in \[\]"):
        verify(graph)


def test_a_value_of_another_graph_is_reported():
    graph = traced_graph(lambda x: x + 1.0, al.constant(1.0))
    other = Graph("other")
    stranger = other.add_input(dtypes.float32, TensorShape([]))
    node = next(n for n in graph.nodes if n.op == "Add")
    node.inputs = (stranger, node.inputs[1])
    with pytest.raises(GraphError, match="belongs to graph 'other'"):
        verify(graph)


def test_a_while_body_that_changes_dtype_is_reported():
    graph = traced_graph(loop_and_branch, al.constant(5))
    loop = next(n for n in graph.nodes if n.op == "While")
    body = loop.attrs["body"]
    body.outputs[1] = constant_node(body, np.float32(1.0))
    with pytest.raises(GraphError, match=r"body returns float32\(\) where int32\(\) is expected"):
        verify(graph)


def test_a_while_output_recorded_with_another_dtype_is_reported():
    graph = traced_graph(loop_and_branch, al.constant(5))
    loop = next(n for n in graph.nodes if n.op == "While")
    loop.outputs[1].dtype = dtypes.float32
    with pytest.raises(GraphError, match=r"node while \(While\).*output 1 is recorded as float32, the op gives int32"):
        verify(graph)


def test_a_while_with_missing_inputs_is_reported():
    graph = traced_graph(loop_and_branch, al.constant(5))
    loop = next(n for n in graph.nodes if n.op == "While")
    loop.inputs = loop.inputs[:-1]
    with pytest.raises(GraphError, match="inputs, expected"):
        verify(graph)
