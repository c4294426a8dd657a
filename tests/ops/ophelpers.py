"""Helpers for the op tests: run a function eagerly or traced, compare with numpy.

Imported by the test modules (this directory is on ``sys.path`` under pytest).
"""

from __future__ import annotations

import numpy as np

import autoloop
from autoloop import nest
from autoloop.execute import CompiledGraph
from autoloop.ir import context
from autoloop.ir.graph import Graph
from autoloop.ops.dispatch import graph_value, verify
from autoloop.tensor import Tensor


def to_numpy(structure):
    """Every Tensor in `structure` as its numpy value."""
    return nest.map_structure(lambda t: t.numpy() if isinstance(t, Tensor) else t, structure)


def run_eager(fn, *args):
    """`fn` on eager tensors made from the numpy `args`; numpy results."""
    return to_numpy(fn(*[autoloop.constant(a) for a in args]))


def run_traced(fn, *args):
    """`fn` traced into a graph (no conversion) and run on the compiled executor; numpy results."""
    return to_numpy(autoloop.function(fn, autograph=False)(*args))


def run_checked(fn, *args):
    """Like `run_traced`, with the graph verified (every node's shape rule re-run) and
    run on an executor that checks every kernel's dtype and shape against what
    tracing inferred. Returns (numpy results, the graph)."""
    concrete = autoloop.function(fn, autograph=False).get_concrete_function(*args)
    verify(concrete.graph)
    compiled = CompiledGraph(concrete.graph, check=True)
    arrays = [np.asarray(a)[()] if np.ndim(a) == 0 else np.asarray(a) for a in args]
    results = compiled(*arrays)
    return results, concrete.graph


def trace_specs(fn, specs):
    """`fn` traced on placeholders of ``(dtype, shape)`` `specs`: (graph, flat symbolic results).

    The graph's outputs are set, so ``CompiledGraph(graph)`` runs it, and it
    has passed the verifier.
    """
    graph = Graph("probe")
    with context.building(graph):
        inputs = [Tensor(value=graph.add_input(dtype, shape)) for dtype, shape in specs]
        results = nest.flatten(fn(*inputs))
        graph.outputs = [graph_value(graph, t) for t in results]
        symbolic = [Tensor(value=v) for v in graph.outputs]
    verify(graph)
    return graph, symbolic


def assert_same(actual, expected):
    """Equal values, dtypes and shapes (floats to float32 precision)."""
    if isinstance(expected, list | tuple):
        assert isinstance(actual, list | tuple) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype}, expected {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape}, expected {expected.shape}"
    if actual.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=2e-6, atol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)
