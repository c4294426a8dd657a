"""`CompiledGraph`: a graph compiled once, called many times.

    compiled = CompiledGraph(graph)
    outputs = compiled(*input_arrays)     # a tuple of numpy values

A failure while running names the op and the user's line that created it,
and its traceback ends in a frame at that line (`autoloop.execute.errors`,
shared with the reference interpreter). A `KeyboardInterrupt` goes on as it
is, carrying that line as ``autoloop_location``.
"""

from __future__ import annotations

import itertools
import linecache
import weakref

import numpy as np

from autoloop.execute.codegen import generate
from autoloop.execute.errors import raise_for_node
from autoloop.ir.graph import Graph
from autoloop.shapes import TensorShape

_serial = itertools.count()


class _Errstate:
    """numpy 1.x: the error state set and reset through `np.errstate` (numpy 2 has a context variable)."""

    @staticmethod
    def set(_ignored):
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    @staticmethod
    def reset(state):
        state.__exit__(None, None, None)


try:  # numpy >= 2 keeps the floating-point error state in a context variable
    from numpy._core.umath import _extobj_contextvar as _ERROR_STATE, _make_extobj
    _IGNORE_ALL = _make_extobj(all="ignore")
except ImportError:
    _ERROR_STATE, _IGNORE_ALL = _Errstate, None


class CompiledGraph:
    """`graph` as a Python callable; `source` is the generated code."""

    def __init__(self, graph: Graph, check: bool = False):
        self.graph = graph
        gen = generate(graph, check=check)
        self.source = "\n".join(gen.lines) + "\n"
        self.filename = f"<autoloop graph {graph.name} #{next(_serial)}>"
        self._line_nodes = gen.line_nodes
        namespace = dict(gen.namespace, _check=_check_value)
        # Registered so tracebacks and debuggers can show the generated code.
        linecache.cache[self.filename] = (len(self.source), None, self.source.splitlines(True), self.filename)
        weakref.finalize(self, linecache.cache.pop, self.filename, None)  # no growth per trace
        exec(compile(self.source, self.filename, "exec"), namespace)
        self._run = namespace["run"]

    def __call__(self, *inputs):
        # np.errstate(all="ignore") costs about 0.8 µs a call; setting numpy's error state to a
        # prebuilt value costs 0.1 µs and is as thread-safe (a context variable).
        token = _ERROR_STATE.set(_IGNORE_ALL)
        try:
            return self._run(*inputs)
        except Exception as error:
            self._reraise(error)
        except KeyboardInterrupt as interrupt:
            # Ctrl-C in a long graph loop: remember the user's line of the op that was running
            # (the innermost graph's, when graphs nest), for whoever reports the interruption.
            if getattr(interrupt, "autoloop_location", None) is None:
                node = self._failing_node(interrupt.__traceback__)
                interrupt.autoloop_location = node.location if node is not None else None
            raise
        finally:
            _ERROR_STATE.reset(token)

    def _reraise(self, error: Exception):
        node = self._failing_node(error.__traceback__)
        if node is None:
            raise error
        raise_for_node(node, error)

    def _failing_node(self, traceback):
        node = None
        while traceback is not None:
            if traceback.tb_frame.f_code.co_filename == self.filename:
                node = self._line_nodes.get(traceback.tb_lineno, node)
            traceback = traceback.tb_next
        return node


def _check_value(array, value) -> None:
    """Checked mode: the kernel's result matches what tracing inferred."""
    if not isinstance(array, np.ndarray | np.generic):
        return  # a TensorArray's list
    if array.dtype != value.dtype.as_numpy_dtype:
        raise AssertionError(f"{value.name}: kernel gave dtype {array.dtype}, inferred {value.dtype.name}")
    if not TensorShape(np.shape(array)).is_subtype_of(value.shape):
        raise AssertionError(f"{value.name}: kernel gave shape {np.shape(array)}, inferred {value.shape}")
