"""`CompiledGraph`: a graph compiled once, called many times.

    compiled = CompiledGraph(graph)
    outputs = compiled(*input_arrays)     # a tuple of numpy values

A failure while running names the op and the user's line that created it,
and its traceback ends in a frame at that line (`autoloop.execute.errors`,
shared with the reference interpreter).
"""

from __future__ import annotations

import itertools
import linecache

import numpy as np

from autoloop.execute.codegen import generate
from autoloop.execute.errors import raise_for_node
from autoloop.ir.graph import Graph
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
