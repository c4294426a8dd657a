"""The dataflow form and its executor.

Every graph the control-flow tests trace already runs on the dataflow
executor, for parallel_iterations 1, 2 and 10 (`equivalence.assert_equivalent`).
Here: generated loop programs that print inside their loops, the lowered
form of a nested loop (golden text), what the verifier rejects, and the
executor's own rules: only what fetches need runs, untaken branches and the
last body stay dead, iterations are non-strict within the
`parallel_iterations` window, large kernels overlap on the thread pool,
effects (random draws) keep their order, and the first failure in program
order is the one reported.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import pathlib
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autoloop as al
from autoloop.errors import InvalidArgumentError
from autoloop.execute import dataflow
from autoloop.execute.dataflow import executor as dataflow_executor
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
        runner = threading.Thread(target=lambda: results.append(dataflow.call(lowered, BIG, workers=2)))
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
    original = dataflow_executor.kernel_of

    def spying(node):
        kernel = original(node)
        return lambda args: (threads.append(threading.current_thread().name), kernel(args))[1]

    monkeypatch.setattr(dataflow_executor, "kernel_of", spying)
    (x,) = dataflow.call(dataflow.lower(graph), BIG + 1, workers=0)
    np.testing.assert_array_equal(x, BIG + 8)
    assert threads and set(threads) == {threading.current_thread().name}
    threads.clear()
    dataflow.call(dataflow.lower(graph), BIG + 1, workers=2)  # the large multiplications go to the pool
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
        assert_identical(expected[0], fresh(lambda: dataflow.call(lowered, np.int32(8)))[0])


def reads_in_a_loop(n):
    ta = al.TensorArray(al.int32, size=2, element_shape=[])
    ta = ta.write(0, 10).write(1, 11)
    return al.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + ta.read(i)), (0, 0))[1]


@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
def test_the_failure_reported_is_the_first_in_program_order(parallel_iterations):
    graph = _graph(reads_in_a_loop, 6, autograph=False)
    lowered = dataflow.lower(graph, parallel_iterations)
    assert dataflow.call(lowered, np.int32(2)) == (21,)
    with pytest.raises(InvalidArgumentError, match="index 2") as failure:
        dataflow.call(lowered, np.int32(6))
    with pytest.raises(InvalidArgumentError) as expected:
        interpret(graph, np.int32(6))
    assert str(failure.value) == str(expected.value)
