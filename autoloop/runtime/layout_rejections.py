"""The errors of planning a staged statement's state (`autoloop.runtime.layout_planning`), in words.

Each function raises, from the user's line (`Statement.fail`), the error
for one way no slot can carry what the paths give a variable: what the
variable is on each path, which statement, and the fix.

    'y' is float32 in the if branch and int32 in the else branch of the if statement at
    model.py:7; every path must give it the same dtype (use autoloop.cast)
"""

from __future__ import annotations

from typing import NoReturn

from autoloop import dtypes, nest
from autoloop.control_flow.dtype_origin import why_dtype
from autoloop.errors import BranchTypeError, LoopVariableTypeError
from autoloop.runtime.layout import same_value
from autoloop.runtime.specs import kind_name
from autoloop.runtime.statement import Statement
from autoloop.runtime.undefined import MaybeUndefined
from autoloop.runtime.values import is_python_scalar
from autoloop.tensor import Tensor


def no_fit(statement: Statement, layout, misfit) -> NoReturn:
    """The error for a layout that planning cannot widen any further to fit `misfit`."""
    slot = layout.slots[misfit.position]
    statement.fail(ValueError(
        f"{statement.subject(slot.name)} is {kind_name(misfit.value)} after {statement}, which graph control flow "
        f"cannot carry: {misfit.reason}"))


def changed_containers(name, outcomes, copies, statement: Statement) -> None:
    for label, value in outcomes:
        original = copies.original(value)
        if original is None or same_value(value, original):
            continue
        kind = type(original).__name__
        how = ("other than by appending (items were removed, inserted or replaced)"
               if isinstance(original, list) else "(keys or items were added, removed or replaced)")
        statement.fail(ValueError(
            f"{statement} is graph control flow, and it changes the Python {kind} '{name}' {how}: "
            f"graph control flow can carry a Python {kind} only unchanged{' or appended to' if kind == 'list' else ''}, "
            f"because its body is traced, not run once per iteration or only when taken. Make the change "
            f"outside the {statement.what}, or use tensors (a TensorArray) for what changes"))


def list_on_some_paths(name, label, value, statement: Statement) -> NoReturn:
    statement.fail(ValueError(
        f"'{name}' is {kind_name(value)} {label} and a list appended to on another path of "
        f"{statement}; graph control flow carries a list only when every path leaves a list in "
        f"it: assign '{name}' a list before the {statement.what}"))


def list_item(name, label, item, statement: Statement) -> NoReturn:
    statement.fail(TypeError(
        f"'{name}' is a list that {statement} appends to, so it becomes a list of tensors, "
        f"but it holds {kind_name(item)} {label}; only tensors and numbers can be appended "
        f"in graph control flow"))


def list_shapes(name, first, other, statement: Statement) -> NoReturn:
    statement.fail(ValueError(
        f"'{name}' is a list that {statement} appends to, so it becomes a list of tensors of "
        f"one shape, but it holds items of shapes {first} and {other}; graph control flow "
        f"cannot carry a list of differently shaped items"))


def list_dtypes(name, statement: Statement) -> NoReturn:
    error_type = LoopVariableTypeError if statement.is_loop else BranchTypeError
    statement.fail(error_type(
        f"'{name}' is a list that {statement} appends items of different dtypes to; a list built in "
        f"graph control flow holds one dtype: cast the items (autoloop.cast)"))


def mixed_kinds(name, outcomes, others, statement: Statement) -> NoReturn:
    odd_label, odd = others[0] if others else outcomes[0]
    rest = [(label, v) for label, v in outcomes if v is not odd]
    other_label, other = rest[0] if rest else (odd_label, odd)
    what = statement.what.split()[-1]
    subject = statement.subject(name)
    if statement.is_return_value(name):
        hint = "return a tensor on every path"
    elif odd is None or other is None:
        hint = (f"assign '{name}' a tensor (not None) on every path, or set it before the {what} to "
                f"the tensor it will hold")
    else:
        hint = (f"graph control flow carries tensors only: make '{name}' a tensor on every path, or "
                f"leave it unchanged by the {what}")
    statement.fail(ValueError(
        f"{subject} is {kind_name(odd)} {odd_label} and {kind_name(other)} {other_label}{statement.of}, "
        f"so the graph {'loop' if statement.is_loop else 'cond'} cannot learn one dtype for it; {hint}"))


def mixed_dtypes(name, entry, defined, statement: Statement, error) -> NoReturn:
    subject = statement.subject(name)
    every = "every return" if statement.is_return_value(name) else "every path"
    if error.structures is not None:
        first, other = nest.describe_structures(*error.structures)
        if statement.is_loop:
            fix = ("Every return must give the same structure" if statement.is_return_value(name) else
                   "Give it its final structure before the loop")
            statement.fail(LoopVariableTypeError(
                f"{statement.loop_variable(name)} does not have the same nested structure after one "
                f"iteration{statement.of}: it enters the loop as {first} but is {other}. {fix}."))
        statement.fail(BranchTypeError(
            f"{subject} is {first} {defined[0][0]} and {other} {defined[-1][0]}{statement.of}; "
            f"{every} must give {'it ' if every == 'every path' else ''}the same structure"))
    if statement.is_loop and isinstance(entry, Tensor):
        found = next((v for _, v in defined if _dtype_of(v) is not entry.dtype), None)
        why = why_dtype(found, wanted=entry.dtype)
        statement.fail(LoopVariableTypeError(
            f"{statement.loop_variable(name)} has dtype {entry.dtype.name} before the loop, but dtype "
            f"{_dtype_name(found)} after one iteration{statement.of}; a loop variable must keep its "
            f"dtype. " + (
                f"{why[0].upper()}{why[1:]}" if why else
                f"Initialize it with the dtype it has in the loop, or cast it back with "
                f"autoloop.cast(..., autoloop.{entry.dtype.name})")))
    error_type = LoopVariableTypeError if statement.is_loop else BranchTypeError
    statement.fail(error_type(
        f"{subject} is {_describe_paths(defined)}{statement.of}; {every} must give "
        f"{'it ' if every == 'every path' else ''}the same dtype{_why_dtypes(defined)}"))


def _why_dtypes(defined) -> str:
    """``: <why one path's dtype is what it is>`` when an op explains it (see `why_dtype`), else
    the general advice."""
    dtypes_found = [_dtype_of(v) for _, v in defined]
    for (_, value), dtype in zip(defined, dtypes_found):
        others = [d for d in dtypes_found if d is not None and d is not dtype]
        why = why_dtype(value.value if isinstance(value, MaybeUndefined) else value,
                        wanted=others[0] if others else None)
        if why:
            return f": {why}"
    return " (use autoloop.cast)"


def _dtype_of(value):
    value = value.value if isinstance(value, MaybeUndefined) else value
    if isinstance(value, Tensor):
        return value.dtype
    if is_python_scalar(value):
        return dtypes.infer_dtype(value)
    return None


def _dtype_name(value):
    dtype = _dtype_of(value)
    if is_python_scalar(value):
        return f"the Python {type(value).__name__} {value!r}"
    return dtype.name if dtype is not None else kind_name(value)


def _describe_paths(defined):
    return " and ".join(f"{_dtype_name(v)} {label}" for label, v in defined)
