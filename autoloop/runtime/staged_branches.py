"""Graph branches for converted code: `staged_if`, `staged_if_exp` and lazy `and`/`or`/`not`.

Each branch runs on copies of the Python containers it is given, so tracing
one branch never changes what the other sees. The outputs cross the
``Cond`` by a `Layout` (`layout.py`) planned from what both branches give:
a variable bound in one branch only becomes a value and a "defined" flag,
a list one branch appends to a TensorArray, Python values both branches
leave identical are not graph outputs at all, and Python numbers take the
dtype of the tensor the other branch gives. Most branches give tensors of
one dtype, and are traced once; the others are first traced into a scratch
graph to plan the layout, which the trace remembers (`trace.py`).
`and`/`or` on tensors return the deciding operand, as Python does.
"""

from __future__ import annotations

import numbers

from autoloop import dtypes, nest
from autoloop.control_flow.cond import staged_cond
from autoloop.errors import BranchTypeError
from autoloop.ops import api
from autoloop.runtime import trace as traces
from autoloop.runtime.exceptions import AlwaysRaises
from autoloop.runtime.guards import ContainerGuard
from autoloop.runtime.layout import MAYBE, VALUE, Copies, DoesNotFit, Layout, Slot, weak_leaves
from autoloop.runtime.layout_planning import MISSING, plan
from autoloop.runtime.layout_rejections import no_fit
from autoloop.runtime.statement import Statement
from autoloop.runtime.lists import TensorList
from autoloop.runtime.locations import caller_names
from autoloop.runtime.specs import is_tensor_like, spec_of, to_bool
from autoloop.runtime.staging import carried_roots, pack, reject_unsupported, scratch_run
from autoloop.runtime.undefined import HeldBack, MaybeUndefined, TracedUnboundError, raise_when_run
from autoloop.runtime.values import is_graph_tensor, is_python_scalar
from autoloop.tensor import Tensor

_MAX_ATTEMPTS = 4


class _Raises:
    """What a branch gives when tracing it read an unbound variable: it raises whenever it runs."""

    def __init__(self, error):
        self.error = error


def _traced_or_raises(trace):
    """`trace()` (tracing one branch), or a `_Raises` when that branch raises whenever it runs: it read an
    unbound variable, or Python code in it raised an error that is held back until the graph runs."""
    try:
        return trace()
    except TracedUnboundError as error:
        return _Raises(error)
    except Exception as error:  # noqa: BLE001 - held back only if Python code raised it
        held = HeldBack.of(error)
        if held is None:
            raise
        return _Raises(held)


class _Misfit(Exception):
    """A branch's outputs do not fit the layout; `both`: what each branch gave, when both were traced."""

    def __init__(self, side, values, both=None, reason=None):
        super().__init__(side)
        self.side, self.values, self.both, self.reason = side, values, both, reason


def staged_if(test, if_true, if_false, names, inputs, *, location=None, unsupported=None,
              packed=False, entries=None, guard=None):
    """A graph cond for ``if test: if_true(*inputs) else: if_false(*inputs)``.

    With `packed`, the branches return state tuples already; `entries`, when
    given, are the outputs' values before the statement. A `guard` says the
    ``if`` is conversion's own, after a jump (see `autoloop.runtime.statement.Statement`).
    """
    statement = Statement("if statement", location, guard, caller_names())
    reject_unsupported(unsupported, statement)
    names, inputs = tuple(names), tuple(inputs)
    copies = Copies()

    def run(branch):
        if branch is None:
            return ()
        result = _traced_or_raises(lambda: branch(*(copies.copy(value) for value in inputs)))
        if isinstance(result, _Raises):
            return result
        return tuple(result) if packed else pack(result, names)

    functions = tuple(f for f in (if_true, if_false) if f is not None)
    guard = ContainerGuard(functions, carried_roots(names))
    trace = traces.current()
    key = traces.statement_key("if", functions, inputs, names, numbers_by_dtype=False)
    try:
        result = _stage(test, _checked(run, if_true, guard, statement), _checked(run, if_false, guard, statement),
                        names, entries, trace.layouts.get(key), statement, copies)
    except BaseException:
        guard.restore_cells()  # no shared variable keeps a value of a graph that was not built
        raise
    if result[1] is not None:
        trace.layouts[key] = result[1]
    return result[0]


def _checked(run, branch, guard, statement):
    """`run(branch)`, then: a container the branch changed while tracing is an error, not an effect."""
    def traced():
        try:
            return run(branch)
        finally:
            guard.check(statement)
    return traced


def _stage(test, run_true, run_false, names, entries, layout, statement, copies):
    """``(outputs, layout)``: the cond built with the first layout both branches fit."""
    outcomes = None
    if layout is None:  # most branches fit the layout the first one suggests: try that
        try:
            return _cond(test, run_true, run_false, None, names, copies, statement)
        except _Misfit as misfit:
            outcomes = misfit.both
        except BranchTypeError:
            pass
        if outcomes is None or any(isinstance(values, _Raises) for values in outcomes):
            outcomes = _scratch_outcomes(run_true, run_false, names, test)
        layout = _plan(names, entries, outcomes, statement, copies)
    for _ in range(_MAX_ATTEMPTS):
        try:
            return _cond(test, run_true, run_false, layout, names, copies, statement)
        except _Misfit as misfit:  # a remembered or scratch-planned layout that no longer fits
            if outcomes is None:
                outcomes = _scratch_outcomes(run_true, run_false, names, test)
            outcomes[misfit.side] = misfit.values
            wider = _plan(names, entries, outcomes, statement, copies)
            if wider.same_as(layout):
                no_fit(statement, layout, misfit.reason)
            layout = wider
    raise AssertionError(f"internal error: no layout fits the outputs of {statement}")


def _scratch_outcomes(run_true, run_false, names, test):
    """What each branch gives, traced into throwaway graphs; a raising branch takes the other's."""
    true_values, false_values = scratch_run(run_true), scratch_run(run_false)
    if isinstance(true_values, _Raises) and isinstance(false_values, _Raises):
        # Every path raises: a cond that raises the taken path's error, then nothing after it runs.
        staged_cond(to_bool(test), lambda: raise_when_run(run_true().error) or (),
                    lambda: raise_when_run(run_false().error) or (), names=None)
        raise AlwaysRaises(None)
    if isinstance(true_values, _Raises):
        true_values = false_values
    if isinstance(false_values, _Raises):
        false_values = true_values
    return [true_values, false_values]


def _plan(names, entries, outcomes, statement, copies):
    slots = []
    for position, name in enumerate(names):
        values = [(statement.sides[side], outcomes[side][position]) for side in (0, 1)]
        entry = entries[position] if entries is not None else _entry_of(values, copies)
        slots.append(plan(name, entry, values, statement, copies))
    return Layout(slots)


def _entry_of(values, copies):
    """The value before the statement, when a branch was given a copy of it."""
    for _, value in values:
        original = copies.original(value)
        if original is not None:
            return original
    return MISSING


def _cond(test, run_true, run_false, layout, names, copies, statement):
    """``(outputs, layout)`` of the cond; without a `layout`, the one the first branch suggests."""
    chosen, given = [layout], []

    def branch(side, run):
        values = run()
        given.append(values)
        if chosen[0] is None:
            chosen[0] = _suggested(names, values, copies)
            if chosen[0] is None:
                raise _Misfit(side, None)
        if isinstance(values, _Raises):
            raise_when_run(values.error)
            return chosen[0].empty_outputs()
        try:
            return chosen[0].encode(values)
        except DoesNotFit as reason:
            raise _Misfit(side, values, list(given) if len(given) == 2 else None, reason) from None

    result = staged_cond(to_bool(test), lambda: branch(0, run_true), lambda: branch(1, run_false),
                         names=chosen[0].labels() if layout is not None else names,
                         described=lambda: statement.described(chosen[0]))
    return chosen[0].decode(result if isinstance(result, tuple) else tuple(result or ())), chosen[0]


def _suggested(names, values, copies):
    """The layout one branch's outputs suggest, when each is a tensor or maybe-defined tensor."""
    if isinstance(values, _Raises):
        return None
    slots = []
    for name, value in zip(names, values):
        if copies.original(value) is not None:  # a container it was given: maybe appended to
            return None
        if isinstance(value, MaybeUndefined) and not isinstance(value.value, (list, tuple, dict)):
            slots.append(Slot(MAYBE, name, spec_of(value), weak=weak_leaves([value])))
        elif isinstance(value, Tensor) or is_tensor_like(value) and not isinstance(value, TensorList) \
                and not any(is_python_scalar(leaf) for leaf in nest.flatten(value)):
            slots.append(Slot(VALUE, name, spec_of(value), tentative=True, weak=weak_leaves([value])))
        elif is_python_scalar(value):
            slots.append(Slot(VALUE, name, spec_of(value), tentative=True, weak=True))
        else:
            return None
    return Layout(slots)


def staged_if_exp(test, if_true, if_false, location=None):
    """``if_true() if test else if_false()`` as a graph cond; the arms may differ in Python number kind."""
    statement = Statement("conditional expression", location, generated=caller_names())
    copies = Copies()

    def run(thunk):
        return _traced_or_raises(lambda: (thunk(),))
    outputs, _ = _stage(test, lambda: run(if_true), lambda: run(if_false), ("conditional expression value",),
                        None, None, statement, copies)
    return outputs[0]


def _or_raise(thunk, like=None):
    """`thunk()`; if it reads an unbound variable or raises a Python error (`HeldBack`), a graph
    error when run (and a placeholder: zeros like `like`, so the other operand keeps its dtype,
    or False)."""
    try:
        return thunk()
    except Exception as error:  # noqa: BLE001 - an unbound read, or held back if Python code raised it
        held = error if isinstance(error, TracedUnboundError) else HeldBack.of(error)
        if held is None:
            raise
        raise_when_run(held)
        return api.zeros_like(like) if like is not None else api.constant(False)


def staged_and(value, rest):
    """``value and rest()`` for a symbolic `value`: `rest` runs (in the graph) only where `value` holds."""
    if value.dtype is dtypes.bool_:
        return staged_cond(value, lambda: to_bool(_or_raise(rest)), lambda: api.constant(False), names=None)
    return _deciding_operand(value, to_bool(value), lambda: _or_raise(rest, value))


def staged_or(value, rest):
    """``value or rest()`` for a symbolic `value`: `rest` runs (in the graph) only where `value` fails."""
    if value.dtype is dtypes.bool_:
        return staged_cond(value, lambda: api.constant(True), lambda: to_bool(_or_raise(rest)), names=None)
    return _deciding_operand(value, api.logical_not(to_bool(value)), lambda: _or_raise(rest, value))


def _deciding_operand(value, evaluate_rest, rest):
    """Like Python, the deciding operand of a non-bool tensor ``and``/``or``.

    When `evaluate_rest` holds, the result is ``rest()``, otherwise `value`;
    if the two do not share a dtype both become bools (``to_bool``). The
    ``rest`` branch is traced first, so the other branch knows its dtype.
    """
    same_dtype = []

    def rest_branch():
        result = rest()
        if isinstance(result, numbers.Number) and not isinstance(result, bool):
            result = api.constant(result)
        if (is_graph_tensor(result) or isinstance(result, Tensor)) and result.dtype == value.dtype:
            same_dtype.append(True)
            return result
        return to_bool(result)

    return staged_cond(evaluate_rest, rest_branch,
                       lambda: value if same_dtype else to_bool(value), names=None)


def logical_not(value):
    return api.logical_not(to_bool(value))
