"""Element-wise chains summed whole run block by block on the dataflow executor's pool (`dataflow.fused`).

The result must be the reference interpreter's bit for bit (numpy's
pairwise sum, cut where numpy cuts), the large intermediate must never
exist whole, and whatever the blocks cannot take (layouts, dtypes, axes,
broadcasting, failures) runs kernel by kernel.
"""

from __future__ import annotations

import json
import threading
import tracemalloc

import numpy as np
import pytest

import autoloop as al
import autoloop.compat.v1 as tf
from autoloop.errors import InvalidArgumentError
from autoloop.execute import dataflow
from autoloop.execute.dataflow import fused
from autoloop.execute.interpreter import interpret
from autoloop.ops import registry
from autoloop.ops.dispatch import apply

from .equivalence import assert_identical

N = 197_621  # float32 elements: a few blocks, cut off any grid


def _graph(fn, *args):
    return al.function(fn, autograph=False).get_concrete_function(*[al.constant(a) for a in args]).graph


@pytest.fixture
def runs(monkeypatch):
    """How many fused runs gave a result (a run that declines, returning None, is not counted)."""
    counted = []
    original = fused.FusedSum.__call__

    def counting(self, values):
        results = original(self, values)
        counted.append(results is not None)
        return results

    monkeypatch.setattr(fused.FusedSum, "__call__", counting)
    return counted


def _check(fn, *inputs, fused_runs, expect_fused=True):
    """`fn`'s graph on the pool (two workers) equals the interpreter's bit for bit, fused or not as expected."""
    graph = _graph(fn, *inputs)
    lowered = dataflow.lower(graph)
    expected = interpret(graph, *inputs)
    fused_runs.clear()
    found = dataflow.call(lowered, *inputs, workers=2)
    for wanted, got in zip(expected, found):
        assert_identical(wanted, got)
    assert any(fused_runs) == expect_fused, fused_runs


def _spread(size, dtype=np.float32, seed=0):
    """Values over many magnitudes and both signs: any other order of additions gives other bits."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(size) * np.exp(rng.uniform(-12, 12, size))).astype(dtype)


def test_this_numpy_sums_pairwise_and_the_probe_tells_other_orders_apart(monkeypatch):
    assert fused.numpy_sums_pairwise()
    whole = np.sum  # numpys that summed otherwise: each gives other bits on a probe
    for other in (lambda a, dtype: whole(a.astype(np.longdouble)).astype(dtype),  # wider, rounding once
                  lambda a, dtype: np.cumsum(a, dtype=dtype)[-1],  # one by one
                  lambda a, dtype: sum((whole(a[k:k + 8192], dtype=dtype) for k in range(0, a.size, 8192)),
                                       dtype(0))):  # in buffers of 8192 left to right
        monkeypatch.setattr(np, "sum", lambda a, dtype=None: (other(a, dtype) if a.size > 1024  # noqa: B023
                                                             else whole(a, dtype=dtype)))
        assert not fused.numpy_sums_pairwise.__wrapped__()
        monkeypatch.undo()
    values = _spread(5 * 4096 + 13)
    half = values.size // 2  # numpy's cut is at a multiple of 8: cutting at the middle is another order
    assert (np.sum(values[:half]) + np.sum(values[half:])).tobytes() != np.sum(values).tobytes()


@pytest.mark.parametrize("work", [
    lambda x, c: al.tanh(x * c),
    lambda x, c: al.exp(al.sin(x - c)),
    lambda x, c: al.sqrt(al.abs(al.cos(x ** c))),
    lambda x, c: al.square(al.negative(x + c)),
    lambda x, c: al.log(al.maximum(x, c)),
], ids=["tanh", "exp-sin", "sqrt-abs-cos-pow", "square-neg-add", "log-max"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_element_wise_chain_summed_whole_is_the_interpreters_bit_for_bit(runs, work, dtype):
    x = _spread(N, dtype)
    _check(lambda x, c: al.reduce_sum(work(x, c)), x, dtype(0.75), fused_runs=runs)


def _ufunc_ops():
    """Every registered op whose numpy kernel is a one-output ufunc of one or two inputs."""
    for name, opdef in sorted(registry._REGISTRY.items()):
        fn = opdef.kernel_for("numpy").fn
        if isinstance(fn, np.ufunc) and fn.nout == 1 and fn.nin in (1, 2):
            yield name, fn.nin


def test_every_ufunc_op_made_block_by_block_and_summed_is_the_interpreters_bit_for_bit(runs):
    """Each op heads a chain ``reduce_sum(op(x[, y]))`` over float32 values of every sign and size (NaNs where
    the op has no value); ops that take no floats are skipped, those giving bools run kernel by kernel, and
    so does matmul, a ufunc that is not element-wise."""
    x, y = _spread(N), _spread(N, seed=1)
    ran = []
    for name, arity in _ufunc_ops():
        inputs = (x, y)[:arity]
        try:
            graph = _graph(lambda *args: al.reduce_sum(apply(name, list(args), {})), *inputs)
        except (TypeError, ValueError):
            continue  # integer and logical ops
        lowered = dataflow.lower(graph)
        runs.clear()
        assert_identical(interpret(graph, *inputs)[0], dataflow.call(lowered, *inputs, workers=2)[0], name)
        ran.append((name, any(runs)))
    fused_ops = {name for name, fused_run in ran if fused_run}
    assert {"Mul", "Add", "Tanh", "Exp", "Sin", "Sqrt", "Pow", "Log1p", "Sign"} <= fused_ops, ran
    assert "MatMul" in dict(ran) and "MatMul" not in fused_ops  # a generalized ufunc: not element-wise
    square = x[:400 * 400].reshape(400, 400)
    lowered = dataflow.lower(_graph(lambda a, b: al.reduce_sum(al.matmul(a, b)), square, square))
    assert not any(dataflow.Plan(lowered, lowered.outputs, lowered.inputs).fused)
    assert len(ran) >= 20, ran


@pytest.mark.parametrize("shape, axis, keepdims", [
    ((N,), None, True), ((64, 3001), None, False), ((64, 3001), (0, 1), True), ((7, 64, 301), (-1, 0, 1), False)])
def test_every_axis_of_any_rank_with_keepdims(runs, shape, axis, keepdims):
    x = _spread(int(np.prod(shape))).reshape(shape)
    _check(lambda x: al.reduce_sum(al.tanh(x * 3.0), axis=axis, keepdims=keepdims), x, fused_runs=runs)


def test_two_large_inputs_and_integers_that_wrap(runs):
    x, y = _spread(N), _spread(N, seed=1)
    _check(lambda x, y: al.reduce_sum(al.exp(al.tanh(x * y))), x, y, fused_runs=runs)
    big = np.full(N, 2 ** 30, np.int32)  # the sum wraps round int32 many times
    _check(lambda x: al.reduce_sum(al.square(x - 3)), big, fused_runs=runs)
    _check(lambda x: al.reduce_sum(x * x + 1), np.arange(N, dtype=np.int64), fused_runs=runs)


def test_signed_zeros_infinities_and_nans_come_out_as_numpys():
    for values in ([-0.0] * N, [np.inf] * (N // 2) + [-np.inf] * (N - N // 2), [np.nan] * 3 + [1.0] * (N - 3),
                   [1.0] * (N - 5) + [-np.nan] * 5):
        x = np.array(values, np.float32)
        graph = _graph(lambda x: al.reduce_sum(al.negative(x * 1.0)), x)
        assert_identical(interpret(graph, x)[0], dataflow.call(dataflow.lower(graph), x, workers=2)[0])


@pytest.mark.parametrize("case", ["transposed", "broadcast", "float16", "some axes", "bool", "no ufunc",
                                  "numpy sums otherwise"])
def test_what_the_blocks_cannot_take_runs_kernel_by_kernel(runs, case, monkeypatch):
    x = _spread(N)
    if case == "numpy sums otherwise":  # a numpy whose summation the probe does not recognise
        monkeypatch.setattr(fused, "numpy_sums_pairwise", lambda: False)
        _check(lambda x: al.reduce_sum(al.tanh(x * 2.0)), x, fused_runs=runs, expect_fused=False)
    elif case == "transposed":  # numpy sums a non-C-contiguous array in memory order
        square = _spread(1024 * 1024).reshape(1024, 1024).T
        _check(lambda x: al.reduce_sum(al.tanh(x * 2.0)), square, fused_runs=runs, expect_fused=False)
    elif case == "broadcast":
        rows, row = x[:2 * 50000].reshape(2, 50000), _spread(50000, seed=1)  # row goes into both rows
        _check(lambda a, b: al.reduce_sum(al.tanh(a * b)), rows, row, fused_runs=runs, expect_fused=False)
    elif case == "float16":  # numpy adds float16 in float32
        halves = (x / np.float32(1e8)).astype(np.float16)
        _check(lambda x: al.reduce_sum(al.tanh(x * 2.0)), halves, fused_runs=runs, expect_fused=False)
    elif case == "some axes":
        matrix = x[:64 * 3001].reshape(64, 3001)
        _check(lambda x: al.reduce_sum(al.tanh(x * 2.0), axis=1), matrix, fused_runs=runs, expect_fused=False)
    elif case == "bool":
        _check(lambda x: al.reduce_sum(al.cast(x > 0.5, al.int32)), x, fused_runs=runs, expect_fused=False)
    else:  # sigmoid's kernel is a function, not a ufunc: there is no chain to run block by block
        _check(lambda x: al.reduce_sum(al.sigmoid(x * 2.0)), x, fused_runs=runs, expect_fused=False)


def test_a_failed_probe_a_dtype_change_or_a_small_array_runs_the_chain_kernel_by_kernel(monkeypatch):
    x = _spread(N)
    graph = _graph(lambda x: al.reduce_sum(al.tanh(x * 2.0)), x)
    lowered = dataflow.lower(graph)
    plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs)
    (run,) = [run for run in plan.fused if run is not None]
    assert run.op == "Mul+Tanh+Sum"

    def failing(*args, **kwargs):
        raise ValueError("no probe")

    assert run([x[:500], np.float32(2)]) is None  # four of numpy's own blocks at most: nothing to cut
    monkeypatch.setattr(run, "in_place", [np.isfinite])  # a unary kernel giving bools cannot write in place
    assert run([x, np.float32(2)]) is None
    monkeypatch.undo()
    run.decisions.clear()  # decided once per kind of inputs: forget, to decide with the failing probe
    monkeypatch.setattr(run, "head", failing)  # the one-element probe fails: nothing is written yet
    assert run([x, np.float32(2)]) is None
    assert_identical(interpret(graph, x)[0], dataflow.execute(plan, [x], workers=2)[0])


def test_a_failure_in_a_block_is_raised_as_its_nodes(monkeypatch):
    """Once blocks are written (maybe into the head's input), there is no going back: the failing kernel's
    error is raised as its node's, naming the op and the user's line, as the kernel would raise it."""
    x = _spread(N)
    graph = _graph(lambda x: al.reduce_sum(al.tanh(x * 2.0)), x)
    lowered = dataflow.lower(graph)
    plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs)
    (run,) = [run for run in plan.fused if run is not None]

    def tanh_of_blocks(value, out=None):
        if value.size > 1:
            raise FloatingPointError("no block")
        return np.tanh(value, out=out)

    monkeypatch.setattr(run, "in_place", [tanh_of_blocks])
    with pytest.raises(InvalidArgumentError, match=r"Tanh \(node .*Tanh\) failed while running: "
                                                   r"FloatingPointError: no block.*test_fused_sum.py"):
        dataflow.execute(plan, [x], workers=2)


def _tanh_loop(parallel_iterations, iterations=6):
    x = tf.placeholder(tf.float32, shape=[1 << 20])
    body = lambda i, acc: (i + 1, acc + al.reduce_sum(al.tanh(x * al.cast(i, al.float32))))  # noqa: E731
    return x, tf.while_loop(lambda i, acc: i < iterations, body, (tf.constant(0), tf.constant(0.0)),
                            parallel_iterations=parallel_iterations)[1]


def _peak(run):
    run()
    tracemalloc.start()  # numpy reports its arrays to tracemalloc
    try:
        return run(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_ten_iterations_in_flight_hold_what_the_compiled_loop_holds_and_agree_with_one_at_a_time():
    """The memory-bound loop of the benchmarks: iterations overlap on two workers, each holding one block."""
    data = np.random.default_rng(0).random(1 << 20, dtype=np.float32)
    peaks, values = {}, {}
    for parallel_iterations in (1, 10):
        with tf.Graph().as_default() as graph:
            x, total = _tanh_loop(parallel_iterations)
            with tf.Session() as sess:
                values[parallel_iterations], peaks[parallel_iterations] = _peak(lambda: sess.run(total, {x: data}))
    lowered = graph.lowered()
    unfused = dataflow.Plan(lowered, [lowered.values[total._value]], [lowered.values[x._value]], fuse_sums=False)
    assert not any(unfused.fused)
    (values["kernel by kernel"],), peaks["kernel by kernel"] = _peak(lambda: dataflow.execute(unfused, [data]))
    compiled = al.function(lambda x: _tanh_loop_values(x), autograph=False)
    expected, peaks["compiled"] = _peak(lambda: compiled(data).numpy())
    for value in values.values():
        assert_identical(expected, value)
    # A block of half the array per worker: one array, as the compiled loop's `x * i` (tracemalloc also counts
    # Python's own objects, a few kilobytes more in the pool).
    assert peaks[10] < 1.01 * peaks["compiled"], peaks
    assert peaks["kernel by kernel"] >= data.nbytes, peaks  # the whole product x * i, one per worker at work


def _tanh_loop_values(x):
    body = lambda i, acc: (i + 1, acc + al.reduce_sum(al.tanh(x * al.cast(i, al.float32))))  # noqa: E731
    return al.while_loop(lambda i, acc: i < 6, body, (al.constant(0), al.constant(0.0)))[1]


def test_the_trace_shows_each_iterations_fused_run_as_one_box_named_after_its_kernels():
    with tf.Graph().as_default():
        x, total = _tanh_loop(10)
        metadata = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(total, {x: np.ones(1 << 20, np.float32)},
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
    trace = json.loads(tf.timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())
    boxes = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["args"]["op"] == "Mul+Tanh+Sum"]
    assert sorted(tuple(e["args"]["iteration"]) for e in boxes) == [(k,) for k in range(6)]
    assert boxes[0]["name"] == "while/body/mul+while/body/Tanh+while/body/Sum"


def _tanh_chain():
    x = _spread(N)
    graph = _graph(lambda x: al.reduce_sum(al.tanh(x * 2.0)), x)
    lowered = dataflow.lower(graph)
    plan = dataflow.Plan(lowered, lowered.outputs, lowered.inputs)
    (run,) = [run for run in plan.fused if run is not None]
    return run


def _kinds():
    """Inputs of several kinds for ``sum(tanh(x * c))``: dtypes, sizes, a layout the blocks cannot take."""
    x = _spread(N, np.float64, seed=3)
    return [("float32", [x.astype(np.float32), np.float32(0.5)], True),
            ("float64", [x, np.float64(0.25)], True),
            ("float64 by a float32", [x, np.float32(0.25)], True),  # its kind differs from float32's in x only
            ("float32, 0-d array", [x[:N // 2].astype(np.float32), np.asarray(np.float32(2))], True),
            ("float64, rank 2", [x[:400 * 300].reshape(400, 300), np.float64(1.5)], True),
            ("strided", [x[::2], np.float64(0.5)], False),
            ("float16", [np.tanh(x).astype(np.float16), np.float16(0.5)], False)]


def _whole(values):
    return np.add.reduce(np.tanh(np.multiply(*values)), axis=None)


def test_decisions_are_kept_per_kind_of_inputs_whatever_the_order():
    for order in (1, -1):
        run = _tanh_chain()
        for _ in range(2):
            for name, values, fuses in _kinds()[::order]:
                results = run(values)
                assert (results is not None) == fuses, name
                if fuses:
                    assert np.asarray(results[0]).tobytes() == np.asarray(_whole(values)).tobytes(), name
        assert len(run.decisions) == len(_kinds())


def test_decisions_from_threads_at_once_and_past_the_most_kept():
    run = _tanh_chain()
    kinds = _kinds()
    failures, barrier = [], threading.Barrier(len(kinds), timeout=20)

    def caller(name, values, fuses):
        barrier.wait()
        for _ in range(5):
            results = run(values)
            if (results is not None) != fuses or (fuses and np.asarray(results[0]).tobytes()
                                                  != np.asarray(_whole(values)).tobytes()):
                failures.append(name)

    threads = [threading.Thread(target=caller, args=kind) for kind in kinds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    x = _spread(N, np.float64, seed=4)
    for size in range(fused.MOST_SIGNATURES + 4):  # more kinds than are kept: the oldest are decided again
        values = [x[:N - 37 * size], np.float64(0.75)]
        assert np.asarray(run(values)[0]).tobytes() == np.asarray(_whole(values)).tobytes()
        assert len(run.decisions) <= fused.MOST_SIGNATURES
