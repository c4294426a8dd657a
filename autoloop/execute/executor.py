"""`CompiledGraph`: a graph compiled once, called many times.

    compiled = CompiledGraph(graph)
    outputs = compiled(*input_arrays)     # a tuple of numpy values

A failure while running names the op and the user's line that created it,
and its traceback ends in a frame at that line. Errors that are the user's
program speaking (a failed ``assert``, an ``UnboundLocalError`` for a
variable no path assigned, autoloop's own errors) keep their type; numpy
failures become `InvalidArgumentError`.
"""

from __future__ import annotations

import itertools
import linecache
import weakref

import numpy as np

from autoloop.errors import AutoloopError, InvalidArgumentError, raise_at
from autoloop.execute.codegen import generate
from autoloop.ir.graph import Graph
from autoloop.ops.location import format_location
from autoloop.shapes import TensorShape

_serial = itertools.count()


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
        try:
            with np.errstate(all="ignore"):
                return self._run(*inputs)
        except Exception as error:
            self._reraise(error)

    def _reraise(self, error: Exception):
        node = self._failing_node(error.__traceback__)
        if node is None:
            raise error
        location = node.location
        if isinstance(error, InvalidArgumentError):
            # A kernel's own report (a TensorArray index out of range): keep its words, add the op and line.
            message = (f"{node.op} (node {node.name}) failed while running: {error}. "
                       f"The op was created at {format_location(location)}.")
            raise_at(type(error)(message), location)  # a subclass (DivisionByZeroError) stays one
        if isinstance(error, AutoloopError | AssertionError | UnboundLocalError):
            error.__traceback__ = None
            raise_at(error, location)
        message = (f"{node.op} (node {node.name}) failed while running: {type(error).__name__}: {error}. "
                   f"The op was created at {format_location(location)}.")
        raise_at(InvalidArgumentError(message), location)

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
