"""The reference interpreter and the compiled executor agree on every case of
`op_cases_extended` (as tests/execute/test_interpreter.py checks for `op_cases`).

A random op draws new numbers on every run, so for graphs with random ops
each executor starts from the same saved stream states.
"""

import numpy as np
import pytest

import autoloop as al
from autoloop.execute import CompiledGraph
from autoloop.execute.interpreter import interpret
from autoloop.ops.random_ops import RandomStream
from op_cases_extended import CASES
from tests.execute.equivalence import assert_identical, outcome


def _streams(graph):
    return [value for node in graph.walk() for value in node.attrs.values() if isinstance(value, RandomStream)]


@pytest.mark.parametrize("case", CASES, ids=[f"{case.op}-{case.id}" for case in CASES])
def test_interpreter_and_compiled_executor_agree(case):
    graph = al.function(case.fn, autograph=False).get_concrete_function(*case.args).graph
    arrays = [np.asarray(a)[()] if np.ndim(a) == 0 else np.asarray(a) for a in case.args]
    streams = _streams(graph)
    saved = [stream.state for stream in streams]
    expected = outcome(lambda: interpret(graph, *arrays))
    for stream, state in zip(streams, saved):
        stream.state = state
    found = outcome(lambda: CompiledGraph(graph)(*arrays))
    assert expected.error is None and found.error is None, (expected.error, found.error)
    assert (found.stdout, found.stderr) == (expected.stdout, expected.stderr)
    for position, (a, b) in enumerate(zip(expected.results, found.results)):
        assert_identical(a, b, f"output {position}")
    if streams:  # and without the restart, the second run draws new numbers
        again = outcome(lambda: CompiledGraph(graph)(*arrays))
        assert any(np.asarray(a).tobytes() != np.asarray(b).tobytes()
                   for a, b in zip(found.results, again.results))
