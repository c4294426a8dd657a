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

from autoloop.errors import raise_at
from autoloop.execute.codegen import generate, variant
from autoloop.execute.errors import raise_for_node
from autoloop.execute.expressions import locate
from autoloop.ir.graph import Graph
from autoloop.ops.error_state import ignore_errors, restore_errors
from autoloop.shapes import TensorShape

_serial = itertools.count()


class CompiledGraph:
    """`graph` as a Python callable; `source` is the generated code."""

    def __init__(self, graph: Graph, check: bool = False):
        self.graph = graph
        self._gen = generate(graph, check=check)
        self.source = "\n".join(self._gen.lines) + "\n"
        self.filename = f"<autoloop graph {graph.name} #{next(_serial)}>"
        self._line_nodes = self._gen.line_nodes
        self._line_spans = self._gen.line_spans
        # Registered so tracebacks and debuggers can show the generated code.
        linecache.cache[self.filename] = (len(self.source), None, self.source.splitlines(True), self.filename)
        weakref.finalize(self, linecache.cache.pop, self.filename, None)  # no growth per trace
        self._generated = None

    @property
    def generated(self):
        """The generated function itself, ``run(p0, p1, ...)``, complete: numpy's error state and the
        failure mapping are in it. Compiled on first use: `autoloop.function` calls the variant its
        `runner` writes, and a first call should compile one function, not two."""
        if self._generated is None:
            self._generated = self._compile(self.source)
        return self._generated

    def _compile(self, source: str, **names):
        """The ``run`` of `source` (a variant of this graph's code: same body, same lines), with `names`."""
        namespace = dict(self._gen.namespace, _check=_check_value, _ignore=ignore_errors, _restore=restore_errors,
                         _reraise=self.reraise, _locate=self.locate_interrupt, **names)
        exec(compile(source, self.filename, "exec"), namespace)
        return namespace["run"]

    def __call__(self, *inputs):
        return self.generated(*inputs)

    def runner(self, finish=None, one=None):
        """``run(inputs)``: the graph on a sequence of inputs, its tuple of outputs given to `finish`;
        `one`, if given and the graph has one output, is given that output alone instead (as the
        generated code computed it: rank 0 may be a 0-d array).

        numpy's errors are ignored while it runs, and a failure is mapped to
        its node (`reraise`, `locate_interrupt`). The run is the generated
        function itself, written for this entry point (`codegen.variant`):
        `autoloop.function`'s call of a cached trace makes one Python call
        here, and `finish` or `one` packs its result tensors (each Python call
        saved is 0.06 µs of a 1.3 µs call, more where the loop has evicted it
        from the caches).
        """
        if one is not None and len(self.graph.outputs) == 1:
            result, names = "one", {"_one": one}
        elif finish is not None:
            result, names = "finish", {"_finish": finish}
        else:
            result, names = "tuple", {}
        lines = variant(self._gen, inputs="sequence", result=result)
        return self._compile("\n".join(lines) + "\n", **names)

    def reraise(self, error: Exception):
        """Raise what `error`, raised by the generated code, becomes: the failing node's error."""
        node = self._failing_node(error.__traceback__)
        if node is None:
            raise error
        raise_for_node(node, error)

    def locate_interrupt(self, interrupt: KeyboardInterrupt) -> None:
        """Ctrl-C in a long graph loop: remember the user's line of the op that was running (the
        innermost graph's, when graphs nest) as ``autoloop_location``, for whoever reports it, and
        raise the interrupt on from that line."""
        if getattr(interrupt, "autoloop_location", None) is None:
            node = self._failing_node(interrupt.__traceback__)
            interrupt.autoloop_location = node.location if node is not None else None
            # raised on from the user's line, so that the traceback ends there, as on backend="jax"
            raise_at(interrupt.with_traceback(None), interrupt.autoloop_location)

    def _failing_node(self, traceback):
        """The node of the innermost frame of the generated code: its line's, or on a line holding
        several ops, the op whose columns hold the failing instruction's."""
        node = None
        while traceback is not None:
            if traceback.tb_frame.f_code.co_filename == self.filename:
                line = traceback.tb_lineno
                node = self._op_at(line, traceback) or self._line_nodes.get(line, node)
            traceback = traceback.tb_next
        return node

    def _op_at(self, line: int, traceback):
        spans = self._line_spans.get(line)
        position = _instruction_columns(traceback)
        if not spans or position is None:
            return None
        text = self.source.splitlines()[line - 1].encode()
        start, end = (len(text[:column].decode(errors="ignore")) for column in position)
        return locate(spans, start, end)


def _instruction_columns(traceback):
    """(start, end) byte columns of the instruction a traceback entry stopped at, or None (Python < 3.11)."""
    positions = getattr(traceback.tb_frame.f_code, "co_positions", None)
    if positions is None or traceback.tb_lasti < 0:
        return None
    position = next(itertools.islice(positions(), traceback.tb_lasti // 2, None), None)
    if position is None or position[2] is None or position[3] is None or position[0] != position[1]:
        return None
    return position[2], position[3]


def _check_value(array, value) -> None:
    """Checked mode: the kernel's result matches what tracing inferred."""
    if not isinstance(array, np.ndarray | np.generic):
        return  # a TensorArray's list
    if array.dtype != value.dtype.as_numpy_dtype:
        raise AssertionError(f"{value.name}: kernel gave dtype {array.dtype}, inferred {value.dtype.name}")
    if not TensorShape(np.shape(array)).is_subtype_of(value.shape):
        raise AssertionError(f"{value.name}: kernel gave shape {np.shape(array)}, inferred {value.shape}")
