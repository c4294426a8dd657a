"""Running a graph on the numpy executor and on the JAX backend, and comparing what they do.

`DifferentialProgram(graph)` is called like a compiled graph. Each call runs
the numpy executor and then the JAX backend on the same inputs, and asserts
that they agree (`assert_agree`): the same outputs (floats within rounding,
everything else exactly, a TensorArray's elements one by one), or the same
error type and message, and the same text printed. Random ops draw the same
numbers in both runs (their streams are rewound in between). It returns (or
raises) what the JAX backend gave, so a test written for the numpy executor
checks the JAX backend as well (the corpus fixture in ``tests/conftest.py``).
A graph that XLA cannot compile (a `BackendError`, what the JAX backend
refuses on purpose) skips the test with that error as the reason.
"""

from __future__ import annotations

import contextlib
import io
import sys

import numpy as np
import pytest

from autoloop.control_flow.array_elements import ArrayElements
from autoloop.errors import BackendError
from autoloop.execute import CompiledGraph

FLOAT_TOLERANCE = {np.dtype(np.float16): (2e-3, 2e-3), np.dtype(np.float32): (2e-5, 2e-6),
                   np.dtype(np.float64): (1e-9, 1e-12)}


class Run:
    """What one executor did: `results` or `error`, and the text it printed."""

    def __init__(self, run):
        out, err = io.StringIO(), io.StringIO()
        self.results, self.error = None, None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                self.results = run()
            except Exception as error:  # noqa: BLE001 - compared, then raised again
                self.error = error
        self.stdout, self.stderr = out.getvalue(), err.getvalue()

    def replay(self):
        """Print what was printed, then return or raise what was."""
        sys.stdout.write(self.stdout)
        sys.stderr.write(self.stderr)
        if self.error is not None:
            raise self.error
        return self.results


class DifferentialProgram:
    """A graph run on numpy and JAX per call; see the module docstring."""

    def __init__(self, graph, compile_for_jax):
        self.graph = graph
        self.numpy = CompiledGraph(graph)
        self._compile_for_jax = compile_for_jax
        self._jax = None

    def jax(self, *arrays):
        """The JAX backend's run, compiled on first use (what it cannot compile is then this call's error)."""
        if self._jax is None:
            self._jax = self._compile_for_jax(self.graph)
        return self._jax(*arrays)

    def __getattr__(self, name):
        """What a test inspects of the compiled graph (its generated ``source``) is the numpy executor's."""
        return getattr(self.__dict__["numpy"], name)

    def runner(self, finish=None, one=None):
        """``run(inputs)``, as `JaxProgram.runner`."""
        if one is not None and len(self.graph.outputs) == 1:
            return lambda inputs: one(self(*inputs)[0])
        return lambda inputs: self(*inputs) if finish is None else finish(self(*inputs))

    def __call__(self, *arrays):
        streams = _random_streams(self.graph)
        saved = [stream.state for stream in streams]
        expected = Run(lambda: self.numpy(*[np.asarray(a)[()] if np.ndim(a) == 0 else np.asarray(a)
                                            for a in arrays]))
        for stream, state in zip(streams, saved):
            stream.state = state
        found = Run(lambda: self.jax(*arrays))
        if isinstance(found.error, BackendError):
            what = str(found.error).split(" (at ")[0]
            pytest.skip(f"XLA cannot compile this graph (a BackendError, checked in tests/backends): {what}")
        assert_agree(expected, found, f"graph {self.graph.name!r}")
        return found.replay()


def _random_streams(graph) -> list:
    from autoloop.ops.random_ops import RandomStream
    return [node.attrs["stream"] for node in graph.walk() if isinstance(node.attrs.get("stream"), RandomStream)]


def assert_agree(expected: Run, found: Run, where: str) -> None:
    """The two runs did the same thing; see the module docstring."""
    assert type(found.error) is type(expected.error), (
        f"{where}: numpy {'raised ' + repr(expected.error) if expected.error else 'succeeded'}, "
        f"JAX {'raised ' + repr(found.error) if found.error else 'succeeded'}")
    if expected.error is not None:
        assert str(found.error) == str(expected.error), f"{where}: {found.error} vs {expected.error}"
    assert found.stdout == expected.stdout, f"{where}: printed {found.stdout!r}, numpy {expected.stdout!r}"
    assert found.stderr == expected.stderr, f"{where}: printed {found.stderr!r}, numpy {expected.stderr!r}"
    if expected.error is None:
        assert len(found.results) == len(expected.results), where
        for position, (a, b) in enumerate(zip(expected.results, found.results)):
            assert_close(a, b, f"{where}, output {position}")


def assert_close(expected, found, where: str = "") -> None:
    """Equal dtypes and shapes; floats equal within rounding, other values exactly."""
    if isinstance(expected, ArrayElements | list):
        assert isinstance(found, ArrayElements | list) and len(found) == len(expected), where
        for index, (a, b) in enumerate(zip(expected, found)):
            if a is not None:  # numpy leaves an unwritten element None; XLA's buffer holds zeros there
                assert_close(a, b, f"{where}, element {index}")
        return
    a, b = np.asarray(expected), np.asarray(found)
    assert (a.dtype, a.shape) == (b.dtype, b.shape), f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    if a.dtype.kind in "fc":
        rtol, atol = FLOAT_TOLERANCE.get(a.dtype, (1e-6, 1e-6))
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(b, a, err_msg=where)
