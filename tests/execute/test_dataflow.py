"""The dataflow form and its executor.

Every graph the control-flow tests trace already runs on the dataflow
executor, for parallel_iterations 1, 2 and 10, and with its loops compiled
(`equivalence.assert_equivalent`).
Here: generated loop programs that print inside their loops, the lowered
form of a nested loop (golden text), what the verifier rejects, and the
executor's own rules: only what fetches need runs, untaken branches and the
last body stay dead, iterations are non-strict within the
`parallel_iterations` window, large kernels overlap on the thread pool,
effects (random draws) keep their order, and the first failure in program
order is the one reported. Then the plan: which loops the cost rule
compiles into one node and which run as frames, and kernels working in
place in frames.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autoloop as al
import autoloop.compat.v1 as tf
from autoloop.errors import InvalidArgumentError
from autoloop.execute import dataflow
from autoloop.execute.dataflow import executor as dataflow_executor
from autoloop.execute.dataflow import plan as dataflow_plan
from autoloop.execute.dataflow import workers as dataflow_workers
from autoloop.execute.interpreter import interpret
from autoloop.ops import registry
from autoloop.ops.dispatch import apply
from autoloop.ops.registry import OpDef, Spec
from tests.compiler.programs import blocks, conditions, make_function

from .equivalence import assert_equivalent, assert_identical

GOLDEN = pathlib.Path(__file__).parent / "golden"


def _graph(fn, *args, autograph=True):
    return al.function(fn, autograph=autograph).get_concrete_function(*[al.constant(a) for a in args]).graph


# -- generated loops that print --------------------------------------------------------------------
@st.composite
def loop_programs(draw):
    """``generated(a, b)``: a tensor while loop (maybe nested loops and ifs inside) printing as it goes."""
    counters = itertools.count()
    body = draw(blocks(1, True, counters))
    tops = [k for k, line in enumerate(body) if not line.startswith((" ", "else"))] + [len(body)]
    at = draw(st.sampled_from(tops))
    body = body[:at] + ["print('at', k, a, b, c)"] + body[at:]
    lines = ["def generated(a, b):", "    c = a - a", "    k = a - a",
             f"    while k < {draw(st.integers(0, 5))} and ({draw(conditions())}):",
             "        k += 1", "        print('step', k, c)"]
    lines += ["        " + line for line in body]
    lines += ["    print('after', a, b, c)", "    return a + 2 * b + 3 * c"]
    return "\n".join(lines) + "\n"


INPUTS = [(-3, 2), (0, 1), (4, -2), (6, 6)]


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(loop_programs())
def test_generated_loops_print_and_compute_the_same_for_any_parallel_iterations(source):
    graph = _graph(make_function(source, "generated"), 0, 0)
    assert any(node.op == "While" for node in graph.nodes), source
    assert_equivalent(graph, *[[np.int32(a), np.int32(b)] for a, b in INPUTS])


def test_maximum_iterations_stops_before_the_condition_runs_and_effects_keep_their_order():
    def counted(i):
        al.print("cond", i)
        return i < 100

    def body(i):
        al.print("body", i)
        return i + 1

    graph = _graph(lambda n: al.while_loop(counted, body, [n], maximum_iterations=3), 0, autograph=False)
    (outcome,) = assert_equivalent(graph, [np.int32(0)])
    assert outcome.stdout == "cond 0\nbody 0\ncond 1\nbody 1\ncond 2\nbody 2\n"


# -- the lowered form --------------------------------------------------------------------------------
def nested(n, scale):
    total = al.constant(0.0)
    i = al.constant(0)
    while i < n:
        j = al.constant(0)
        while j < i:
            total += scale * al.cast(j, al.float32)
            j += 1
        if total > 10.0:
            print("big", total)
        i += 1
    return total


def test_the_lowered_form_of_a_nested_loop_is_pinned(request):
    graph = al.function(nested).get_concrete_function(al.constant(4), al.constant(0.5)).graph
    lowered = dataflow.lower(graph)
    dataflow.verify(lowered)
    path = GOLDEN / "nested_loop.lowered"
    if request.config.getoption("--update-golden", False):
        path.write_text(str(lowered) + "\n")
    assert str(lowered) + "\n" == path.read_text(), "run pytest tests/execute --update-golden after checking the diff"
    assert [frame.name for frame in lowered.frames] == ["root", "while", "while/body/while"]
    assert lowered.frames[2].parent is lowered.frames[1]
    for n in (0, 3, 6):
        assert_identical(interpret(graph, np.int32(n), np.float32(0.5))[0],
                         dataflow.call(lowered, np.int32(n), np.float32(0.5))[0])


def test_captured_values_enter_once_as_loop_invariants():
    graph = _graph(lambda n, k: al.while_loop(lambda i: i < n, lambda i: i + k + n, [0]), 10, 2, autograph=False)
    lowered = dataflow.lower(graph)
    enters = [node for node in lowered.nodes if node.op == "Enter"]
    assert sorted(node.attrs["is_constant"] for node in enters) == [False, True, True]  # i; n and k once each
    assert all(node.attrs["parallel_iterations"] == 10 for node in enters)
    assert {node.op for node in lowered.nodes} >= {"Enter", "Merge", "Switch", "LoopCond", "NextIteration", "Exit"}


def test_a_cond_becomes_switches_and_merges():
    graph = _graph(lambda x: al.cond(x > 0, lambda: x * 2, lambda: x - 1), 3, autograph=False)
    lowered = dataflow.lower(graph)
    assert len(lowered.frames) == 1
    ops = [node.op for node in lowered.nodes]
    assert ops.count("Merge") == 1 and ops.count("Switch") == 2  # the predicate's and x's
    assert dataflow.call(lowered, np.int32(3)) == (6,) and dataflow.call(lowered, np.int32(-3)) == (-4,)


def test_parallel_iterations_must_be_positive():
    graph = _graph(lambda n: al.while_loop(lambda i: i < n, lambda i: i + 1, [0]), 3, autograph=False)
    with pytest.raises(ValueError, match="parallel_iterations must be a positive integer, got 0"):
        dataflow.lower(graph, parallel_iterations=0)


# -- the verifier ------------------------------------------------------------------------------------
def _lowered_loop():
    graph = _graph(lambda n: al.while_loop(lambda i: i < n, lambda i: i + 1, [0]), 3, autograph=False)
    return dataflow.lower(graph)


def _node(lowered, op):
    return next(node for node in lowered.nodes if node.op == op)


def _break_merge(lowered):
    merge = next(n for n in lowered.nodes if n.op == "Merge" and n.attrs.get("loop"))
    merge.inputs = merge.inputs[:1]


def _break_frame_edge(lowered):
    add = next(n for n in lowered.nodes if n.op == "Add")
    add.inputs[1] = lowered.inputs[0]  # a root value read inside the loop without an Enter


def _break_gate(lowered):
    const = next(n for n in lowered.nodes if n.op == "Const" and n.frame is not lowered.root)
    const.control_inputs = []


def _break_enter_attrs(lowered):
    _node(lowered, "Enter").attrs["parallel_iterations"] = 3


def _break_exit(lowered):
    exit_node = _node(lowered, "Exit")
    exit_node.inputs = [_node(lowered, "Switch").outputs[1]]


def _add_cycle(lowered):
    add = next(n for n in lowered.nodes if n.op == "Add")
    less = next(n for n in lowered.nodes if n.op == "Less")
    less.control_inputs = [add]


def _second_loop_cond(lowered):
    loop_cond = _node(lowered, "LoopCond")
    lowered.nodes.append(copy.copy(loop_cond))
    lowered.nodes[-1].name = "another_LoopCond"


@pytest.mark.parametrize("damage, message", [
    (_break_merge, "a loop Merge must read one Enter and one NextIteration of its frame"),
    (_break_frame_edge, "comes from frame 'root', expected 'while'"),
    (_break_gate, "waits for nothing"),
    (_break_enter_attrs, "disagree with its frame"),
    (_break_exit, "an Exit must read output 0 of a Switch"),
    (_add_cycle, "has a cycle that is not a loop's back-edge"),
    (_second_loop_cond, "does not have exactly one LoopCond"),
])
def test_the_verifier_names_what_is_wrong(damage, message):
    lowered = _lowered_loop()
    dataflow.verify(lowered)
    damage(lowered)
    with pytest.raises(dataflow.DataflowGraphError, match=message):
        dataflow.verify(lowered)


# -- only what is needed runs ---------------------------------------------------------------------------
def test_only_what_the_fetches_need_runs(capsys):
    def two_loops(n):
        def body(i, total, name):
            al.print(name, i)
            return i + 1, total + i
        first = al.while_loop(lambda i, t: i < n, lambda i, t: body(i, t, "first"), [0, 0])[1]
        second = al.while_loop(lambda i, t: i < n, lambda i, t: body(i, t, "second"), [0, 10])[1]
        return first, second

    graph = _graph(two_loops, 3, autograph=False)
    lowered = dataflow.lower(graph)
    feeds = {lowered.inputs[0]: np.int32(3)}
    first_loop, second_loop = [node for node in graph.nodes if node.op == "While"]
    first, second = lowered.outputs
    assert dataflow.run(lowered, [first], feeds) == [3]
    assert capsys.readouterr().out == ""  # the prints are effects the value does not depend on
    assert dataflow.run(lowered, [], feeds, lowered.completions[first_loop]) == []
    assert capsys.readouterr().out == "first 0\nfirst 1\nfirst 2\n"
    # The second loop comes after the first one in program order (an ordering edge, as both print):
    # its value needs the first loop done, its own prints are not needed for it.
    assert dataflow.run(lowered, [second], feeds) == [13]
    assert capsys.readouterr().out == "first 0\nfirst 1\nfirst 2\n"
    assert dataflow.run(lowered, [], feeds, lowered.completions[second_loop]) == []
    assert capsys.readouterr().out == "first 0\nfirst 1\nfirst 2\nsecond 0\nsecond 1\nsecond 2\n"


def test_an_unfed_placeholder_that_is_needed_is_named():
    graph = _graph(lambda x, y: (x + 1, y * 2), 1, 2, autograph=False)
    lowered = dataflow.lower(graph)
    x, y = lowered.inputs
    assert dataflow.run(lowered, [lowered.outputs[0]], {x: np.int32(4)}) == [5]
    with pytest.raises(ValueError, match=r"the placeholder 'y' \(int32, shape \(\)\) needs a value"):
        dataflow.run(lowered, [lowered.outputs[1]], {x: np.int32(4)})


def test_a_value_inside_a_loop_cannot_be_fetched():
    lowered = _lowered_loop()
    with pytest.raises(ValueError, match="computed inside loop frame 'while'"):
        dataflow.run(lowered, [_node(lowered, "Add").outputs[0]], {lowered.inputs[0]: np.int32(3)})


# -- non-strict iterations and the parallel_iterations window ------------------------------------------
@contextlib.contextmanager
def registered(*opdefs):
    """Ops for one test only (the op table must not see them)."""
    for opdef in opdefs:
        registry.register(opdef)
    try:
        yield
    finally:
        for opdef in opdefs:
            registry._REGISTRY.pop(opdef.name)


def _same_spec(x, **attrs):
    return Spec(x.dtype, x.shape)


def _record(i, log):
    log.append(int(i))
    return i


def _blocked(x, gate):
    if not gate.wait(timeout=20):
        raise AssertionError("never released")
    return x


BIG = np.zeros(dataflow_executor.OFFLOAD_ELEMENTS, np.int32)  # large enough to run on the pool


def _counter_and_blocked_x(parallel_iterations, n, log, gate):
    """Seed 000's loop: a counter, and x, whose every update waits for `gate` (on the thread pool)."""
    def body(i, x):
        return (apply("TestRecord", [i + 1], {"log": log}),
                apply("TestBlocked", [x + i], {"gate": gate}))
    graph = _graph(lambda x: al.while_loop(lambda i, x: i < n, body, (0, x),
                                           parallel_iterations=parallel_iterations), BIG, autograph=False)
    return dataflow.lower(graph)


@pytest.mark.parametrize("parallel_iterations", [1, 3, 10])
def test_the_counter_runs_ahead_of_x_by_at_most_parallel_iterations(parallel_iterations):
    n = 6
    log, gate = [], threading.Event()
    with registered(OpDef("TestRecord", kernel=_record, infer=_same_spec),
                    OpDef("TestBlocked", kernel=_blocked, infer=_same_spec)):
        lowered = _counter_and_blocked_x(parallel_iterations, n, log, gate)
        results = []
        runner = threading.Thread(target=lambda: results.append(dataflow.call(lowered, BIG, workers=2,
                                                                                         compile_loops=False)))
        runner.start()
        ahead = min(parallel_iterations, n)
        deadline = time.monotonic() + 10
        while len(log) < ahead and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.05)  # it must not go further while x's first update is blocked
        assert log == list(range(1, ahead + 1))
        gate.set()
        runner.join(timeout=20)
    counter, x = results[0]
    assert counter == n and log == list(range(1, n + 1))
    np.testing.assert_array_equal(x, BIG + sum(range(n)))


def _meet(x, barrier):
    barrier.wait()  # both kernels must be running at once to get past this
    return x


def test_independent_large_kernels_run_at_the_same_time_on_the_pool():
    barrier = threading.Barrier(2, timeout=20)
    with registered(OpDef("TestMeet", kernel=_meet, infer=_same_spec)):
        graph = _graph(lambda x, y: (apply("TestMeet", [x], {"barrier": barrier}),
                                     apply("TestMeet", [y], {"barrier": barrier})), BIG, BIG, autograph=False)
        first, second = dataflow.call(dataflow.lower(graph), BIG, BIG + 1, workers=2)
    np.testing.assert_array_equal(second, BIG + 1)


def test_without_workers_everything_runs_on_the_calling_thread(monkeypatch):
    graph = _graph(lambda x: al.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (0, x))[1], BIG + 1,
                   autograph=False)
    threads = []
    original = dataflow_plan.kernel_of

    def spying(node):
        kernel = original(node)
        return lambda args: (threads.append(threading.current_thread().name), kernel(args))[1]

    monkeypatch.setattr(dataflow_plan, "kernel_of", spying)
    (x,) = dataflow.call(dataflow.lower(graph), BIG + 1, workers=0, compile_loops=False)
    np.testing.assert_array_equal(x, BIG + 8)
    assert threads and set(threads) == {threading.current_thread().name}
    threads.clear()
    dataflow.call(dataflow.lower(graph), BIG + 1, workers=2, compile_loops=False)  # the large multiplications go to the pool
    assert len(set(threads)) == 2


# -- effects and failures ---------------------------------------------------------------------------------
def test_random_draws_in_a_loop_come_in_program_order_for_any_parallel_iterations():
    al.random.set_seed(5)

    def draws(n):
        return al.while_loop(lambda i, acc: i < n,
                             lambda i, acc: (i + 1, acc * 3.0 + al.random.uniform([])), (0, 0.0))[1]

    graph = _graph(draws, 8, autograph=False)
    streams = [node.attrs["stream"] for node in graph.walk() if node.op == "RandomUniform"]
    start = [stream.state for stream in streams]

    def fresh(run):
        for stream, state in zip(streams, start):
            stream.state = state
        return run()

    expected = fresh(lambda: interpret(graph, np.int32(8)))
    for parallel_iterations in (1, 2, 10):
        lowered = dataflow.lower(graph, parallel_iterations)
        for compile_loops in (False, None):
            assert_identical(expected[0], fresh(lambda: dataflow.call(lowered, np.int32(8),
                                                                      compile_loops=compile_loops))[0])


def reads_in_a_loop(n):
    ta = al.TensorArray(al.int32, size=2, element_shape=[])
    ta = ta.write(0, 10).write(1, 11)
    return al.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + ta.read(i)), (0, 0))[1]


@pytest.mark.parametrize("compile_loops", [False, None])
@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
def test_the_failure_reported_is_the_first_in_program_order(parallel_iterations, compile_loops):
    graph = _graph(reads_in_a_loop, 6, autograph=False)
    lowered = dataflow.lower(graph, parallel_iterations)
    assert dataflow.call(lowered, np.int32(2), compile_loops=compile_loops) == (21,)
    with pytest.raises(InvalidArgumentError, match="index 2") as failure:
        dataflow.call(lowered, np.int32(6), compile_loops=compile_loops)
    with pytest.raises(InvalidArgumentError) as expected:
        interpret(graph, np.int32(6))
    assert str(failure.value) == str(expected.value)


# -- the plan: each loop compiled into one node, or run as frames (the cost rule) -------------------------
def _sum_square(n):
    return al.while_loop(lambda i, r: i < n, lambda i, r: (i + 1, r + i * i), (0, 0))[1]


def _executors(lowered, **options) -> dict:
    plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs, lowered.effects, **options)
    return {loop.frame: loop.executor for loop in plan.frames}, plan


def test_a_loop_of_small_values_is_compiled_into_one_node_and_agrees_with_frames():
    graph = _graph(_sum_square, 5, autograph=False)
    lowered = dataflow.lower(graph)
    executors, plan = _executors(lowered)
    assert executors == {"while": "compiled"}
    assert [node.op for node in plan.nodes] == ["Const", "Const", "While"]  # no Enter, Merge, Switch left
    assert "fewer than 32768 elements" in plan.frames[0].reason
    for n in (0, 1, 100):
        expected = interpret(graph, np.int32(n))
        assert_identical(expected[0], dataflow.call(lowered, np.int32(n))[0])
        assert_identical(expected[0], dataflow.call(lowered, np.int32(n), compile_loops=False)[0])


def test_large_values_run_as_frames_unless_parallel_iterations_is_one():
    def loop(x):
        return al.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc + al.reduce_sum(x * 2)), (0, 0))[1]

    graph = _graph(loop, BIG, autograph=False)
    executors, plan = _executors(dataflow.lower(graph, parallel_iterations=10))
    assert executors == {"while": "frames"} and "iterations overlap on the thread pool" in plan.frames[0].reason
    executors, plan = _executors(dataflow.lower(graph, parallel_iterations=1))
    assert executors == {"while": "compiled"} and "parallel_iterations=1" in plan.frames[0].reason
    executors, _ = _executors(dataflow.lower(graph, parallel_iterations=1), compile_loops=False)
    assert executors == {"while": "frames"}


def test_a_loop_the_fetches_need_part_of_is_compiled_with_the_rest_going_round_unchanged(capsys):
    """Seed 000: fetching the counter must not run x's prints: compiled, x goes round untouched."""
    def loop(n):
        return al.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, tf.Print(x + i, [i], "x at ")), (0, 0))

    graph = _graph(loop, 3, autograph=False)
    lowered = dataflow.lower(graph)
    counter, x = lowered.outputs
    feeds = {lowered.inputs[0]: np.int32(3)}
    plan = dataflow.Plan(lowered, [counter], list(feeds))
    (only,) = plan.frames
    assert only.executor == "compiled" and "its other loop variables go round unchanged" in only.reason
    assert dataflow.execute(plan, list(feeds.values())) == [3] and capsys.readouterr().err == ""
    plan = dataflow.Plan(lowered, [x], list(feeds))
    assert [loop.executor for loop in plan.frames] == ["compiled"]
    assert dataflow.execute(plan, list(feeds.values())) == [3]
    assert capsys.readouterr().err == "x at [0]\nx at [1]\nx at [2]\n"


def test_a_loop_the_fetches_need_part_of_runs_as_frames_when_the_rest_holds_a_loop(capsys):
    def loop(n):
        def body(i, x):
            inner = al.while_loop(lambda j, y: j < 2, lambda j, y: (j + 1, tf.Print(y + j, [j], "inner ")), (0, x))[1]
            return i + 1, inner
        return al.while_loop(lambda i, x: i < n, body, (0, 0))

    graph = _graph(loop, 3, autograph=False)
    lowered = dataflow.lower(graph)
    counter, x = lowered.outputs
    plan = dataflow.Plan(lowered, [counter], lowered.inputs)
    assert [(loop.executor, "inside a nested loop" in loop.reason) for loop in plan.frames] == [("frames", True)]
    assert dataflow.execute(plan, [np.int32(3)]) == [3] and capsys.readouterr().err == ""
    assert dataflow.execute(dataflow.Plan(lowered, [x], lowered.inputs), [np.int32(3)]) == [3]
    assert capsys.readouterr().err == "inner [0]\ninner [1]\n" * 3


def test_an_inner_loop_is_compiled_inside_an_outer_loop_that_runs_as_frames():
    def nested(x):
        def outer(i, acc):
            inner = al.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j), (0, 0))[1]
            return i + 1, acc + al.reduce_sum(x * al.cast(inner, al.int32))
        return al.while_loop(lambda i, acc: i < 4, outer, (0, 0))[1]

    graph = _graph(nested, BIG + 1, autograph=False)
    lowered = dataflow.lower(graph)
    executors, _ = _executors(lowered)
    assert executors == {"while": "frames", "while/body/while": "compiled"}
    assert_identical(interpret(graph, BIG + 1)[0], dataflow.call(lowered, BIG + 1)[0])


def test_a_failure_inside_a_compiled_loop_names_the_op_and_the_users_line():
    graph = _graph(reads_in_a_loop, 6, autograph=False)
    lowered = dataflow.lower(graph)
    assert [loop.executor for loop in _executors(lowered)[1].frames] == ["compiled"]
    with pytest.raises(InvalidArgumentError) as failure:
        dataflow.call(lowered, np.int32(6))
    with pytest.raises(InvalidArgumentError) as expected:
        interpret(graph, np.int32(6))
    assert str(failure.value) == str(expected.value) and "test_dataflow.py" in str(failure.value)


# -- in place: a kernel takes over the buffer its input's last reader releases -----------------------------
def test_a_chain_of_element_wise_kernels_in_frames_reuses_one_buffer():
    x = np.linspace(0, 1, 1 << 18, dtype=np.float32)

    def loop(x):
        body = lambda i, acc: (i + 1, acc + al.reduce_sum(al.tanh(x * al.cast(i, al.float32) + 1.0)))  # noqa: E731
        return al.while_loop(lambda i, acc: i < 3, body, (0, 0.0))[1]

    graph = _graph(loop, x, autograph=False)
    lowered = dataflow.lower(graph)
    plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs, compile_loops=False)
    in_place = {node.name: slot for node, slot in zip(plan.nodes, plan._in_place_slots()) if slot is not None}
    assert in_place == {"while/body/add_1": 0, "while/body/Tanh": 0}  # not mul: it reads x, the loop's input
    (total,) = dataflow.execute(plan, [x], workers=0)
    assert_identical(interpret(graph, x)[0], total)
    tracemalloc.start()  # numpy reports its arrays to tracemalloc
    try:
        dataflow.execute(plan, [x], workers=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * x.nbytes  # one array of x's size in flight, not two


def test_a_value_read_twice_or_fetched_is_never_overwritten():
    x = np.linspace(-1, 1, 1 << 18, dtype=np.float32)

    def twice(x):
        y = x * 2.0
        z = al.tanh(y)        # y is read again below: Tanh must not write into it
        w = al.exp(z)         # z is also a result: Exp must not write into it
        return z + y, w, z

    graph = _graph(twice, x, autograph=False)
    lowered = dataflow.lower(graph)
    expected = interpret(graph, x)
    for found, wanted in zip(dataflow.call(lowered, x, workers=0), expected):
        assert_identical(wanted, found)


def _three_variables(n):
    def body(i, a, b):
        return (tf.Print(i + 1, [i], "i "), tf.Print(a + i, [a], "a "), tf.Print(b * 2 + a, [b], "b "))
    return al.while_loop(lambda i, a, b: i < n, body, (0, 1, 2))


@pytest.mark.parametrize("fetched", [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)])
def test_a_pruned_compiled_loop_computes_and_prints_what_frames_do(capfd, fetched):
    """Whichever loop variables are fetched, the planned run (compiled, the others unchanged) prints and
    returns what the run as frames does (b reads a, so fetching b needs a too)."""
    graph = _graph(_three_variables, 4, autograph=False)
    lowered = dataflow.lower(graph)
    fetches = [lowered.outputs[k] for k in fetched]
    outcomes = []
    for compile_loops in (False, None):
        plan = dataflow.Plan(lowered, fetches, lowered.inputs, compile_loops=compile_loops)
        values = dataflow.execute(plan, [np.int32(4)])
        outcomes.append((values, sorted(capfd.readouterr().err.splitlines()), [loop.executor for loop in plan.frames]))
    (frames, frames_printed, _), (planned, planned_printed, executors) = outcomes
    assert executors == ["compiled"] and planned == frames and planned_printed == frames_printed


# -- chains: a pool worker runs a kernel's sole reader right after it ------------------------------------
def _tanh_exp_sum(x):
    body = lambda i, acc: (i + 1, acc + al.reduce_sum(al.exp(al.tanh(x * al.cast(i, al.float32)))))  # noqa: E731
    return al.while_loop(lambda i, acc: i < 3, body, (0, 0.0))[1]


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_a_chain_of_large_kernels_is_one_trip_to_the_pool_per_iteration(monkeypatch, parallel_iterations):
    x = np.linspace(0, 1, 1 << 16, dtype=np.float32)
    graph = _graph(_tanh_exp_sum, x, autograph=False)
    lowered = dataflow.lower(graph, parallel_iterations)
    plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs, compile_loops=False)
    chained = {plan.nodes[k].op: plan.nodes[n].op for k, n in enumerate(plan.chain_next) if n is not None}
    assert chained == {"Mul": "Tanh", "Tanh": "Exp", "Exp": "Sum"}  # Sum's result goes to acc + ..., a small kernel
    trips = []
    finish = dataflow_executor._Run._finish_kernel
    monkeypatch.setattr(dataflow_executor._Run, "_finish_kernel",
                        lambda run, node, *rest: (trips.append(run.plan.nodes[node].op), finish(run, node, *rest))[1])
    (total,) = dataflow.execute(plan, [x], workers=2)
    assert trips == ["Sum"] * 3  # the scheduler hears of each iteration's chain once, at its end
    assert_identical(interpret(graph, x)[0], total)
    assert_identical(dataflow.execute(plan, [x], workers=0)[0], total)


def _fails_from(x, limit):
    if x[1] >= limit:
        raise InvalidArgumentError(f"TestFailFrom: {x[1]} reached {limit}")
    return x


@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
def test_a_failure_inside_a_chain_is_the_first_in_program_order_and_names_its_op(parallel_iterations):
    """The middle kernel of ``x * i -> TestFailFrom -> reduce_sum`` fails from iteration 2 on: the error
    raised is iteration 2's, as the interpreter raises it, and nothing after it in the chain runs."""
    x = np.ones(1 << 16, np.float32)
    with registered(OpDef("TestFailFrom", kernel=_fails_from, infer=_same_spec)):
        def loop(x):
            body = lambda i, acc: (i + 1, acc + al.reduce_sum(  # noqa: E731
                apply("TestFailFrom", [x * al.cast(i, al.float32)], {"limit": 2.0})))
            return al.while_loop(lambda i, acc: i < 5, body, (0, 0.0), parallel_iterations=parallel_iterations)[1]

        graph = _graph(loop, x, autograph=False)
        lowered = dataflow.lower(graph, parallel_iterations)
        plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs, compile_loops=False)
        assert [plan.nodes[n].op for n in plan.chain_next if n is not None] == ["TestFailFrom", "Sum"]
        with pytest.raises(InvalidArgumentError) as expected:
            interpret(graph, x)
        for workers in (0, 2):
            with pytest.raises(InvalidArgumentError) as failure:
                dataflow.execute(plan, [x], workers=workers)
            assert str(failure.value) == str(expected.value) and "2.0 reached 2.0" in str(failure.value)


def test_a_kernel_whose_reader_reads_more_or_is_fetched_ends_its_chain():
    x = np.linspace(0, 1, 1 << 16, dtype=np.float32)

    def branching(x):
        y = al.tanh(x * 2.0)   # read twice: no chain from y
        z = al.exp(y) + y      # Exp's reader reads y too: no chain from Exp
        w = al.sin(z)          # w is fetched: no chain from Sin
        return al.cos(w), w

    graph = _graph(branching, x, autograph=False)
    lowered = dataflow.lower(graph)
    plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs)
    chained = {plan.nodes[k].op: plan.nodes[n].op for k, n in enumerate(plan.chain_next) if n is not None}
    assert chained == {"Mul": "Tanh", "Add": "Sin"}
    for found, wanted in zip(dataflow.call(lowered, x, workers=2), interpret(graph, x)):
        assert_identical(wanted, found)


def _peak(plan, values, workers=None) -> tuple[int, list]:
    """The most memory numpy held at once while `plan` ran, and the run's results."""
    tracemalloc.start()  # numpy reports its arrays to tracemalloc
    try:
        result = dataflow.execute(plan, values, workers=workers)
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("work", [
    lambda x, c: al.tanh(x * c),                       # a chain: one array per iteration
    lambda x, c: al.tanh(x * c) + x * c,               # no chain: Mul's results are read by Add too
    lambda x, c: (lambda y: al.tanh(y) * y)(x * c),    # y read twice: two arrays per iteration
], ids=["chain", "two products", "read twice"])
def test_ten_iterations_in_flight_hold_one_iterations_temporaries_per_worker(work):
    """With parallel_iterations=10 on two workers, each worker computes one kernel or chain at a time, the
    oldest first (one waits queued behind a busy worker only where nothing older can come): the peak is at
    most twice the compiled loop's (one iteration at a time), not one iteration's per iteration in flight.
    (The chain, summed whole, runs block by block and holds less than the compiled loop: test_fused_sum.)"""
    x = np.linspace(0, 1, 1 << 18, dtype=np.float32)
    graph = _graph(lambda x: al.while_loop(
        lambda i, acc: i < 8, lambda i, acc: (i + 1, acc + al.reduce_sum(work(x, al.cast(i, al.float32)))),
        (0, 0.0), parallel_iterations=10)[1], x, autograph=False)
    lowered = dataflow.lower(graph, 10)
    frames = dataflow.Plan(lowered, lowered.outputs, lowered.inputs)
    compiled = dataflow.Plan(lowered, lowered.outputs, lowered.inputs, compile_loops=True)
    assert [loop.executor for loop in frames.frames] == ["frames"]
    dataflow.execute(frames, [x], workers=2)
    peak, (total,) = _peak(frames, [x], workers=2)
    one_at_a_time, (expected,) = _peak(compiled, [x])
    assert_identical(interpret(graph, x)[0], total)
    assert_identical(expected, total)
    assert peak < 2 * one_at_a_time + 0.5 * x.nbytes


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(loop_programs())
def test_generated_loops_agree_with_every_kernel_on_the_pool(source):
    """No size threshold: every kernel that may go to the thread pool goes, in chains, iterations
    overlapping, so the pool's path meets the generated programs' branches, nested loops and prints."""
    graph = _graph(make_function(source, "generated"), 0, 0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dataflow_plan, "OFFLOAD_ELEMENTS", 0)
        patch.setattr(dataflow_executor, "OFFLOAD_ELEMENTS", 0)
        assert_equivalent(graph, *[[np.int32(a), np.int32(b)] for a, b in INPUTS])


@pytest.mark.parametrize("feeds_the_pool", [False, True])
def test_a_task_whose_chain_ends_off_the_pool_waits_queued_behind_a_busy_worker(monkeypatch, feeds_the_pool):
    """One worker, blocked in iteration 0's chain: iteration 1's chain (ending in reduce_sum, read by a
    small add) is already handed to the pool, so the worker takes it without waiting for the scheduler;
    where a chain's result goes on to a pool kernel (``y + y``), nothing is queued behind."""
    x = np.ones(1 << 16, np.float32)
    gate, handed = threading.Event(), []
    put = dataflow_workers.Workers.put
    monkeypatch.setattr(dataflow_workers.Workers, "put",
                        lambda pool, task, busy: (handed.append(task[0]), put(pool, task, busy))[1])
    with registered(OpDef("TestBlocked", kernel=_blocked, infer=_same_spec)):
        def work(x, c):
            y = apply("TestBlocked", [x * c], {"gate": gate})
            return al.reduce_sum(y + y if feeds_the_pool else y)

        graph = _graph(lambda x: al.while_loop(lambda i, acc: i < 3, lambda i, acc: (
            i + 1, acc + work(x, al.cast(i, al.float32))), (0, 0.0), parallel_iterations=10)[1], x, autograph=False)
        lowered = dataflow.lower(graph, 10)
        plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs)
        results = []
        runner = threading.Thread(target=lambda: results.append(dataflow.execute(plan, [x], workers=1)))
        runner.start()
        deadline = time.monotonic() + 10
        while len(handed) < (1 if feeds_the_pool else 2) and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.1)  # nothing more is handed while the worker is blocked
        handed_while_blocked = len(handed)
        gate.set()
        runner.join(timeout=20)
        assert_identical(interpret(graph, x)[0], results[0][0])
    assert handed_while_blocked == (1 if feeds_the_pool else 2)


# -- the pool's threads: the process's, lent to one run at a time ------------------------------------------
def _pool_threads() -> set:
    return {thread for thread in threading.enumerate() if thread.name.startswith("autoloop-dataflow")}


def _pooled_loop(parallel_iterations=10):
    """A loop whose body's chain runs on the pool: ``acc += reduce_sum(tanh(x * i))`` over a large `x`."""
    x = np.linspace(0, 1, 1 << 16, dtype=np.float32)
    graph = _graph(lambda x: al.while_loop(
        lambda i, acc: i < 6, lambda i, acc: (i + 1, acc + al.reduce_sum(al.tanh(x * al.cast(i, al.float32)))),
        (0, 0.0), parallel_iterations=parallel_iterations)[1], x, autograph=False)
    lowered = dataflow.lower(graph, parallel_iterations)
    return graph, dataflow.Plan(lowered, lowered.outputs, lowered.inputs)


def test_runs_one_after_another_use_the_same_threads_and_leave_nothing_in_them():
    graph, plan = _pooled_loop()
    x = np.linspace(0, 1, 1 << 16, dtype=np.float32)
    dataflow.execute(plan, [x], workers=2)
    threads = _pool_threads()
    assert 1 <= len(threads) <= 2 + 1  # two for this run, maybe one still going back from a run before
    for scale in (1, 2, 3):
        fed = x * scale
        (total,) = dataflow.execute(plan, [fed], workers=2)
        assert_identical(interpret(graph, fed)[0], total)
        assert _pool_threads() == threads  # no thread started, none ended
        alive = weakref.ref(fed)
        del fed, total
        assert alive() is None  # an idle thread holds no value of the run it served


def test_runs_from_several_threads_at_once_each_get_their_own_threads_and_results():
    graph, plan = _pooled_loop()
    inputs = [np.linspace(0, 1, 1 << 16, dtype=np.float32) * (k + 1) for k in range(4)]
    expected = [interpret(graph, x)[0] for x in inputs]
    results, barrier = {}, threading.Barrier(len(inputs), timeout=20)

    def caller(k):
        barrier.wait()
        for _ in range(3):
            results.setdefault(k, []).append(dataflow.execute(plan, [inputs[k]], workers=2)[0])

    callers = [threading.Thread(target=caller, args=(k,)) for k in range(len(inputs))]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join(timeout=60)
    for k, want in enumerate(expected):
        assert len(results[k]) == 3
        for got in results[k]:
            assert_identical(want, got)
    assert len(_pool_threads()) <= 2 * len(inputs) + 2  # at most two per run at once, kept for the next


_FORKING = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from autoloop.execute import dataflow
    from tests.execute.test_dataflow import _pooled_loop

    graph, plan = _pooled_loop()
    x = np.linspace(0, 1, 1 << 16, dtype=np.float32)
    (expected,) = dataflow.execute(plan, [x], workers=2)  # the parent's threads now idle
    child = os.fork()
    if child == 0:  # the parent's idle threads are not here: a run must not wait for them
        (total,) = dataflow.execute(plan, [x], workers=2)
        os._exit(0 if np.asarray(total).tobytes() == np.asarray(expected).tobytes() else 3)
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            sys.exit(os.waitstatus_to_exitcode(status))
        if time.monotonic() > deadline:
            os.kill(child, 9)
            sys.exit("the forked child's run waited for the parent's threads")
        time.sleep(0.01)
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_starts_threads_of_its_own():
    # In a process of its own: this one has JAX's threads, and a fork of those may deadlock.
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _FORKING], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              filter(None, [str(root), os.environ.get("PYTHONPATH")]))})
    assert done.returncode == 0, done.stderr
