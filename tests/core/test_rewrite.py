"""The rewrite API: each edit leaves a graph that verifies and runs the same on both executors."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop import dtypes
from autoloop.execute.interpreter import interpret
from autoloop.ir import context, control_flow, rewrite
from autoloop.ops.dispatch import apply, constant_node, on_values, verify
from autoloop.tensor import Tensor
from tests.execute.equivalence import assert_equivalent


def traced(fn, *args):
    return al.function(fn, autograph=False).get_concrete_function(*args).graph


def run(graph, *arrays):
    """`graph`'s outputs on both executors (which must agree), after the verifier accepts it."""
    verify(graph)
    (outcome,) = assert_equivalent(graph, list(arrays))
    if outcome.error is not None:
        raise outcome.error
    return [np.asarray(r).tolist() if not hasattr(r, "to_list") else r for r in outcome.results]


def sum_square(n):
    return al.while_loop(lambda i, total: i < n, lambda i, total: (i + 1, total + i * i),
                         (al.constant(0), al.constant(0)))[1]


def the(graph, op):
    (node,) = [n for n in graph.nodes if n.op == op]
    return node


# -- clone --------------------------------------------------------------------------------
def nested(n, x):
    def outer_body(i, total):
        inner = al.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + x), (al.constant(0), total))[1]
        return i + 1, al.cond(i % 2 == 0, lambda: inner, lambda: inner - x)
    return al.while_loop(lambda i, total: i < n, outer_body, (al.constant(0), al.constant(0)))[1]


def test_clone_copies_every_graph_and_runs_the_same():
    graph = traced(nested, al.constant(5), al.constant(3))
    value_map: dict = {}
    copy = rewrite.clone(graph, value_map)
    assert run(copy, np.int32(5), np.int32(3)) == run(graph, np.int32(5), np.int32(3))
    originals = {id(n) for n in graph.walk()} | {id(g) for n in graph.walk() for g in n.subgraphs()}
    assert not originals & ({id(n) for n in copy.walk()} | {id(g) for n in copy.walk() for g in n.subgraphs()})
    assert all(value_map[v] in copy.inputs for v in graph.inputs)
    loop = the(copy, "While")
    assert all(outer.graph is copy for outer in loop.attrs["body"].captures)


def test_editing_a_clone_leaves_the_original_alone():
    graph = traced(sum_square, al.constant(4))
    copy = rewrite.clone(graph)
    the(copy, "While").attrs["body"].outputs.reverse()
    assert run(graph, np.int32(4)) == [14]


# -- replace_all_uses ------------------------------------------------------------------------
def test_replace_all_uses_reroutes_readers_but_not_what_the_new_value_is_made_of():
    graph = traced(sum_square, al.constant(4))
    (n,) = graph.inputs
    with context.building(graph):
        doubled = on_values(lambda v: v * 2)(n)
    rewrite.replace_all_uses(n, doubled)
    assert run(graph, np.int32(4)) == [sum(k * k for k in range(8))]
    loop = the(graph, "While")
    assert list(loop.attrs["cond"].captures) == [doubled]  # the captured value follows


def test_replace_all_uses_merges_two_captures_of_one_value():
    def reads_both(x, y):
        return al.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + x * y), (al.constant(0), al.constant(0)))[1]

    graph = traced(reads_both, al.constant(2), al.constant(5))
    x, y = graph.inputs
    body = the(graph, "While").attrs["body"]
    assert len(body.captures) == 2
    rewrite.replace_all_uses(x, y)
    assert len(body.captures) == 1 and the(graph, "While").attrs["body_nconsts"] == 1
    assert run(graph, np.int32(2), np.int32(5)) == [75]


def test_replace_all_uses_rejects_another_graphs_value():
    graph, other = traced(sum_square, al.constant(4)), traced(sum_square, al.constant(4))
    with pytest.raises(ValueError, match="belongs to graph"):
        rewrite.replace_all_uses(graph.inputs[0], other.inputs[0])


# -- add_loop_var --------------------------------------------------------------------------
def test_add_loop_var_counts_iterations():
    graph = traced(sum_square, al.constant(4))
    loop = the(graph, "While")
    zero = constant_node(graph, np.int32(0))
    count = rewrite.add_loop_var(loop, zero, on_values(lambda c: c + 1), name="count")
    graph.outputs.append(count)
    assert loop.attrs["num_loop_vars"] == 3 and len(loop.outputs) == 3
    assert run(graph, np.int32(4)) == [14, 4]
    assert run(graph, np.int32(0)) == [0, 0]


def test_add_loop_var_can_stack_a_value_of_every_iteration():
    """What reverse mode needs: each iteration's `total` pushed on a stack, indexed by a counter."""
    graph = traced(sum_square, al.constant(4))
    loop = the(graph, "While")
    body = loop.attrs["body"]
    i, total = body.inputs[:2]
    with context.building(graph):
        stack = al.TensorArray(al.int32, size=0, dynamic_size=True).flow._value
    pushed = rewrite.add_loop_var(loop, stack, on_values(
        lambda s: apply("TensorListWrite", [s, Tensor(value=i), Tensor(value=total)])))
    with context.building(graph):
        stacked = apply("TensorListStack", [Tensor(value=pushed)],
                        {"element_dtype": dtypes.int32, "element_shape": al.TensorShape([])})
    graph.outputs.append(stacked._value)
    assert run(graph, np.int32(4)) == [14, [0, 0, 1, 5]]


def test_add_loop_var_captures_through_enclosing_loops():
    graph = traced(nested, al.constant(3), al.constant(2))
    x = graph.inputs[1]
    outer = the(graph, "While")
    inner = the(outer.attrs["body"], "While")
    before = len(outer.inputs)
    zero = constant_node(inner.graph, np.int32(0))
    rewrite.add_loop_var(inner, zero, on_values(lambda s: s + Tensor(value=x)))
    verify(graph)
    assert x in outer.attrs["body"].captures  # x was captured already: no new input
    assert len(outer.inputs) == before
    assert run(graph, np.int32(3), np.int32(2)) == run(traced(nested, al.constant(3), al.constant(2)),
                                                       np.int32(3), np.int32(2))


def test_add_loop_var_with_a_new_outer_value_adds_inputs_on_the_way():
    def loop_in_loop(n):
        def body(i):
            return al.while_loop(lambda j: j < i, lambda j: j + 1, [al.constant(0)])[0] + 1
        return al.while_loop(lambda i: i < n, body, [al.constant(0)])[0]

    graph = traced(loop_in_loop, al.constant(3))
    (n,) = graph.inputs
    outer = the(graph, "While")
    inner = the(outer.attrs["body"], "While")
    zero = constant_node(inner.graph, np.int32(0))
    rewrite.add_loop_var(inner, zero, on_values(lambda s: s + Tensor(value=n)))
    outer_body = outer.attrs["body"]
    assert n in outer_body.captures and outer.attrs["body_nconsts"] == len(outer_body.captures)
    verify(graph)
    assert run(graph, np.int32(3)) == [3]


def test_a_failed_add_loop_var_leaves_the_graph_unchanged():
    graph = traced(sum_square, al.constant(4))
    loop = the(graph, "While")
    zero = constant_node(graph, np.int32(0))
    with pytest.raises(TypeError, match="the update gives float32, the loop variable is int32"):
        rewrite.add_loop_var(loop, zero, on_values(lambda c: al.cast(c, al.float32)))
    with pytest.raises(ValueError, match="does not fit the invariant"):
        rewrite.add_loop_var(loop, zero, on_values(lambda c: al.stack([c, c])))
    assert loop.attrs["num_loop_vars"] == 2 and len(loop.attrs["body"].inputs) == 2
    rewrite.remove_dead_nodes(graph)
    assert run(graph, np.int32(4)) == [14]


# -- Cond outputs, pruning ---------------------------------------------------------------------
def test_add_cond_output_exposes_values_of_each_branch():
    def choose(p, x):
        return al.cond(p, lambda: x * 2, lambda: x - 1)

    graph = traced(choose, al.constant(True), al.constant(7))
    node = the(graph, "Cond")
    x = graph.inputs[1]
    extra = rewrite.add_cond_output(node, lambda: node.attrs["true_graph"].outputs[0],
                                    lambda: on_values(lambda v: v * 10)(node.attrs["false_graph"].capture(x)))
    graph.outputs.append(extra)
    assert run(graph, np.bool_(True), np.int32(7)) == [14, 14]
    assert run(graph, np.bool_(False), np.int32(7)) == [6, 70]


def test_remove_dead_nodes_drops_unused_captures_and_their_inputs():
    def loop(n, x):
        def body(i):
            unused = i * x  # noqa: F841 - dead: the body never returns it
            return i + 1
        return al.while_loop(lambda i: i < n, body, [al.constant(0)])[0]

    graph = traced(loop, al.constant(3), al.constant(5))  # tracing prunes
    node = the(graph, "While")
    groups = control_flow.operands(node)
    assert groups.body_captures == () and node.attrs["body_nconsts"] == 0
    assert len(node.attrs["body"].inputs) == 1
    assert run(graph, np.int32(3), np.int32(5)) == [3]


def test_sort_nodes_restores_order_and_reports_cycles():
    graph = traced(lambda x: (x + 1) * 2, al.constant(1))
    graph.nodes.reverse()
    rewrite.sort_nodes(graph)
    assert run(graph, np.int32(1)) == [4]
    add = the(graph, "Add")
    mul = the(graph, "Mul")
    add.inputs = (mul.outputs[0], add.inputs[1])
    with pytest.raises(ValueError, match="cycle"):
        rewrite.sort_nodes(graph)


def test_the_interpreter_runs_a_rewritten_graph_without_compiling():
    graph = traced(sum_square, al.constant(3))
    rewrite.add_loop_var(the(graph, "While"), constant_node(graph, np.float64(1.0)), on_values(lambda v: v * 2))
    graph.outputs.append(the(graph, "While").outputs[-1])
    verify(graph)
    assert [np.asarray(r).tolist() for r in interpret(graph, np.int32(3))] == [5, 8.0]


def test_a_loop_that_gets_an_effect_joins_its_graphs_chain():
    def around(n):
        al.print("before")
        total = sum_square(n)
        al.print("after")
        return total

    graph = traced(around, al.constant(2))
    loop = the(graph, "While")
    assert loop.control_inputs == ()

    def printing_update(v):
        al.print("iteration")
        return v + 1

    rewrite.add_loop_var(loop, constant_node(graph, np.int32(0)), on_values(printing_update))
    verify(graph)
    prints = [n for n in graph.nodes if n.op == "PrintV2"]
    assert loop.control_inputs == (prints[0],) and loop in prints[1].control_inputs
    (outcome,) = assert_equivalent(graph, [np.int32(2)])
    assert outcome.stdout == "before\niteration\niteration\nafter\n"
