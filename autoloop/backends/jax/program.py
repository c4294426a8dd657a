"""`JaxProgram`: a graph compiled by XLA once per input signature, called like `CompiledGraph`.

    program = JaxProgram(graph)
    outputs = program(*input_arrays)        # a tuple of numpy values (or JAX arrays)

The graph is analysed once (`ProgramFacts`: the checks, the lists' buffer
layouts, the loops' bounds), then lowered under ``jax.jit``
(`autoloop.backends.jax.lowering`): JAX traces it once per input shape,
dtype and placement, and XLA compiles that trace.

Inputs may be numpy values or JAX arrays; a JAX array stays where it lives
(a device, or sharded over several), and the computation runs there
(``jax.jit`` follows its inputs' placement). Results are numpy values by
default, or the JAX arrays themselves with ``jax_arrays=True`` (no copy;
they keep the placement XLA gave them). A list (a TensorArray's flow)
comes back as its elements; a stacked list whose length is known only
at run time comes back trimmed to that length.

A program that reads or writes variables (`autoloop.Variable`) takes their
values as extra inputs and returns the new values of those it updates,
which are written back after the call (`autoloop.backends.jax.variables`).

A program that uses 64-bit values (int64, float64) is traced and run with
JAX's 64-bit mode on for the call only (``jax.enable_x64``), so autoloop's
dtypes are kept exactly whatever the process-wide JAX setting is.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from autoloop.backends.jax import buffers, checks, growth, interrupts, variables
from autoloop.backends.jax.analysis import ProgramFacts
from autoloop.backends.jax.marks import unsupported
from autoloop.errors import BackendError, raise_at

_registered = threading.Lock()
_ready = False


def _register_pytrees() -> None:
    global _ready
    with _registered:
        if not _ready:
            checks.register_pytree()
            buffers.register_pytrees()
            _ready = True


class JaxProgram:
    """`graph` lowered to JAX and compiled by XLA per input signature; see the module docstring."""

    def __init__(self, graph, jax_arrays: bool = False):
        _register_pytrees()
        self.graph = graph
        self.jax_arrays = jax_arrays
        # The provisional capacities of the loops nothing else bounds (`growth`), kept as they grow, so the next
        # call starts at the grown ones; None where a second run could be seen (the loops must be bounded).
        self._capacities: dict | None = {} if growth.rerunnable(graph) else None
        self._growing = threading.Lock()
        self._compile()

    def _compile(self) -> None:
        """The program's facts and jitted function, for the capacities so far."""
        import jax
        graph = self.graph
        try:
            _refuse_list_inputs(graph)
            self.facts = ProgramFacts(graph, self._capacities)
        except BackendError as error:
            _raise_at_users_line(error)
        self._x64 = self.facts.uses_64_bits
        self._effects = self.facts.has_effects
        # One output and no checks (the common program) is returned bare, not in a 1-tuple: JAX then has
        # no tuple to flatten and build on each call (0.1 µs of a 5 µs call).
        # Variables: extra inputs, and the updated ones extra outputs (`autoloop.backends.jax.variables`)
        self._cells, self._written = self.facts.cells, self.facts.written_cells
        self._bare = len(graph.outputs) == 1 and not self.facts.reports_errors and not self._written
        # A new function per compile: jax.jit's trace cache would take the bound method for the old one.
        self._jitted = jax.jit(functools.partial(self._lowered, self.facts))
        # A program with a watched loop and one plain scalar result runs its quick form first, which gives up
        # (returns the marker) where a loop would run long (`autoloop.backends.jax.interrupts`).
        self._marker = self._quick = None
        output = graph.outputs[0] if self._bare else None
        if self.facts.watch is not None and output is not None and output.shape.rank == 0 and not self.jax_arrays:
            self._marker = interrupts.give_up_marker(output.dtype.as_numpy_dtype)
            if self._marker is not None:
                self._quick = jax.jit(functools.partial(self._lowered, self.facts, watching=False))

    def _lowered(self, facts, *inputs, watching=True):
        from autoloop.backends.jax.lowering import Lowering
        count = len(self.graph.inputs)
        lowering = Lowering(facts, inputs[count:], watching)
        outputs = lowering.run_graph(self.graph, list(inputs[:count]))
        if not watching:  # the quick form: the marker where a loop gave up (its only sites are the loops')
            import jax.numpy as jnp
            return jnp.where(lowering.errors.ok, outputs[0], self._marker)
        if self._bare:
            return outputs[0]
        outputs = (*outputs, *(lowering.variables.read(cell) for cell in self._written))
        errors = lowering.errors if facts.reports_errors else None
        return tuple(outputs) if errors is None else (*outputs, (errors.code, errors.witness))

    def lower(self, *inputs):
        """The ``jax.stages.Lowered`` of the program for these inputs (for inspecting the HLO)."""
        import jax
        try:
            with jax.enable_x64(self._x64):
                return self._jitted.lower(*inputs)
        except BackendError as error:
            _raise_at_users_line(error)

    def jaxpr(self, *inputs):
        """The program for these inputs as JAX's intermediate form (what ``autoloop graph --backend jax`` shows)."""
        import jax
        try:
            with jax.enable_x64(self._x64):
                return jax.make_jaxpr(functools.partial(self._lowered, self.facts))(*inputs)
        except BackendError as error:
            _raise_at_users_line(error)

    def __call__(self, *inputs):
        if self.facts.watch is not None:  # a loop that may run long: Ctrl-C stops it
            return self.facts.watch.run(self._call, inputs)
        return self._call(*inputs)

    def _call(self, *inputs):
        import jax
        if self._cells:
            inputs = inputs + variables.host_values(self._cells)
        facts, jitted = self.facts, self._jitted  # this run's, should another thread grow a capacity meanwhile
        try:
            if self._x64:
                with jax.enable_x64(True):
                    outputs = jitted(*inputs)
            else:
                outputs = jitted(*inputs)
        except BackendError as error:  # from lowering, while JAX traced
            _raise_at_users_line(error)
        if self._bare:
            outputs = (outputs,)
        if self._effects:
            jax.effects_barrier()  # prints and host calls done before we return, as on numpy
        if facts.reports_errors:
            outputs, (code, witness) = outputs[:-1], outputs[-1]
            try:
                checks.raise_failure(facts.sites, code, witness)
            except growth.CapacityOutgrown as outgrown:  # nothing else was seen of this run: run it again
                with self._growing:
                    if self.facts is facts:  # not grown by another thread meanwhile
                        self._capacities[outgrown.loop] *= 2
                        self._compile()
                return self._call(*inputs)
        if self._written:
            outputs, new_values = outputs[:-len(self._written)], outputs[-len(self._written):]
            variables.write_back(self._written, new_values)
        return tuple(self._result(value) for value in outputs)

    def runner(self, finish=None, one=None):
        """``run(inputs)``: the program on a sequence of inputs, its tuple of outputs given to `finish`
        (as `CompiledGraph.runner`; `autoloop.function` packs its result tensors there). `one`, if
        given, takes the place of `finish` for a program with one output: it is given that output alone
        (a numpy value, rank 0 as a numpy scalar; with ``jax_arrays``, the JAX array).

        A program with no checks, effects, lists or 64-bit values (most loops) gets a run written out for
        it: each Python call saved is about 0.1 µs of a 6 µs call of a small loop.
        """
        if finish is None:
            return lambda inputs: self(*inputs)
        if one is not None and len(self.graph.outputs) == 1:
            finish = _one_of(one)
        if self._x64 or self._effects or self._cells or self.facts.reports_errors or \
                any(v.dtype.name == "variant" for v in self.graph.outputs):
            return lambda inputs: finish(self(*inputs))
        jitted, result = self._jitted, self._result
        if self._bare and one is not None:
            return self._one_runner(one)
        # np.asarray: a copy to the host; rank 0 stays an array (finish makes it a scalar, as `eager` does)
        convert = (lambda value: value) if self.jax_arrays else np.asarray
        # A bare output (`_bare`) is one value, not a tuple of them: a result mixing Python values with one
        # tensor has one graph output but is packed by `finish`, not handed over as `one`.
        bare = self._bare

        def run(inputs):
            try:
                outputs = jitted(*inputs)
            except BackendError as error:
                _raise_at_users_line(error)
            if bare:
                outputs = (outputs,)
            return finish([result(v) if hasattr(v, "refuse") else convert(v) for v in outputs])
        return self._watched(run)

    def _watched(self, run):
        """`run` (a `runner`'s run), stopped by Ctrl-C where the program has a loop that may run long."""
        watch = self.facts.watch
        return run if watch is None else lambda inputs: watch.run(run, (inputs,))

    def _one_runner(self, one):
        """`runner` of the common program, one plain output (see there), written out per kind of result:
        the by-hand JAX call it is measured against has no Python around it. Watched (`_watched`)."""
        jitted, result = self._jitted, self._result
        if self.jax_arrays:
            def run(inputs):
                try:
                    value = jitted(*inputs)
                except BackendError as error:  # from lowering, while JAX traced
                    _raise_at_users_line(error)
                return one(result(value) if hasattr(value, "refuse") else value)
        elif self.graph.outputs[0].shape.rank == 0:  # a scalar is never a padded stack (`buffers.Padded`)
            def run(inputs):
                try:
                    value = jitted(*inputs)
                except BackendError as error:
                    _raise_at_users_line(error)
                return one(np.asarray(value)[()])
            if self._quick is not None:
                return self._quick_runner(one, run)
        else:
            def run(inputs):
                try:
                    value = jitted(*inputs)
                except BackendError as error:
                    _raise_at_users_line(error)
                return one(result(value) if hasattr(value, "refuse") else np.asarray(value))
        return self._watched(run)

    def _quick_runner(self, one, run_watched):
        """`runner`'s run of a program with a quick form (see `__init__`): the quick program, and `run_watched`
        (the watched program's run) where it gave up, or where the last watched call ran long. The watched
        call listens for Ctrl-C from its start: its program may be compiled first (`Watch.run`)."""
        quick, watch, marker = self._quick, self.facts.watch, self._marker

        def watched(inputs):
            return watch.run(run_watched, (inputs,), listen=True)

        def run(inputs):
            if watch.ran_long:  # this call may well run long too: the quick form would only give up
                return watched(inputs)
            try:
                value = np.asarray(quick(*inputs))[()]
            except BackendError as error:  # from lowering, while JAX traced
                _raise_at_users_line(error)
            except KeyboardInterrupt:  # Ctrl-C while the quick program ran (Python's handler raises it here)
                watch.raise_interrupt(watch.first_loop)
            if value == marker:  # a loop gave up (or the result is the marker): the watched program answers
                return watched(inputs)
            return one(value)
        return run

    def _result(self, value):
        if isinstance(value, buffers.Buffer):
            return value.elements()
        if isinstance(value, buffers.Padded):
            value = value.trimmed()
        if self.jax_arrays:
            return value
        array = np.asarray(value)
        return array[()] if array.ndim == 0 else array


def _one_of(one):
    """`finish` for a program with one output, from `runner`'s `one`."""
    return lambda outputs: one(outputs[0])


def _raise_at_users_line(error: BackendError):
    """Raise `error` from the user's line (where known), without the frames, notes and cause that JAX adds
    to errors raised while it traces: what XLA cannot compile is autoloop's error, never a JAX traceback."""
    notes = [note for note in getattr(error, "__notes__", ()) if "JAX" not in note]
    if hasattr(error, "__notes__"):
        error.__notes__ = notes
        if not notes:
            del error.__notes__
    error.__cause__, error.__suppress_context__ = None, True
    raise_at(error.with_traceback(None), getattr(error, "location", None))


def _refuse_list_inputs(graph) -> None:
    """Lists come into a program only as the values a loop saved for a gradient an eager tape takes."""
    from autoloop.dtypes import variant
    if any(value.dtype is variant for value in graph.inputs):
        saving = next((n for n in graph.walk() if n.op == "StackGet"), None)
        raise unsupported(saving, "a gradient that an eager GradientTape takes of a backend='jax' function whose "
                                  "loops save values", (
            "the saved lists would have to leave the compiled program. Take the gradient inside the function "
            "(autoloop.gradients, or a GradientTape inside it), or use backend='numpy'"))


def compile_graph(graph, jax_arrays: bool = False) -> JaxProgram:
    """`graph` compiled for XLA (the ``"jax"`` entry of `autoloop.backends.BACKENDS`)."""
    return JaxProgram(graph, jax_arrays=jax_arrays)


__all__ = ["JaxProgram", "compile_graph"]
