"""The trace: what the runtime learns while one function is traced, and nothing longer.

Staging a loop or branch can take several tracing attempts (a variable
first assigned inside it needs a dtype before the graph loop is built).
What those attempts learn (the `Layout` of each statement's state) and the
`--explain` decisions belong to the trace being built and die with it:

    with tracing(graph) as trace:     # `Function._trace` does this
        converted(*args)              # staged statements learn into `trace`
    trace.decisions                   # what --explain prints

`current()` finds the trace through the build context: the innermost
active trace (of this thread) whose graph encloses the graph being built.
Converted code traced into a graph no `tracing` block owns (a user's own
`compat.v1` graph) gets a fresh trace for each statement: correct, only
not remembered.

A statement's knowledge is keyed by `statement_key`: the code of its body
and a fingerprint of everything it depends on (its state's kinds, dtypes
and shapes, the values its functions capture), so the same statement met
again with other dtypes, shapes or captured Python values learns again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import types

import numpy as np

from autoloop.control_flow.tensor_array import TensorArray
from autoloop.ir import context
from autoloop.runtime.lists import TensorList
from autoloop.runtime.undefined import MaybeUndefined, Undefined
from autoloop.tensor import Tensor


@dataclasses.dataclass(frozen=True)
class Decision:
    """One line of ``--explain``: how a loop or branch at `location` ran, and why."""

    location: tuple  # the user's (file, line)
    statement: str  # "while loop", "for loop", "if statement"
    staged: bool
    reason: str


class Trace:
    """What one trace learns: statement layouts and explain decisions."""

    def __init__(self, graph=None, may_create_variables=True):
        self.graph = graph
        self.layouts: dict = {}  # statement key -> Layout that fitted
        # TensorFlow's rule for `autoloop.Variable`s made while tracing (`autoloop.variables.creation_rule`)
        self.may_create_variables = may_create_variables
        self.created_variables = 0
        self._decisions: dict = {}  # Decision -> None (ordered, without repeats)

    def record(self, location, statement: str, staged: bool, reason: str) -> None:
        if location is not None:
            self._decisions.setdefault(Decision(tuple(location), statement, staged, reason))

    @property
    def decisions(self) -> tuple:
        return tuple(self._decisions)


class _Active(threading.local):
    """The traces being built by this thread, innermost last."""

    def __init__(self):
        self.traces = []


_active = _Active()


@contextlib.contextmanager
def tracing(graph, may_create_variables=True):
    """A new `Trace` owning everything learned while `graph` (and its sub-graphs) is built."""
    trace = Trace(graph, may_create_variables)
    _active.traces.append(trace)
    try:
        yield trace
    finally:
        _active.traces.pop()


def current() -> Trace:
    """The trace of the graph being built (a fresh, unowned one when no `tracing` block owns it)."""
    graph = context.current_graph()
    if graph is not None:
        for trace in reversed(_active.traces):
            if trace.graph.is_ancestor_of(graph):
                return trace
    return Trace(graph)


# -- keys ----------------------------------------------------------------------------------------

_MAX_ITEMS = 16  # bigger containers are told apart by identity, not contents
_MAX_DEPTH = 3


def statement_key(kind: str, functions, state, names, numbers_by_dtype: bool) -> tuple:
    """What a statement's learned layout depends on (see the module docstring).

    Loops trace their variables as placeholders, so only the kind of a
    Python number in their state matters (`numbers_by_dtype`); a branch
    runs on the values themselves. Holds the objects it fingerprints by
    identity, so an id is never reused while the trace lives.
    """
    return (kind, tuple(names),
            tuple(_function_fingerprint(f, 0) for f in functions),
            tuple(fingerprint(v, 0, numbers_by_dtype=numbers_by_dtype) for v in state))


def _function_fingerprint(function, depth):
    if function is None:
        return None
    code = getattr(function, "__code__", None)
    if code is None:
        return ("object", _Identity(function))
    cells = tuple(fingerprint(_cell_value(c), depth + 1) for c in (function.__closure__ or ()))
    return (code, cells)


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell: a name not assigned yet
        return Undefined


def fingerprint(value, depth=0, numbers_by_dtype=False):
    """A hashable summary of `value`: what learned facts about a statement depend on.

    Tensors by dtype and shape (symbolic) or identity (eager); Python scalars
    by value (by type when `numbers_by_dtype`: loop variables are traced as
    placeholders, so only their kind matters); small containers by contents;
    functions by code and captured values; anything else by identity.
    """
    if isinstance(value, Tensor):
        return ("tensor", value.dtype, value.shape) if value.is_symbolic else ("eager", _Identity(value))
    if value is None or isinstance(value, (bool, int, float, str, bytes, complex)):
        if numbers_by_dtype and isinstance(value, (bool, int, float)):
            return ("number", type(value), value.bit_length() > 31 if type(value) is int else None)
        return (type(value), value)
    if isinstance(value, (np.generic, np.ndarray)):
        if np.size(value) > _MAX_ITEMS:
            return ("numpy", _Identity(value))
        return ("numpy", value.dtype, np.shape(value), value.tobytes())
    if isinstance(value, Undefined) or value is Undefined:
        return ("undefined",)
    if isinstance(value, MaybeUndefined):
        return ("maybe", fingerprint(value.value, depth + 1))
    if isinstance(value, TensorList):
        return ("list", value.array.dtype, value.array.element_shape)
    if isinstance(value, TensorArray):
        return ("array", value.dtype, value.element_shape)
    if depth < _MAX_DEPTH and isinstance(value, (list, tuple)) and len(value) <= _MAX_ITEMS:
        return (type(value), len(value), tuple(fingerprint(v, depth + 1, numbers_by_dtype) for v in value))
    if depth < _MAX_DEPTH and isinstance(value, dict) and len(value) <= _MAX_ITEMS:
        return (type(value), tuple((fingerprint(k, depth + 1), fingerprint(v, depth + 1, numbers_by_dtype))
                                   for k, v in value.items()))
    if isinstance(value, types.FunctionType) and depth < _MAX_DEPTH:
        return _function_fingerprint(value, depth)
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    return ("object", _Identity(value))


class _Identity:
    """A key part equal only to itself: holds `value`, so its id is not reused while the key lives."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, _Identity) and other.value is self.value

    def __hash__(self):
        return id(self.value)
