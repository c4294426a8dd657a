"""Run one graph on the reference interpreter and on every executor, and compare.

`assert_equivalent(graph, arrays, ...)` requires identical outcomes from the
compiled executor and from the dataflow executor (the graph lowered to
Enter/Merge/Switch/NextIteration/Exit, its loops run as frames once for
each `PARALLEL_ITERATIONS`, and once with every loop compiled into a node):
the same outputs bit for bit (dtype, shape and bytes; a TensorArray's
elements one by one), or the same error type and message, and the same text
printed on stdout and stderr. It is the check every executor must pass
against the interpreter.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any, NamedTuple

import numpy as np

from autoloop.control_flow.array_elements import ArrayElements
from autoloop.execute import CompiledGraph
from autoloop.execute import dataflow
from autoloop.execute.interpreter import interpret
from autoloop.ir import control_flow

PARALLEL_ITERATIONS = (1, 2, 10)  # the dataflow executor's results must not depend on it


class Outcome(NamedTuple):
    results: Any
    error: BaseException | None
    stdout: str
    stderr: str


def outcome(run) -> Outcome:
    """What `run()` returns or raises, and what it prints."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return Outcome(run(), None, out.getvalue(), err.getvalue())
        except Exception as error:  # noqa: BLE001 - compared below
            return Outcome(None, error, out.getvalue(), err.getvalue())


def assert_equivalent(graph, *runs) -> list[Outcome]:
    """The interpreter and every executor agree on `graph` for each list of input arrays in `runs`.

    Returns the compiled executor's outcome of each run.
    """
    compiled = CompiledGraph(graph)
    executors = [("the compiled executor", compiled)]
    for parallel_iterations in PARALLEL_ITERATIONS if lowerable(graph) else ():
        lowered = dataflow.lower(graph, parallel_iterations)
        dataflow.verify(lowered)
        executors.append((f"the dataflow executor (parallel_iterations={parallel_iterations}, loops as frames)",
                          lambda *arrays, lowered=lowered: dataflow.call(lowered, *arrays, compile_loops=False)))
    if lowerable(graph) and any(node.op == "While" for node in graph.walk()):  # compiled loops: one run will do
        executors.append(("the dataflow executor (loops compiled)",
                          lambda *arrays, lowered=lowered: dataflow.call(lowered, *arrays, compile_loops=True)))
    found_all = []
    for arrays in runs:
        expected = outcome(lambda: interpret(graph, *arrays))
        for position, (name, executor) in enumerate(executors):
            found = outcome(lambda: executor(*arrays))
            assert_same_outcome(expected, found, f"graph {graph.name!r} on {arrays!r}, {name}")
            if position == 0:
                found_all.append(found)
    return found_all


def lowerable(graph) -> bool:
    """Whether every control-flow op of `graph` has a dataflow lowering (a test's toy op may not)."""
    return all(control_flow.lookup(node.op) is None or control_flow.lookup(node.op).lower is not None
               for node in graph.walk())


def assert_same_outcome(expected: Outcome, found: Outcome, where: str) -> None:
    assert type(found.error) is type(expected.error), (
        f"{where}: the interpreter raised {expected.error!r}, the executor {found.error!r}")
    assert str(found.error) == str(expected.error), where
    assert (found.stdout, found.stderr) == (expected.stdout, expected.stderr), where
    if expected.error is None:
        assert len(found.results) == len(expected.results), where
        for position, (a, b) in enumerate(zip(expected.results, found.results)):
            assert_identical(a, b, f"{where}, output {position}")


def assert_identical(expected, found, where: str = "") -> None:
    """Equal values bit for bit, with equal dtypes and shapes (NaNs included)."""
    if isinstance(expected, ArrayElements):
        assert isinstance(found, ArrayElements) and len(found) == len(expected), where
        for index, (a, b) in enumerate(zip(expected, found)):
            assert (a is None) == (b is None), f"{where}: element {index} written in one run only"
            if a is not None:
                assert_identical(a, b, f"{where}, element {index}")
        return
    a, b = np.asarray(expected), np.asarray(found)
    assert (a.dtype, a.shape) == (b.dtype, b.shape), f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    assert a.tobytes() == b.tobytes(), f"{where}: {a!r} vs {b!r}"
