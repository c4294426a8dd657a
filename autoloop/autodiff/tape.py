"""`GradientTape`: gradients of what ran inside a ``with`` block, eagerly or while tracing.

    x = autoloop.constant(3.0)
    with autoloop.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)          # 6.0

Eagerly the tape records the ops run inside the block that read a watched
tensor (or a tensor such an op produced), loops included
(`autoloop.autodiff.eager_tape`). Inside a traced function the same code
differentiates the graph: the tape remembers which nodes were traced
inside the block, and `gradient` runs `autoloop.gradients` on the paths
through them from the watched tensors. Either way only those ops count:
what ran before the block, or inside ``stop_recording()``, is a constant
to the tape, and so is a tensor that was not watched.

`jacobian` and `batch_jacobian` seed the same backward pass with each
entry of the target: vectorized over the rows, or in one loop
(`autoloop.autodiff.jacobian`).

A tape gives one `gradient` (or Jacobian) unless it is ``persistent=True``.

Variables (`autoloop.Variable`): a recording tape watches each trainable
float variable the block reads (``watch_accessed_variables=True``, the
default; ``tape.watch(v)`` otherwise), and ``tape.gradient(loss, v)`` is
the sum of the gradients of every read, in loops and branches too. The
tape gives each watched variable a *watch point*, a zero of its shape made
at the tape's level, and each read in the block becomes ``read + point``:
the gradient for the variable is the gradient for its point, which the
ordinary machinery sums over reads, iterations and branches.

    with autoloop.GradientTape() as tape:
        loss = w * w + 3 * w
    tape.gradient(loss, w)       # 2 * w + 3

A traced function that the block calls eagerly has no reads on the tape:
it is traced once more with its watch points as extra inputs
(`CallPoints`), and the recorded call differentiates them like arguments.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

import numpy as np

from autoloop import nest
from autoloop.autodiff import eager_tape, paths
from autoloop.autodiff.graph_backprop import graph_gradients, seed_for, value_in
from autoloop.autodiff.jacobian import UnconnectedGradients, fall_back, unconnected_option
from autoloop.autodiff.jacobian import batch_jacobian as batch_jacobian_rows, jacobian as jacobian_rows
from autoloop.ir import context
from autoloop.ops import recording
from autoloop.ops.creation_ops import ones, zeros, zeros_like
from autoloop.ops.dispatch import convert
from autoloop.tensor import Tensor


class GradientTape:
    """Records operations for reverse-mode differentiation; see the module docstring."""

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._graph = None  # the graph traced inside the block, or None eagerly
        self._tape = eager_tape.Tape()
        self._watched: list = []  # traced: watched graph values
        self._created: set = set()  # traced: ids of the nodes made while recording
        self._open = None  # traced: ids of the nodes that existed when recording (re)started
        self._recording = False
        self._used = False
        self._points: dict = {}  # variable -> its watch point (see the module docstring), in order of reads
        self._watched_variables: set = set()  # variables given to watch()
        self._partly_known: set = set()  # traced: variables read whose shape is partly known

    # -- recording ------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        if self._recording:
            raise ValueError("this GradientTape is already recording; a tape is entered once at a time")
        self._graph = context.current_graph()
        self._start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop()

    def _start(self):
        self._recording = True
        _recording_tapes().append(self)
        if self._graph is None:
            recording.start(self._tape)
        else:
            self._open = {id(n) for n in self._graph.nodes}

    def _stop(self):
        if not self._recording:
            return
        self._recording = False
        _recording_tapes().remove(self)
        if self._graph is None:
            recording.stop(self._tape)
        else:
            self._created |= {id(n) for n in self._graph.nodes} - self._open
            self._open = None

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """A block whose operations the tape does not record."""
        if not self._recording:
            raise ValueError("stop_recording() needs a tape that is recording (inside its with block)")
        self._stop()
        try:
            yield
        finally:
            self._start()

    def reset(self) -> None:
        """Forget everything recorded so far (keep recording if inside the block)."""
        old, self._tape = self._tape, eager_tape.Tape()
        self._watched, self._created, self._used = [], set(), False
        self._points, self._partly_known = {}, set()
        if self._recording and self._graph is None:
            stack = recording.active()
            stack[stack.index(old)] = self._tape
        if self._recording and self._graph is not None:
            self._open = {id(n) for n in self._graph.nodes}

    def watch(self, tensor: Any) -> None:
        """Make the tape track `tensor` (or every tensor in a nested structure)."""
        for leaf in nest.flatten(tensor):
            if _is_variable(leaf):
                self._watched_variables.add(leaf)
                continue
            leaf = _as_tensor(leaf)
            if self._graph is None:
                if leaf.is_symbolic:
                    raise ValueError(f"{leaf.name} is a symbolic tensor, but this tape records eagerly")
                self._tape.watch(leaf)
            else:
                value = value_in(context.current_graph() or self._graph, leaf)
                if value is not None:
                    self._watched.append(value)

    def watched_variables(self) -> tuple[Any, ...]:
        """The variables this tape watches that the block read, in the order of their first reads."""
        return tuple(self._points)

    def _read(self, variable, value):
        """`value`, a read of `variable` while this tape records: ``value + point`` if it is watched."""
        point = self._point(variable)
        return value if point is None else value + point

    def _point(self, variable):
        """`variable`'s watch point (made now if needed), or None if this tape does not watch it."""
        if not (self.watch_accessed_variables or variable in self._watched_variables):
            return None
        point = self._points.get(variable)
        if point is None:
            point = self._watch_point(variable)
            if point is not None:
                self._points[variable] = point
        return point

    def _watch_point(self, variable):
        """A zero of `variable`'s shape at the tape's level (a read in a loop body captures it), watched;
        None in a trace for a variable whose shape is partly known (its gradient is then refused)."""
        if self._graph is None:
            with context.eager():
                point = zeros(current_shape(variable), variable.dtype)
            self._tape.watch(point)
            return point
        if not variable.shape.is_fully_defined():
            self._partly_known.add(variable)
            return None
        with context.building(self._graph):
            point = zeros(variable.shape.as_list(), variable.dtype)
        self._watched.append(point._value)
        return point

    # -- differentiating ----------------------------------------------------------------
    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE) -> Any:
        """The gradient of `target` (a tensor or structure: their sum) for each of `sources`.

        Returns the structure of `sources`, each entry a tensor of its
        source's shape, or None when no recorded path connects them
        (``unconnected_gradients=UnconnectedGradients.ZERO`` or ``"zero"``: zeros).
        """
        if self._used and not self.persistent:
            raise RuntimeError("a non-persistent GradientTape computes one set of gradients: call gradient "
                               "once, or create the tape with GradientTape(persistent=True)")
        unconnected = unconnected_option(unconnected_gradients)
        self._used = True
        given_targets = nest.flatten(target)
        given_sources = nest.flatten(sources)
        flat_sources = [self._source(s) for s in given_sources]
        seeds = nest.flatten(output_gradients) if output_gradients is not None else [None] * len(given_targets)
        if len(seeds) != len(given_targets):
            raise ValueError(f"output_gradients has {len(seeds)} entries but target has {len(given_targets)}")
        # A variable as a target is the variable itself, as in TensorFlow: its gradient is the seed for that
        # same variable among the sources, and nothing for anything else.
        direct = [(t, s) for t, s in zip(given_targets, seeds) if _is_variable(t)]
        kept = [(t, s) for t, s in zip(given_targets, seeds) if not _is_variable(t)]
        targets, seeds = [_as_tensor(t) for t, _ in kept], [s for _, s in kept]
        with self._differentiating():
            found = self._vjp(targets, flat_sources, context.current_graph())(seeds)
        found = [None if s is None else g for g, s in zip(found, flat_sources)]
        for variable, seed in direct:
            found = [_plus(g, variable, seed) if given is variable else g for g, given in zip(found, given_sources)]
        if unconnected is UnconnectedGradients.ZERO:
            found = [_zeros_for(given) if g is None else g for g, given in zip(found, given_sources)]
        return nest.pack_sequence_as(sources, found)


    def jacobian(self, target: Any, sources: Any,
                 unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
                 parallel_iterations: int | None = None, experimental_use_pfor: bool = True) -> Any:
        """The Jacobian of `target` (one tensor) for each of `sources`, in the structure of `sources`.

        Entry ``[i..., j...]`` of a source's Jacobian (shape
        ``target.shape + source.shape``) is ``d target[i...] / d source[j...]``;
        None where no recorded path connects them (``unconnected_gradients=
        UnconnectedGradients.ZERO``: zeros). The backward pass seeded with
        each entry of the target: batched over all of them at once
        (``experimental_use_pfor=True``), or one pass per entry in one loop
        (`autoloop.autodiff.jacobian` says how, and when the first falls back
        to the second, with a warning). As in TensorFlow, eagerly with
        ``experimental_use_pfor=False`` the tape must be persistent.
        """
        unconnected = self._start_jacobian(unconnected_gradients, experimental_use_pfor, "jacobian")
        target = _as_tensor(target)
        given = nest.flatten(sources)
        flat_sources = [self._source(s) for s in given]  # a variable's watch point (None: never read)
        read = [s for s in flat_sources if s is not None]
        with self._differentiating():
            vjp = self._vjp([target], read, context.current_graph())
            found = iter(jacobian_rows(lambda seed: vjp([seed]), target, read, unconnected, parallel_iterations,
                                       self._vectorize(experimental_use_pfor, "jacobian")) if read else [])
        results = [next(found) if s is not None else None for s in flat_sources]
        if unconnected is UnconnectedGradients.ZERO:
            results = [_zeros_for_jacobian(target, g) if r is None else r for r, g in zip(results, given)]
        return nest.pack_sequence_as(sources, results)

    def batch_jacobian(self, target: Any, source: Any,
                       unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
                       parallel_iterations: int | None = None, experimental_use_pfor: bool = True) -> Any:
        """Per example: ``J[b, i..., j...] = d target[b, i...] / d source[b, j...]``.

        `target` and `source` have the examples on axis 0, and example ``b``
        of the target must depend only on example ``b`` of the source (as
        TensorFlow assumes; other entries are summed in). Shape
        ``target.shape + source.shape[1:]``. Otherwise as `jacobian`.
        """
        unconnected = self._start_jacobian(unconnected_gradients, experimental_use_pfor,
                                          "batch_jacobian")
        target, source = _as_tensor(target), self._jacobian_source(source)
        with self._differentiating():
            vjp = self._vjp([target], [source], context.current_graph())
            return batch_jacobian_rows(lambda seed: vjp([seed]), target, source, unconnected, parallel_iterations,
                                       self._vectorize(experimental_use_pfor, "batch_jacobian"))

    def _start_jacobian(self, unconnected, use_pfor, what):
        """Check the tape may give a Jacobian now; returns the `UnconnectedGradients` option."""
        if self._used and not self.persistent:
            raise RuntimeError(f"a non-persistent GradientTape computes one set of gradients: call {what} "
                               f"once, or create the tape with GradientTape(persistent=True)")
        if not use_pfor and not self.persistent and self._graph is None:
            raise RuntimeError(f"GradientTape.{what} with experimental_use_pfor=False runs eagerly only on a "
                               f"tape created with GradientTape(persistent=True)")
        self._used = True
        return unconnected_option(unconnected)

    def _vectorize(self, use_pfor, what) -> bool:
        """Whether a Jacobian is vectorized: as asked, unless an eager tape recorded what cannot be traced
        into one batched program (a checkpointed loop, a call returning a TensorArray): then the row loop,
        with a warning."""
        if not use_pfor or self._graph is not None:
            return bool(use_pfor)
        untraceable = next((e for e in self._tape.entries if not e.traceable), None)
        if untraceable is None:
            return True
        fall_back(what, f"the tape recorded {untraceable.what}, whose backward pass runs eagerly only")
        return False

    @contextlib.contextmanager
    def _differentiating(self):
        """The tape does not record the ops of its own gradients."""
        if self._graph is None:
            with recording.replaced(self._tape, None):
                yield
        else:
            yield

    def _vjp(self, targets, sources, graph):
        """``vjp(seeds)``: the gradients of ``sum(targets[k] * seeds[k])`` for each of `sources`."""
        if self._graph is None:
            return lambda seeds: self._eager_gradient(targets, seeds, sources)
        return lambda seeds: self._traced_gradient(targets, seeds, sources, graph)

    def _source(self, source):
        """The tensor to differentiate for `source`: a variable's watch point (None if never read)."""
        if _is_variable(source):
            if source in self._partly_known:
                raise ValueError(f"GradientTape.gradient for the variable {source.name!r}: its shape {source.shape} "
                                 f"is partly known, and a tape in a traced function differentiates variables of a "
                                 f"fully known shape. Give the variable a full shape, or take the gradient eagerly")
            return self._points.get(source)
        return _as_tensor(source)

    def _jacobian_source(self, source):
        """`_source` for a Jacobian, which needs a tensor of the source's shape: a variable the tape never saw
        read is a fresh read (connected to nothing)."""
        point = self._source(source)
        return point if point is not None else _as_tensor(source)

    def _eager_gradient(self, targets, seeds, sources):
        sources = [s if s is not None else zeros([]) for s in sources]  # never tracked: no gradient
        for tensor in targets + sources:
            if tensor.is_symbolic:
                raise ValueError(f"{tensor.name} is a symbolic tensor, but this tape recorded eagerly")
        seeds = [seed_for(t, s) for t, s in zip(targets, seeds)]
        watched = [s if self._tape.is_tracked(s) else None for s in sources]
        known = [s for s in watched if s is not None]
        found = dict(zip(map(id, known), eager_tape.backprop(self._tape.entries, targets, seeds, known)))
        return [found.get(id(s)) if w is not None else None for s, w in zip(sources, watched)]

    def _traced_gradient(self, targets, seeds, sources, graph):
        if graph is None or not self._graph.is_ancestor_of(graph):
            raise ValueError("this GradientTape recorded inside a traced function: call gradient there too")
        created = self._created | ({id(n) for n in self._graph.nodes} - self._open if self._recording else set())
        if graph is self._graph:
            accept = lambda node: id(node) in created  # noqa: E731
        else:
            accept = None  # a sub-graph traced inside the block: all of it was recorded
        watched = [value_in(graph, Tensor(value=w)) for w in self._watched]
        # The tape tracks what it watched and what recorded ops computed from that.
        tracked = paths.reachable(graph.nodes, [w for w in watched if w is not None], {}, accept)
        values = [value_in(graph, s) if s is not None else None for s in sources]
        wanted = [s if v is not None and v in tracked else None for s, v in zip(sources, values)]
        known = [s for s in wanted if s is not None]
        found = graph_gradients(graph, targets, known, seeds, node_filter=accept) if known else []
        by_id = dict(zip(map(id, known), found))
        return [by_id.get(id(s)) if w is not None else None for s, w in zip(sources, wanted)]


class _Recording(threading.local):
    tapes: list | None = None


_recording = _Recording()


def _recording_tapes() -> list:
    """This thread's GradientTapes inside their ``with`` blocks (not in ``stop_recording()``), outermost first."""
    if _recording.tapes is None:
        _recording.tapes = []
    return _recording.tapes


def variable_read(variable, value):
    """`value`, a read of the trainable `variable`, as the recording tapes see it (see the module docstring)."""
    tapes = _recording.tapes
    if not tapes:
        return value
    graph = context.current_graph()
    for tape in list(tapes):
        if tape._graph is None if graph is None else (tape._graph is not None and tape._graph.is_ancestor_of(graph)):
            value = tape._read(variable, value)
    return value


class CallPoints:
    """While a function is traced for a call that eager tapes record: each trainable variable it reads gets a
    watch point that is an input of the traced graph (`variables`, in order), so the recorded call
    differentiates its variables like its arguments (`point_values` gives the eager tapes' points)."""

    watch_accessed_variables = True
    _watched_variables = ()

    def __init__(self, graph):
        self._graph = graph
        self._points: dict = {}
        self.variables: list = []

    def _read(self, variable, value):
        point = self._points.get(variable)
        if point is None:
            shape = variable.shape
            point = Tensor(value=self._graph.add_input(variable.dtype, shape, name=f"{variable._name}/point"))
            self._points[variable] = point
            self.variables.append(variable)
        return value + point

    def active(self):
        return _watching(self)


class VariableWatcher:
    """While a `custom_gradient` function runs: the trainable variables it reads (`variables`, in the order
    of their first reads), as TensorFlow's variable watcher finds them; the reads are left as they are."""

    watch_accessed_variables = True
    _watched_variables = ()

    def __init__(self, graph):
        self._graph = graph
        self._seen: dict = {}

    @property
    def variables(self) -> list:
        return list(self._seen)

    def _read(self, variable, value):
        self._seen.setdefault(variable, None)
        return value

    def active(self):
        return _watching(self)


@contextlib.contextmanager
def _watching(reader):
    """`reader` (a `CallPoints` or `VariableWatcher`) sees the variable reads inside the block."""
    _recording_tapes().append(reader)
    try:
        yield reader
    finally:
        _recording_tapes().remove(reader)


def point_values(variables) -> list:
    """For a call of a function traced with `CallPoints`: per variable, the sum of the watch points of the
    eager tapes recording now that watch it (each tape records the sum), or zeros."""
    tapes = [t for t in _recording.tapes or () if t._graph is None]
    found = []
    for variable in variables:
        total = None
        for tape in tapes:
            point = tape._point(variable)
            if point is not None:
                total = point if total is None else total + point
        found.append(total if total is not None else zeros(current_shape(variable), variable.dtype))
    return found


def current_shape(variable) -> list:
    """The shape of `variable`'s value now (its declared shape may have None)."""
    return variable.shape.as_list() if variable.shape.is_fully_defined() else list(np.shape(variable._cell.read()))


def _is_variable(value) -> bool:
    from autoloop.variables import Variable  # here: autoloop.variables imports this module
    return isinstance(value, Variable)


def _plus(gradient, variable, seed):
    """`gradient` (or None) plus `seed` (None: ones), a variable target's own gradient."""
    own = ones(current_shape(variable), variable.dtype) if seed is None else convert(seed, variable.dtype)
    return own if gradient is None else gradient + own


def _zeros_for_jacobian(target, source):
    """The Jacobian of `target` for a variable `source` it never read: zeros of ``target.shape + source.shape``."""
    from autoloop.ops.array_ops import concat, shape
    from autoloop.dtypes import int32
    return zeros(concat([shape(target), convert(current_shape(source), int32)], 0), target.dtype)


def _zeros_for(source):
    if _is_variable(source):
        return zeros(current_shape(source), source.dtype)
    return zeros_like(_as_tensor(source))


def _as_tensor(value):
    if hasattr(value, "components") and not isinstance(value, Tensor):  # a TensorArray
        return value.components()[0]
    return value if isinstance(value, Tensor) else convert(value)
