"""``Scan`` in the graph IR: one node, its verifier rules, rewrites, effects, text form, nesting.

Every graph here also runs on the reference interpreter and the compiled
executor, which must agree bit for bit (`tests.execute.equivalence`).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autoloop as al
from autoloop.execute import CompiledGraph
from autoloop.ir import control_flow, rewrite
from autoloop.ir.effects import has_effects
from autoloop.ir.verify import GraphError
from autoloop.ops.dispatch import verify
from tests.execute.equivalence import assert_equivalent


def traced_graph(fn, *args):
    return al.function(fn, autograph=False).get_concrete_function(*args).graph


def scan_node(graph):
    return next(node for node in graph.nodes if node.op == "Scan")


def batched(limits):
    def body(x, state):
        h, step, limit = state
        h = al.tanh(h @ al.ones([2, 2]) * 0.5)
        return h, (h, step + 1, limit)

    initial = (al.ones([3, 2]), al.zeros([3], al.int32), limits)
    return al.scan(body=body, cond=lambda x, s: s[1] < s[2], initial=initial, cond_dims=[3],
                   ys=al.TensorSpec([3, 2]))


def over_xs(xs, n):
    return al.scan(body=lambda x, s: ((x * s, s), s + x), initial=al.constant(1.0), xs=xs,
                   ys=(al.TensorSpec([], al.float32), al.TensorSpec([], al.float32)), cond=lambda x, s: s < n)


LIMITS = al.constant([2, 0, 5])


def test_one_node_with_its_layout():
    graph = traced_graph(over_xs, al.constant([1., 2., 3.]), al.constant(4.))
    xs, n = graph.inputs
    (node,) = [v for v in graph.nodes if control_flow.lookup(v.op) is not None]
    groups = control_flow.operands(node)
    assert list(groups) == ["initial", "xs", "cond_captures", "body_captures", "spatial_dim", "max_seq_len"]
    assert groups.xs == (xs,) and groups.cond_captures == (n,) and groups.body_captures == ()
    assert [v.shape for v in node.outputs] == [al.TensorShape([None])] * 2 + [al.TensorShape([])] * 2
    assert_equivalent(graph, [np.float32([1, 2, 3]), np.float32(4)], [np.float32([5, 6]), np.float32(0)])


def test_the_entry_axis_is_unknown_inside_and_known_outside():
    graph = traced_graph(batched, LIMITS)
    node = scan_node(graph)
    assert [p.shape for p in node.attrs["body"].inputs[:3]] == [al.TensorShape([None, 2]), al.TensorShape([None]),
                                                                   al.TensorShape([None])]
    assert [v.shape for v in node.outputs] == [al.TensorShape([None, 3, 2]), al.TensorShape([3, 2]),
                                               al.TensorShape([3]), al.TensorShape([3]), al.TensorShape([3])]
    assert node.attrs["cond_dims"] == al.TensorShape([3]) and node.attrs["compaction"] == "compact"
    assert_equivalent(graph, [np.int32([2, 0, 5])], [np.int32([0, 0, 0])], [np.int32([7, 1, 3])])


def test_the_text_form_shows_the_node_and_its_sub_graphs():
    text = str(traced_graph(batched, LIMITS))
    assert "= Scan(" in text and "cond_dims=TensorShape([3])" in text and "compaction='compact'" in text
    assert "cond:\n" in text and "graph scan_cond(state:0: float32(None, 2)" in text and "body:\n" in text


def test_the_command_line_prints_a_scan(tmp_path):
    source = tmp_path / "lengths.py"
    source.write_text(textwrap.dedent("""
        import autoloop as tf

        def running(xs):
            return tf.scan(body=lambda x, s: (s + x, s + x), initial=0.0, xs=xs, ys=tf.TensorSpec([]))[0]
    """))
    result = subprocess.run([sys.executable, "-m", "autoloop", "graph", f"{source}::running", "--args", "[[1.0, 2.0]]"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "= Scan(" in result.stdout and "graph scan_body(" in result.stdout
    run = subprocess.run([sys.executable, "-m", "autoloop", "run", f"{source}::running", "[1.0, 2.0, 4.0]"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "[1. 3. 7.]", run.stderr


# -- the verifier -------------------------------------------------------------------------------
def test_traced_scans_verify():
    for graph in (traced_graph(batched, LIMITS), traced_graph(over_xs, al.constant([1.]), al.constant(2.))):
        verify(graph)


@pytest.mark.parametrize("break_it, words", [
    (lambda node: node.attrs["body"].outputs.pop(), "body returns 3 values, expected 1 frames and 3 state values"),
    (lambda node: node.attrs.update(num_ys=2), "expected 2 frames"),
    (lambda node: node.attrs["cond"].outputs.clear(), "cond returns 0 values, expected 1"),
    (lambda node: node.attrs.update(cond=node.attrs["body"]), "cond returns 4 values"),
    (lambda node: node.attrs.update(compaction="sometimes"), "compaction 'sometimes' is not one of"),
    (lambda node: node.attrs.update(cond_dims=al.TensorShape([])), "expected booleans of shape ()"),
    (lambda node: node.attrs.update(ys_frames=(al.TensorShape([4, 2]),)), "the op gives (None, 4, 2)"),
    (lambda node: node.attrs["body"].outputs.__setitem__(0, node.attrs["body"].inputs[1]),
     "a frame of shape (None,) where (3, 2) is expected"),
])
def test_the_verifier_names_what_is_wrong(break_it, words):
    graph = traced_graph(batched, LIMITS)
    break_it(scan_node(graph))
    with pytest.raises(GraphError) as raised:
        verify(graph)
    assert words in str(raised.value) and "Scan" in str(raised.value)


def test_the_verifier_wants_the_entry_axis_unknown_in_the_sub_graphs():
    def passing(limits):
        body = lambda x, s: (None, (s[0] + 1, s[1]))  # noqa: E731
        return al.scan(body=body, cond=lambda x, s: s[0] < limits, cond_dims=[3],
                       initial=(al.zeros([3], al.int32), al.ones([3])))

    graph = traced_graph(passing, LIMITS)
    node = scan_node(graph)
    for key in ("cond", "body"):
        node.attrs[key].inputs[1].shape = al.TensorShape([3])
    with pytest.raises(GraphError, match="must hold the entries on axis 0, left unknown"):
        verify(graph)


def test_the_verifier_refuses_compaction_without_cond_dims():
    graph = traced_graph(over_xs, al.constant([1.]), al.constant(2.))
    scan_node(graph).attrs["compaction"] = "compact"
    with pytest.raises(GraphError, match="compaction needs cond_dims"):
        verify(graph)


def test_the_verifier_refuses_compaction_of_a_body_that_mixes_entries():
    def mixing(limits):
        body = lambda x, s: (None, (s[0] - al.reduce_mean(s[0], axis=0), s[1] + 1, s[2]))  # noqa: E731
        return al.scan(body=body, cond=lambda x, s: s[1] < s[2], cond_dims=[3],
                       initial=(al.ones([3, 2]), al.zeros([3], al.int32), limits))

    graph = traced_graph(mixing, LIMITS)
    scan_node(graph).attrs["compaction"] = "compact"
    with pytest.raises(GraphError, match="compaction 'compact', but Mean .* it works along axis 0"):
        verify(graph)


# -- rewrites and effects -----------------------------------------------------------------------
def test_a_cloned_scan_runs_the_same():
    graph = traced_graph(batched, LIMITS)
    copy = rewrite.clone(graph)
    verify(copy)
    expected = CompiledGraph(graph)(np.int32([2, 0, 5]))
    (found,) = assert_equivalent(copy, [np.int32([2, 0, 5])])
    for a, b in zip(expected, found.results):
        np.testing.assert_array_equal(a, b)


def test_pruning_drops_captures_the_body_no_longer_reads():
    def fn(x, unused):
        def body(_, s):
            dead = s * unused  # noqa: F841 - pruned, and with it the capture of `unused`
            return s * x, s + 1.0
        return al.scan(body=body, initial=al.constant(1.0), spatial_dim=2, ys=al.TensorSpec([]))[0]

    graph = traced_graph(fn, al.constant(2.0), al.constant(3.0))
    node = scan_node(graph)
    assert len(control_flow.operands(node).body_captures) == 1  # only x
    verify(graph)
    assert_equivalent(graph, [np.float32(2), np.float32(3)])


def test_prints_make_a_scan_effectful_and_keep_program_order():
    def fn(n):
        al.print("before")

        def body(x, s):
            al.print("frame", s)
            return None, s + 1

        final = al.scan(body=body, initial=al.constant(0), spatial_dim=n)[1]
        al.print("after")
        return final

    graph = traced_graph(fn, al.constant(2))
    node = scan_node(graph)
    assert has_effects(node) and len(node.control_inputs) == 1
    (outcome,) = assert_equivalent(graph, [np.int32(2)])
    assert outcome.stdout == "before\nframe 0\nframe 1\nafter\n"


def test_an_error_in_the_body_names_the_users_line(mode):
    def fn(xs):
        def body(x, s):
            al.debugging.assert_less(x, 3, message="frame too large")
            return None, s + x
        return al.scan(body=body, initial=al.constant(0), xs=xs)[1]

    with pytest.raises(Exception) as raised:
        mode(fn, al.constant([1, 2, 5]))
    assert "frame too large" in str(raised.value)
    assert any("test_scan_graph.py" in line for line in _traceback_lines(raised))


def test_an_error_in_a_batched_body_names_the_users_line(mode):
    def fn(limits):
        def body(x, state):
            step, limit = state
            al.debugging.assert_less(step, 2, message="entry ran too long")
            return None, (step + 1, limit)
        return al.scan(body=body, cond=lambda x, s: s[0] < s[1], cond_dims=[3],
                       initial=(al.zeros([3], al.int32), limits))[2]

    assert mode(fn, al.constant([1, 2, 0])).numpy().tolist() == [1, 2, 0]
    with pytest.raises(Exception) as raised:
        mode(fn, al.constant([1, 3, 0]))
    assert "entry ran too long" in str(raised.value)
    assert any("test_scan_graph.py" in line for line in _traceback_lines(raised))


def _traceback_lines(raised):
    import traceback
    return traceback.format_tb(raised.tb)


# -- nesting -------------------------------------------------------------------------------------------
def test_a_scan_in_a_while_loop_and_a_while_loop_in_a_scan(mode):
    def fn(xs):
        def outer_body(i, total):
            inner = al.scan(body=lambda x, s: (None, s + x * al.cast(i, al.float32)), initial=al.constant(0.),
                            xs=xs)[1]
            return i + 1, total + inner

        looped = al.while_loop(lambda i, t: i < 3, outer_body, (al.constant(0), al.constant(0.)))[1]

        def scan_body(x, s):
            count = al.while_loop(lambda j: j * j < x, lambda j: j + 1.0, [al.constant(0.)])[0]
            return count, s + count

        counts, _, _ = al.scan(body=scan_body, initial=al.constant(0.), xs=xs, ys=al.TensorSpec([]))
        return looped, counts

    looped, counts = mode(fn, al.constant([1., 4., 10.]))
    assert looped.numpy() == 15.0 * 3 and counts.numpy().tolist() == [1., 2., 4.]


def test_a_scan_in_a_scan_and_a_cond_in_a_batched_body(mode):
    def fn(limits):
        def inner(x, s):
            return al.scan(body=lambda x2, t: (None, t * x), initial=s, spatial_dim=2)[1]

        def body(x, state):
            h, step, limit = state
            h = al.cond(al.reduce_sum(h) > 40.0, lambda: h - 1.0, lambda: h * 2.0)
            return h, (h, step + 1, limit)

        rows = al.scan(body=lambda x, s: (inner(x, s), s + 1.0), initial=al.constant(1.0),
                       xs=al.constant([1., 2., 3.]), ys=al.TensorSpec([]))[0]
        arguments = dict(body=body, cond=lambda x, s: s[1] < s[2], cond_dims=[3], ys=al.TensorSpec([3, 2]),
                         initial=(al.ones([3, 2]), al.zeros([3], al.int32), limits))
        return rows, al.scan(**arguments)

    rows, found = mode(fn, LIMITS)
    assert rows.numpy().tolist() == [1., 8., 27.]
    # Entry 2 doubles 1 -> 16 in four frames; then all rows sum to 4+4 + 1+1 + 16+16 > 40: 16 - 1.
    assert found[1][0].numpy()[2].tolist() == [15., 15.] and found[2].numpy().tolist() == [2, 0, 5]
