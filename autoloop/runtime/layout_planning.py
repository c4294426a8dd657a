"""Which slot each variable of a staged loop or branch needs (`autoloop.runtime.layout`).

Loops and branches plan alike, from what each path gives the variable: a
loop its value before the loop and after an iteration, a branch what each
branch leaves in it. `initial_slot` is a loop variable's first guess, before
the body was traced; `plan` the slot that carries every path's value, or
the error (`autoloop.runtime.layout_rejections`) when none can.
"""

from __future__ import annotations

from autoloop import nest
from autoloop.runtime import layout_rejections as reject
from autoloop.runtime.layout import FIXED, LIST, MAYBE, VALUE, Copies, Slot, same_value, weak_leaves
from autoloop.runtime.lists import TensorList
from autoloop.runtime.specs import LeafSpec, SpecError, is_tensor_like, is_weak, spec_of, unify
from autoloop.runtime.statement import Statement
from autoloop.runtime.undefined import MaybeUndefined, Undefined
from autoloop.runtime.values import is_python_scalar
from autoloop.tensor import Tensor

MISSING = object()  # a branch output whose value before the statement is not known


def initial_slot(name, entry, appended=False) -> Slot:
    """The slot a loop variable gets before any iteration was traced.

    A tensor is carried as it is; a Python number as a tensor of its default
    dtype, a guess that tracing the body may widen (``s = 0`` then
    ``s += 0.5``); a TensorList as a list; anything else is first assumed
    unchanged by the loop.
    """
    if type(entry) is Tensor:
        return Slot(VALUE, name, LeafSpec(entry.dtype, entry.shape), weak=entry._weak)
    if isinstance(entry, MaybeUndefined):
        return Slot(MAYBE, name, spec_of(entry))
    if isinstance(entry, TensorList):
        return Slot(LIST, name, LeafSpec(entry.array.dtype, entry.array.element_shape), weak=entry.weak)
    if appended and type(entry) is list and is_tensor_like(entry) \
            and not any(is_python_scalar(item) for item in entry):
        return Slot(LIST, name, unify(name, list(entry), ""))
    if is_tensor_like(entry) and not (type(entry) is list and appended):
        return Slot(VALUE, name, spec_of(entry), tentative=any(is_python_scalar(leaf) for leaf in nest.flatten(entry)),
                    weak=weak_leaves([entry]))
    return Slot(FIXED, name, fixed=entry)


def plan(name, entry, outcomes, statement: Statement, copies: Copies | None = None) -> Slot:
    """The slot variable `name` needs, given `outcomes`: ``(path label, value)`` per path.

    `entry` is its value before the statement (or MISSING). Raises the
    user-facing error (naming the variable, the paths and the statement)
    when no slot can carry what the paths give.
    """
    copies = copies or Copies()
    values = [value for _, value in outcomes]
    base = entry if entry is not MISSING else values[0]
    if all(same_value(v, base) for v in values):  # unchanged (a copy it was given counts as unchanged)
        return Slot(FIXED, name, fixed=base)
    appended = _appended_lists(name, outcomes, copies, statement)
    if appended:
        weak = all(value.weak if isinstance(value, TensorList) else all(is_weak(item) for item in value)
                   for _, value in appended)
        return Slot(LIST, name, _list_spec(name, appended, statement), weak=weak)
    reject.changed_containers(name, outcomes, copies, statement)
    if all(isinstance(v, Undefined) for v in values):
        return Slot(FIXED, name, fixed=base)
    defined = [(label, v) for label, v in outcomes if is_tensor_like(v) or isinstance(v, MaybeUndefined)]
    others = [(label, v) for label, v in outcomes
              if not (is_tensor_like(v) or isinstance(v, (MaybeUndefined, Undefined)))]
    if others or not defined:
        reject.mixed_kinds(name, outcomes, others, statement)
    try:
        spec = unify(name, [v for _, v in defined], "")
    except SpecError as error:
        reject.mixed_dtypes(name, entry, defined, statement, error)
    maybe = any(isinstance(v, (Undefined, MaybeUndefined)) for v in values)
    tentative = not maybe and any(is_python_scalar(leaf) for v in values for leaf in nest.flatten(v))
    return Slot(MAYBE if maybe else VALUE, name, spec, tentative=tentative,
                weak=weak_leaves([v for _, v in defined]))


def _appended_lists(name, outcomes, copies, statement):
    """The outcomes, when the variable is a list some path appended to (else None)."""
    values = [v for _, v in outcomes]
    grown = any(isinstance(v, TensorList) for v in values) or any(
        type(v) is list and type(copies.original(v)) is list and _extends(copies.original(v), v)
        and len(v) > len(copies.original(v)) for v in values)
    if not grown:
        return None
    for label, value in outcomes:
        if not (isinstance(value, TensorList) or type(value) is list):
            reject.list_on_some_paths(name, label, value, statement)
    return outcomes


def _list_spec(name, outcomes, statement) -> LeafSpec:
    """The element spec of a list every path leaves as a Python list or a TensorList."""
    items = []
    for label, value in outcomes:
        if isinstance(value, TensorList):
            items.append(LeafSpec(value.array.dtype, value.array.element_shape))
            continue
        for item in value:
            if not is_tensor_like(item) or isinstance(item, (list, tuple, dict, TensorList)):
                reject.list_item(name, label, item, statement)
            items.append(item)
    shapes = [item.shape if isinstance(item, LeafSpec) else spec_of(item).shape for item in items]
    for shape in shapes[1:]:
        if not shape.is_compatible_with(shapes[0]):
            reject.list_shapes(name, shapes[0], shape, statement)
    try:
        return unify(name, items, "")
    except SpecError:
        reject.list_dtypes(name, statement)


def _extends(original, value) -> bool:
    return len(value) >= len(original) and all(a is b for a, b in zip(original, value))
