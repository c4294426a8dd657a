"""Session.run's RunOptions and RunMetadata: how each loop ran, and a step timeline as a Chrome trace."""

from __future__ import annotations

import json

import numpy as np
import pytest

import autoloop as al
import autoloop.compat.v1 as tf
from autoloop.execute import dataflow

ELEMENTS = 1 << 20  # large kernels: they go to the thread pool, where iterations overlap


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _tanh_loop(parallel_iterations, iterations=4):
    x = tf.placeholder(tf.float32, shape=[ELEMENTS])
    body = lambda i, acc: (i + 1, acc + al.reduce_sum(al.tanh(x * al.cast(i, al.float32))))  # noqa: E731
    total = tf.while_loop(lambda i, acc: i < iterations, body, (tf.constant(0), tf.constant(0.0)),
                          parallel_iterations=parallel_iterations)[1]
    return x, total


def _traced_run(sess, fetches, feeds):
    metadata = tf.RunMetadata()
    value = sess.run(fetches, feeds, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=metadata)
    return value, metadata, json.loads(tf.timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())


def test_the_chrome_trace_shows_two_iterations_overlapping_with_parallel_iterations_10(graph, tmp_path):
    x, total = _tanh_loop(10)
    data = np.linspace(0, 1, ELEMENTS, dtype=np.float32)
    with tf.Session() as sess:
        value, metadata, _ = _traced_run(sess, total, {x: data})
        path = tmp_path / "step.json"
        path.write_text(tf.timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())
    trace = json.loads(path.read_text())  # what chrome://tracing and Perfetto open
    assert value == pytest.approx(sum(np.tanh(data * i).sum() for i in range(4)), rel=1e-5)
    assert [str(loop) for loop in metadata.loops] == [
        f"while: frames (while/Enter_2:0 has {ELEMENTS} elements: iterations overlap on the thread pool)"]
    boxes = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"].startswith("while/body/")]
    assert {tuple(e["args"]["iteration"]) for e in boxes} == {(0,), (1,), (2,), (3,)}
    overlapping = [(a["name"], b["name"]) for a in boxes for b in boxes
                   if a["args"]["iteration"] < b["args"]["iteration"] and b["ts"] < a["ts"] + a["dur"]
                   and a["ts"] < b["ts"] + b["dur"] and a["tid"] != b["tid"]]
    assert overlapping, "no two iterations ran at the same time"
    # Each iteration's large work is one box, its chain run block by block on a worker (fused sums): these
    # are what overlap on two workers, and a later iteration's small kernels beside them.
    fused = [e for e in boxes if e["args"]["op"] == "Mul+Tanh+Sum"]
    assert sorted(e["args"]["iteration"] for e in fused) == [[0], [1], [2], [3]]
    threads = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert all(threads[e["tid"]].startswith("autoloop-dataflow") for e in fused)
    threads = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert any(name.startswith("autoloop-dataflow") for name in threads.values())
    assert {e["tid"] for e in boxes} <= set(threads)


def test_with_parallel_iterations_1_the_loop_is_one_compiled_box(graph):
    x, total = _tanh_loop(1)
    with tf.Session() as sess:
        _, metadata, trace = _traced_run(sess, total, {x: np.ones(ELEMENTS, np.float32)})
    assert [(loop.frame, loop.executor) for loop in metadata.loops] == [("while", "compiled")]
    boxes = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in boxes if e["name"].startswith("while")] == ["while"]
    (stats,) = [s for s in metadata.step_stats.dev_stats[0].node_stats if s.node_name == "while"]
    assert stats.op == "While" and stats.all_end_rel_micros > 0 and stats.timeline_label == "while = While()"


def test_without_a_trace_level_only_the_loops_are_recorded(graph):
    n = tf.placeholder(tf.int32, shape=[])
    result = tf.while_loop(lambda i, r: i < n, lambda i, r: (i + 1, r + i * i), (tf.constant(0), tf.constant(0)))[1]
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        assert sess.run(result, {n: 1000}, run_metadata=metadata) == sum(i * i for i in range(1000))
    assert metadata.step_stats.dev_stats == []
    (loop,) = metadata.loops
    assert loop.executor == "compiled" and "fewer than 32768 elements" in loop.reason


def test_a_session_plans_once_per_kind_of_run(graph, monkeypatch):
    made = []
    original = dataflow.Plan

    def counting(*args, **kwargs):
        made.append(args[1:])
        return original(*args, **kwargs)

    monkeypatch.setattr(dataflow, "Plan", counting)
    x = tf.placeholder(tf.float32, shape=[])
    y, z = x * 2, x + 1
    with tf.Session() as sess:
        assert [sess.run(y, {x: k}) for k in range(3)] == [0, 2, 4]
        assert len(made) == 1
        assert sess.run([y, z], {x: 1}) == [2, 2] and len(made) == 2
        w = y * 10  # the graph grew: it is lowered again, and plans are made afresh
        assert sess.run(w, {x: 1}) == 20 and sess.run(y, {x: 1}) == 2 and len(made) == 4


def test_run_options_and_metadata_are_checked(graph):
    x = tf.constant(1)
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="trace_level=7"):
            tf.RunOptions(trace_level=7)
        with pytest.raises(TypeError, match="options must be a RunOptions, got dict"):
            sess.run(x, options={"trace_level": 3})
        with pytest.raises(TypeError, match="run_metadata must be a RunMetadata"):
            sess.run(x, run_metadata=[])


def test_seed_000_fetching_the_counter_compiles_the_loop_without_x_and_fetching_x_compiles_it_whole(graph, capfd):
    n = 10
    counter, x = tf.while_loop(lambda i, x: i < n,
                               lambda i, x: (tf.Print(i + 1, [i], "Updating i "), tf.Print(x + i, [i], "Updating x ")),
                               (tf.constant(0), tf.zeros([10, 10], dtype=tf.int32)))  # small: compiled
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        assert sess.run(counter, run_metadata=metadata) == 10
        (loop,) = metadata.loops  # x's updates must not run: x goes round unchanged
        assert loop.executor == "compiled" and "other loop variables go round unchanged" in loop.reason
        assert "Updating x" not in capfd.readouterr().err
        assert (sess.run(x, run_metadata=metadata) == 45).all()
        (loop,) = metadata.loops  # x needs the whole loop
        assert loop.executor == "compiled" and "unchanged" not in loop.reason
        err = capfd.readouterr().err.splitlines()
        assert err == [line for k in range(10) for line in (f"Updating i [{k}]", f"Updating x [{k}]")]
