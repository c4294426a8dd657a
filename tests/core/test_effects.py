"""Effects as data: one has_effects predicate, ordering edges that fix program order."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

import autoloop as al
from autoloop.execute import CompiledGraph
from autoloop.execute.interpreter import interpret
from autoloop.ir import control_flow, rewrite
from autoloop.ir.effects import has_effects
from autoloop.ir.verify import GraphError
from autoloop.ops.dispatch import verify


def traced(fn, *args):
    return al.function(fn, autograph=False).get_concrete_function(*args).graph


def prints_between_computations(x):
    al.print("a", x)
    y = x * 2
    al.print("b", y)
    z = al.while_loop(lambda i: i < 2, lambda i: (al.print("loop", i), i + 1)[1], [x])[0]
    al.print("c")
    return y + z


def effect_ops(graph):
    return [n.op for n in graph.nodes if has_effects(n)]


def test_has_effects_of_ops_and_of_control_flow_around_them():
    graph = traced(prints_between_computations, al.constant(0))
    by_op = {n.op: has_effects(n) for n in graph.nodes}
    assert by_op["PrintV2"] and by_op["While"]
    assert not by_op["Mul"] and not by_op["Add"]
    pure_loop = traced(lambda n: al.while_loop(lambda i: i < n, lambda i: i + 1, [0])[0], al.constant(3))
    assert not any(has_effects(n) for n in pure_loop.nodes)


def test_tracing_chains_effects_in_program_order():
    graph = traced(prints_between_computations, al.constant(0))
    effects = [n for n in graph.nodes if has_effects(n)]
    assert [n.op for n in effects] == ["PrintV2", "PrintV2", "While", "PrintV2"]
    assert effects[0].control_inputs == ()
    for before, after in zip(effects, effects[1:]):
        assert after.control_inputs == (before,)
    assert all(n.control_inputs == () for n in graph.nodes if not has_effects(n))


def _latest_first_order(graph):
    """A topological order unlike the node list: of the nodes ready to run, the last-listed first."""
    position = {id(n): k for k, n in enumerate(graph.nodes)}
    waiting = {id(n): {id(v.node) for v in n.inputs} | {id(c) for c in n.control_inputs} for n in graph.nodes}
    ready = [(-position[id(n)], k, n) for k, n in enumerate(graph.nodes) if not waiting[id(n)]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, _, node = heapq.heappop(ready)
        order.append(node)
        for k, other in enumerate(graph.nodes):
            if id(node) in waiting[id(other)]:
                waiting[id(other)].discard(id(node))
                if not waiting[id(other)]:
                    heapq.heappush(ready, (-position[id(other)], k, other))
    return order


EXPECTED = "a 1\nb 2\nloop 1\nc\n"


def test_any_order_that_respects_the_edges_prints_in_program_order(capsys):
    graph = traced(prints_between_computations, al.constant(0))
    graph.nodes = _latest_first_order(graph)
    assert [n.op for n in graph.nodes[:3]] != ["Placeholder", "PrintV2", "Const"]  # really reordered
    verify(graph)
    for run in (lambda: interpret(graph, np.int32(1)), lambda: CompiledGraph(graph)(np.int32(1))):
        assert np.asarray(run()[0]).tolist() == 4
        assert capsys.readouterr().out == EXPECTED


def test_without_the_edges_that_order_would_print_out_of_order(capsys):
    graph = traced(prints_between_computations, al.constant(0))
    for node in graph.nodes:
        node.control_inputs = ()
    graph.nodes = _latest_first_order(graph)
    interpret(graph, np.int32(1))
    assert capsys.readouterr().out != EXPECTED
    with pytest.raises(GraphError, match="no ordering edge from the previous effectful node"):
        verify(graph)


def test_effects_are_never_pruned_and_dead_values_are():
    def f(x):
        unused = x * 3  # noqa: F841
        al.print("only effect")
        return x

    graph = traced(f, al.constant(1))
    assert [n.op for n in graph.nodes] == ["Placeholder", "PrintV2"]


def test_a_loop_whose_body_prints_stays_although_no_output_needs_it(capsys):
    def f(n):
        al.while_loop(lambda i: i < n, lambda i: (al.print(i), i + 1)[1], [0])
        return n

    f = al.function(f, autograph=False)
    assert f(al.constant(2)).numpy() == 2
    assert capsys.readouterr().out == "0\n1\n"
    (loop,) = [n for n in f.get_concrete_function(al.constant(2)).graph.nodes if n.op == "While"]
    assert control_flow.operands(loop).cond_captures  # n, read by the test


def test_rewrites_keep_the_chain():
    graph = traced(prints_between_computations, al.constant(0))
    copy = rewrite.clone(graph)
    verify(copy)
    assert effect_ops(copy) == effect_ops(graph)
    copy.nodes.reverse()
    rewrite.sort_nodes(copy)
    verify(copy)


def test_the_text_form_shows_ordering_edges():
    def two_prints(x):
        al.print("a", x)
        al.print("b")
        return x

    text = str(traced(two_prints, al.constant(1)))
    assert "  PrintV2 = PrintV2(x:0)" in text and "  PrintV2_1 = PrintV2(^PrintV2)" in text
