"""Graph branches for converted code: `staged_if`, `staged_if_exp` and lazy `and`/`or`/`not`.

A variable bound in one branch only is carried as a value and a "defined"
flag; Python values that both branches leave identical are not graph
outputs; `and`/`or` on tensors return the deciding operand, as Python does.
"""

from __future__ import annotations

import numbers


from autoloop import dtypes
from autoloop.control_flow.cond import staged_cond
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.ops import api
from autoloop.ops.dispatch import convert
from autoloop.runtime.lists import TensorList
from autoloop.runtime.locations import describe, raise_from_user
from autoloop.runtime.exceptions import AlwaysRaises
from autoloop.runtime.undefined import MaybeUndefined, TracedUnboundError, Undefined
from autoloop.runtime.values import is_graph_tensor
from autoloop.tensor import Tensor


from autoloop.runtime.staging import (
    LeafSpec, Raises, code_of, is_tensor_like, kind_name, raise_when_run, reject_unsupported,
    scratch_run, spec_of, to_bool, zeros_for)


class _NeedsPlan(Exception):
    """A branch gave a value that is not a tensor: plan each output first."""


def staged_if(test, if_true, if_false, names, inputs, *, location=None, unsupported=None,
              packed=False):
    """A graph cond for ``if test: if_true(*inputs) else: if_false(*inputs)``.

    With `packed`, the branches return state tuples already.
    """
    from autoloop.runtime.control_flow import pack
    reject_unsupported(unsupported, "an if statement", location)

    def run(branch):
        if branch is None:
            return ()
        try:
            result = branch(*inputs)
        except TracedUnboundError as error:  # this branch raises whenever it runs
            return Raises(error)
        return tuple(result) if packed else pack(result, names)

    key = (code_of(if_true), code_of(if_false), tuple(names))
    try:
        return _cond(test, lambda: run(if_true), lambda: run(if_false), names, _PLANS.get(key), location)
    except _NeedsPlan:
        pass
    true_values = scratch_run(run, (if_true,))
    false_values = scratch_run(run, (if_false,))
    if isinstance(true_values, Raises) and isinstance(false_values, Raises):
        # Every path raises: a cond that raises the taken path's error, then nothing after it runs.
        staged_cond(to_bool(test), lambda: raise_when_run(run(if_true).error) or (),
                    lambda: raise_when_run(run(if_false).error) or (), names=None)
        raise AlwaysRaises(location)
    if isinstance(true_values, Raises):  # outputs as the other branch gives them
        true_values = false_values
    if isinstance(false_values, Raises):
        false_values = true_values
    plan = [_plan_output(name, t, f, location) for name, t, f in zip(names, true_values, false_values)]
    # Remembered per statement: a nested statement is then planned once, not
    # once per trace of every enclosing branch (which would be exponential).
    _PLANS[key] = plan
    return _cond(test, lambda: run(if_true), lambda: run(if_false), names, plan, location)


_PLANS: dict = {}








def _plan_output(name, true_value, false_value, location):
    """How output `name` leaves the cond, given what each branch gives it."""
    values = (true_value, false_value)
    if all(is_tensor_like(v) for v in values):
        plain = not isinstance(true_value, (TensorList, TensorArray))
        return ("value", spec_of(true_value) if plain else None)
    if all(isinstance(v, Undefined) for v in values):
        return ("fixed", true_value)
    defined = [v for v in values if is_tensor_like(v) or isinstance(v, MaybeUndefined)]
    others = [v for v in values if not (is_tensor_like(v) or isinstance(v, (MaybeUndefined, Undefined)))]
    if defined and not others:
        return ("maybe", spec_of(defined[0]))
    if not defined and not any(isinstance(v, Undefined) for v in values) and (
            true_value is false_value or _same_python_value(true_value, false_value)):
        return ("fixed", true_value)
    sides = ("if", "else")
    odd = next(i for i, v in enumerate(values) if any(v is o for o in others))
    other_side = 1 - odd
    message = (f"'{name}' is {kind_name(values[odd])} in the {sides[odd]} branch and "
               f"{kind_name(values[other_side])} in the {sides[other_side]} branch of the if at "
               f"{describe(location)}; a graph cond needs a tensor of one dtype from both branches")
    raise_from_user(ValueError(message), location)


def _same_python_value(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _cond(test, true_fn, false_fn, names, plan, location):
    lists = set()  # positions holding a TensorList, passed through the cond as its TensorArray

    def as_array(position, value):
        if isinstance(value, TensorList):
            lists.add(position)
            return value.array
        return value

    def branch(function):
        values = function()
        if isinstance(values, Raises):
            if plan is None or any(kind == "value" and detail is None for kind, detail in plan):
                raise _NeedsPlan()
            raise_when_run(values.error)
            return tuple(zeros_for(detail) if kind == "value" else (zeros_for(detail), api.constant(False))
                         for kind, detail in plan if kind != "fixed")
        values = [as_array(position, v) for position, v in enumerate(values)]
        if plan is None:
            if not all(is_tensor_like(v) for v in values):
                raise _NeedsPlan()
            return tuple(values)
        outputs = []
        for (kind, detail), value in zip(plan, values):
            if kind == "value":
                if not is_tensor_like(value):
                    raise _NeedsPlan()  # a remembered plan that no longer fits
                outputs.append(value)
            elif kind == "fixed":
                both_undefined = isinstance(value, Undefined) and isinstance(detail, Undefined)
                if not both_undefined and value is not detail and not _same_python_value(value, detail):
                    raise _NeedsPlan()
            elif kind == "maybe":
                if isinstance(value, MaybeUndefined):
                    outputs.append((value.value, value.defined))
                elif isinstance(value, Undefined):
                    outputs.append((zeros_for(detail), api.constant(False)))
                elif is_tensor_like(value):
                    if isinstance(detail, LeafSpec) and not isinstance(value, Tensor):
                        value = convert(value, detail.dtype)
                    outputs.append((value, api.constant(True)))
                else:
                    raise _NeedsPlan()
        return tuple(outputs)

    labels = names if plan is None else tuple(n for n, (kind, _) in zip(names, plan) if kind != "fixed")
    result = staged_cond(to_bool(test), lambda: branch(true_fn), lambda: branch(false_fn), names=labels)
    if plan is None:
        return tuple(TensorList(v) if p in lists else v for p, v in enumerate(result))
    values, result = [], list(result)
    for name, (kind, detail) in zip(names, plan):
        if kind == "fixed":
            values.append(detail)
        elif kind == "maybe":
            value, defined = result.pop(0)
            values.append(MaybeUndefined(name, value, defined))
        else:
            value = result.pop(0)
            values.append(TensorList(value) if len(values) in lists else value)
    return tuple(values)


def staged_if_exp(test, if_true, if_false, location=None):
    seen = []

    def arm(thunk, other):
        try:
            value = thunk()
        except TracedUnboundError as error:  # this arm raises whenever it is chosen
            spec = spec_of(seen[0]) if seen else spec_of(scratch_run(other, ()))
            raise_when_run(error)
            return zeros_for(spec)
        seen.append(value)
        return value
    return staged_cond(to_bool(test), lambda: arm(if_true, if_false), lambda: arm(if_false, if_true),
                       names=None)


def _or_raise(thunk):
    """`thunk()`; if it reads an unbound variable, a graph error when run (and False)."""
    try:
        return thunk()
    except TracedUnboundError as error:
        raise_when_run(error)
        return api.constant(False)


def staged_and(value, thunks):
    from autoloop.runtime.operators import and_
    if value.dtype is dtypes.bool_:
        return staged_cond(value, lambda: to_bool(_or_raise(lambda: and_(thunks[0](), *thunks[1:]))),
                           lambda: api.constant(False), names=None)
    return _deciding_operand(value, to_bool(value),
                             lambda: _or_raise(lambda: and_(thunks[0](), *thunks[1:])))


def staged_or(value, thunks):
    from autoloop.runtime.operators import or_
    if value.dtype is dtypes.bool_:
        return staged_cond(value, lambda: api.constant(True),
                           lambda: to_bool(_or_raise(lambda: or_(thunks[0](), *thunks[1:]))), names=None)
    return _deciding_operand(value, api.logical_not(to_bool(value)),
                             lambda: _or_raise(lambda: or_(thunks[0](), *thunks[1:])))


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
