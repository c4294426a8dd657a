"""How the state of a staged loop or branch travels through graph control flow.

A staged statement's state is one value per user variable. Its `Layout`
has one `Slot` per variable, saying how that variable crosses the graph op:

- ``VALUE``: a tensor-like value, carried as it is; Python numbers become
  tensors of the slot's dtype;
- ``MAYBE``: a variable bound on some paths only: a ``(value, defined)`` pair;
- ``LIST``: a Python list that graph control flow appends to: its TensorArray;
- ``FIXED``: a Python value the statement leaves alone (or a variable
  unbound on every path): not carried; every path must leave it as it was.

Loops and branches plan their slots with the same `plan`, from what each
path gives the variable (a loop: its value before the loop and after an
iteration; a branch: what each branch leaves in it):

    slot = plan("x", entry, [("before the loop", 0), ("after an iteration", x1)], statement)
    layout = Layout([slot, ...])
    flat = layout.encode(values)      # what the While/Cond node carries; DoesNotFit if a value
    values = layout.decode(flat)      #   needs a wider layout (plan again with it)
"""

from __future__ import annotations

import dataclasses

from autoloop import dtypes, nest
from autoloop.control_flow.dtype_origin import why_dtype
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.errors import BranchTypeError, LoopVariableTypeError, stopping_conversion
from autoloop.ops import api
from autoloop.runtime.lists import TensorList
from autoloop.runtime.locations import describe, raise_from_user
from autoloop.runtime.specs import (
    LeafSpec, SpecError, as_spec, is_tensor_like, is_weak, kind_name, spec_of, unify, zeros_for)
from autoloop.runtime.undefined import MaybeUndefined, Undefined
from autoloop.runtime.values import is_python_scalar
from autoloop.tensor import Tensor

VALUE, MAYBE, LIST, FIXED = "value", "maybe", "list", "fixed"
MISSING = object()  # a branch output whose value before the statement is not known


@dataclasses.dataclass(frozen=True)
class Statement:
    """The statement being staged, for messages: ``the while loop at model.py:12``.

    A `guard` is the ``if`` conversion put after a ``return``, ``break`` or
    ``continue`` to skip the code that follows it: ``(jump, lines)``, or
    ``("return", lines, retval)`` naming the variable that holds the return
    value. Messages then speak of that jump, never of an ``if`` the user did
    not write:

        'y' is float32 where the break at line 7 did not run and int32 where the break at line 7 ran
    """

    what: str  # "while loop", "for loop", "if statement"
    location: tuple | None
    guard: tuple | None = None
    # the names the compiler made, each with what it stands for (`autoloop.source_map.generated_names`)
    generated: dict = dataclasses.field(default_factory=dict, compare=False)

    def __str__(self):
        if self.guard is not None:
            return f"the code after {self._jumps()} (at {describe(self.location)})"
        return f"the {self.what} at {describe(self.location)}"

    @property
    def sides(self) -> tuple:
        """How messages name the two paths of an ``if``: (taken, not taken)."""
        if self.guard is None:
            return ("in the if branch", "in the else branch")
        jump, lines = self.guard[:2]
        if not lines:
            return (f"where no {jump} ran", f"where a {jump} ran")
        if len(lines) == 1:
            return (f"where the {jump} at line {lines[0]} did not run", f"where the {jump} at line {lines[0]} ran")
        jumps = self._jumps()
        return (f"where none of {jumps} ran", f"where one of {jumps} ran")

    @property
    def of(self) -> str:
        """What follows the paths in a message: `` of the if statement at ...`` (a guard's paths say it all)."""
        return "" if self.guard is not None else f" of {self}"

    def subject(self, name: str) -> str:
        """How messages name variable `name`: ``'y'``; a name the compiler made, as what the user wrote:
        ``the return value (of the returns at lines 4 and 6)``, ``whether the break at line 9 ran``
        (the lines left out where this statement's paths already say them)."""
        meaning = self.generated.get(name)
        if meaning is None:
            return f"'{name}'"
        what, lines = meaning
        if what == "return value":
            if self.guard is not None and self.guard[2:] == (name,):
                return "the return value"
            return f"the return value (of {_jump_words('return', lines)})" if lines else "the return value"
        return f"whether {_jump_words(what, lines)} ran"

    def is_return_value(self, name: str) -> bool:
        return self.generated.get(name, ("",))[0] == "return value"

    def loop_variable(self, name: str) -> str:
        """``loop variable 'y'``, or what the compiler's loop variable `name` stands for (`subject`)."""
        return self.subject(name) if name in self.generated else f"loop variable '{name}'"

    def described(self, layout) -> tuple:
        """What the graph op keeps for a backend's messages, as plain data: this statement, how its two
        paths are named (`sides`), and per variable `layout` carries its name in messages (`subject`) and
        whether it travels as ``(value, defined)`` (a variable some paths leave unassigned)."""
        return str(self), self.sides, {slot.name: (self.subject(slot.name), slot.kind == MAYBE)
                                       for slot in layout.slots if slot.kind != FIXED}

    def _jumps(self) -> str:
        return _jump_words(*self.guard[:2])

    @property
    def location_text(self) -> str:
        return describe(self.location)

    @property
    def is_loop(self) -> bool:
        return self.what.endswith("loop")

    def fail(self, error):
        raise_from_user(stopping_conversion(error), self.location)


def _jump_words(jump: str, lines) -> str:
    """``the return at line 4``, ``the breaks or returns at lines 7, 9 and 12``, ``a continue``."""
    if not lines:
        return f"a {jump}"
    if len(lines) == 1:
        return f"the {jump} at line {lines[0]}"
    plural = " or ".join(f"{word}s" for word in jump.split(" or "))
    return f"the {plural} at lines {', '.join(str(line) for line in lines[:-1])} and {lines[-1]}"


@dataclasses.dataclass(frozen=True, eq=False)
class Slot:
    """How one state variable crosses the graph op; see the module docstring."""

    kind: str
    name: str
    spec: object = None  # VALUE/MAYBE: LeafSpec structure (None leaves travel as they are); LIST: element LeafSpec
    fixed: object = None  # FIXED: the value every path leaves
    tentative: bool = False  # VALUE from a Python number: its dtype is a guess an iteration may widen
    weak: object = False  # per leaf (a structure like `spec`, or one bool): every path gives a Python
    # number there, so the tensor acts like one (Tensor._weak); for LIST: every item is one

    def same_as(self, other) -> bool:
        return (self.kind, self.name, self.spec, self.tentative, self.weak) == (
            other.kind, other.name, other.spec, other.tentative, other.weak) and same_value(self.fixed, other.fixed)


class DoesNotFit(Exception):
    """A path gave a variable a value its slot cannot carry (`reason`): plan again with `value`."""

    def __init__(self, position, value, reason=""):
        super().__init__(reason)
        self.position, self.value, self.reason = position, value, reason


class Copies:
    """Python containers handed to a traced body in place of the originals.

    Tracing may mutate what it is given; the originals must not change. The
    copy remembers its original, so planning can tell an appended copy from
    a list the body built anew.
    """

    def __init__(self):
        self._originals: dict = {}  # id(copy) -> (copy, original)

    def copy(self, value):
        if isinstance(value, TensorList):
            made = value.copy()
        elif type(value) in (list, dict, set):
            made = type(value)(value)
        else:
            return value
        self._originals[id(made)] = (made, value)
        return made

    def original(self, value):
        entry = self._originals.get(id(value))
        return entry[1] if entry is not None and entry[0] is value else None


class Layout:
    """One `Slot` per state variable; encodes state for the graph op and decodes it back."""

    def __init__(self, slots):
        self.slots = tuple(slots)

    def same_as(self, other) -> bool:
        return len(self.slots) == len(other.slots) and all(
            a.same_as(b) for a, b in zip(self.slots, other.slots))

    def labels(self) -> tuple:
        """The names of the variables the graph op carries."""
        return tuple(slot.name for slot in self.slots if slot.kind != FIXED)

    def encode(self, values, incoming=None) -> tuple:
        """The carried values (FIXED slots dropped); DoesNotFit for a value that needs a wider slot.

        `incoming` (the state a loop iteration started from) gives what an
        unassigned MAYBE variable keeps.
        """
        flat = []
        for position, (slot, value) in enumerate(zip(self.slots, values)):
            before = incoming[position] if incoming is not None else None
            try:
                encoded = _ENCODERS[slot.kind](slot, value, before)
            except SpecError as error:
                raise DoesNotFit(position, value, str(error)) from None
            if slot.kind != FIXED:
                flat.append(encoded)
        return tuple(flat)

    def decode(self, flat, copies: Copies | None = None) -> tuple:
        """The user's values from the carried ones; FIXED containers as copies when `copies` is given."""
        values, flat = [], iter(flat)
        for slot in self.slots:
            if slot.kind == FIXED:
                values.append(copies.copy(slot.fixed) if copies is not None else slot.fixed)
            elif slot.kind == MAYBE:
                value, defined = next(flat)
                values.append(MaybeUndefined(slot.name, _marked(value, slot.weak), defined))
            elif slot.kind == LIST:
                values.append(TensorList(next(flat), weak=slot.weak))
            else:
                values.append(_marked(next(flat), slot.weak))
        return tuple(values)

    def empty_outputs(self) -> tuple:
        """Carried values for a path that raises when it runs (they are never used)."""
        flat = []
        for slot in self.slots:
            if slot.kind == VALUE:
                flat.append(zeros_for(slot.spec))
            elif slot.kind == MAYBE:
                flat.append((zeros_for(slot.spec), api.constant(False)))
            elif slot.kind == LIST:
                flat.append(TensorList.from_values([], slot.spec.dtype, slot.spec.shape).array)
        return tuple(flat)


def _marked(value, weak):
    """`value` with the tensors at the leaves where `weak` holds marked weak."""
    if not nest.is_nested(weak):
        if weak and isinstance(value, Tensor):
            value._weak = True
        return value
    for leaf, leaf_weak in zip(nest.flatten(value), nest.flatten(weak)):
        if leaf_weak and isinstance(leaf, Tensor):
            leaf._weak = True
    return value


def weak_leaves(values):
    """Per leaf of the (same-structured) `values`: whether every one is a Python number or weak tensor."""
    values = [v.value if isinstance(v, MaybeUndefined) else v for v in values]
    flat = [nest.flatten(v) for v in values]
    leaves = [all(is_weak(leaf) for leaf in column) for column in zip(*flat)]
    return nest.pack_sequence_as(values[0], leaves) if nest.is_nested(values[0]) else leaves[0]


# -- encoding ------------------------------------------------------------------------------------

def _encode_value(slot, value, before):
    if type(value) is Tensor and isinstance(slot.spec, LeafSpec) and value.dtype is slot.spec.dtype:
        return value  # the common case, first
    if isinstance(value, TensorList) or not is_tensor_like(value):
        raise SpecError(kind_name(value))
    if slot.spec is None:
        return value
    try:
        nest.assert_same_structure(slot.spec, value, check_types=False)
    except (TypeError, ValueError):
        raise SpecError("structure") from None
    leaves = []
    for leaf, spec in zip(nest.flatten(value), nest.flatten(slot.spec)):
        if isinstance(leaf, Tensor) and spec is not None and leaf.dtype is not spec.dtype \
                and slot.kind == VALUE and not slot.tentative and not leaf._weak:
            leaves.append(leaf)  # a tensor that changed dtype: the graph op reports it in its words
        else:
            leaves.append(as_spec(leaf, spec))
    return nest.pack_sequence_as(value, leaves)


def _encode_maybe(slot, value, before):
    if isinstance(value, MaybeUndefined):
        return (_encode_value(slot, value.value, None), value.defined)
    if isinstance(value, Undefined):
        if isinstance(before, MaybeUndefined):
            return (before.value, before.defined)
        return (zeros_for(slot.spec), api.constant(False))
    return (_encode_value(slot, value, None), api.constant(True))


def _encode_list(slot, value, before):
    if isinstance(value, TensorList):
        if value.array.dtype is not slot.spec.dtype:
            raise SpecError(kind_name(value))
        return value.array
    if type(value) is list:
        try:
            return TensorList.from_values(value, slot.spec.dtype, slot.spec.shape).array
        except (TypeError, ValueError) as error:
            raise SpecError(str(error)) from None
    raise SpecError(kind_name(value))


def _encode_fixed(slot, value, before):
    if not same_value(value, slot.fixed):
        raise SpecError(kind_name(value))
    return None


_ENCODERS = {VALUE: _encode_value, MAYBE: _encode_maybe, LIST: _encode_list, FIXED: _encode_fixed}


def no_fit(statement, layout, misfit):
    """The error for a layout that planning cannot widen any further to fit `misfit`."""
    slot = layout.slots[misfit.position]
    statement.fail(ValueError(
        f"{statement.subject(slot.name)} is {kind_name(misfit.value)} after {statement}, which graph control flow "
        f"cannot carry: {misfit.reason}"))


def same_value(a, b) -> bool:
    """Whether `a` and `b` are the same Python value: identical, or equal containers of identical items."""
    if a is b:
        return True
    if isinstance(a, Undefined) and isinstance(b, Undefined):
        return True
    if type(a) is not type(b) or isinstance(a, (Tensor, TensorArray, TensorList, MaybeUndefined)):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (bool, int, float, str, bytes, frozenset, set)):
        return a == b
    return False


# -- planning ------------------------------------------------------------------------------------

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
    _reject_changed_containers(name, outcomes, copies, statement)
    if all(isinstance(v, Undefined) for v in values):
        return Slot(FIXED, name, fixed=base)
    defined = [(label, v) for label, v in outcomes if is_tensor_like(v) or isinstance(v, MaybeUndefined)]
    others = [(label, v) for label, v in outcomes
              if not (is_tensor_like(v) or isinstance(v, (MaybeUndefined, Undefined)))]
    if others or not defined:
        _reject_kinds(name, outcomes, others, statement)
    try:
        spec = unify(name, [v for _, v in defined], "")
    except SpecError as error:
        _reject_dtypes(name, entry, defined, statement, error)
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
            statement.fail(ValueError(
                f"'{name}' is {kind_name(value)} {label} and a list appended to on another path of "
                f"{statement}; graph control flow carries a list only when every path leaves a list in "
                f"it: assign '{name}' a list before the {statement.what}"))
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
                statement.fail(TypeError(
                    f"'{name}' is a list that {statement} appends to, so it becomes a list of tensors, "
                    f"but it holds {kind_name(item)} {label}; only tensors and numbers can be appended "
                    f"in graph control flow"))
            items.append(item)
    shapes = [item.shape if isinstance(item, LeafSpec) else spec_of(item).shape for item in items]
    for shape in shapes[1:]:
        if not shape.is_compatible_with(shapes[0]):
            statement.fail(ValueError(
                f"'{name}' is a list that {statement} appends to, so it becomes a list of tensors of "
                f"one shape, but it holds items of shapes {shapes[0]} and {shape}; graph control flow "
                f"cannot carry a list of differently shaped items"))
    try:
        return unify(name, items, "")
    except SpecError:
        error_type = LoopVariableTypeError if statement.is_loop else BranchTypeError
        statement.fail(error_type(
            f"'{name}' is a list that {statement} appends items of different dtypes to; a list built in "
            f"graph control flow holds one dtype: cast the items (autoloop.cast)"))


def _extends(original, value) -> bool:
    return len(value) >= len(original) and all(a is b for a, b in zip(original, value))


def _reject_changed_containers(name, outcomes, copies, statement):
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


def _reject_kinds(name, outcomes, others, statement):
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


def _reject_dtypes(name, entry, defined, statement, error):
    subject = statement.subject(name)
    every = "every return" if statement.is_return_value(name) else "every path"
    if error.structures is not None:
        first, other = nest.describe_structures(*error.structures)
        if statement.is_loop:
            fix = ("Every return must give the same structure" if statement.is_return_value(name) else
                   "Give it its final structure before the loop")
            statement.fail(LoopVariableTypeError(
                f"{statement.loop_variable(name)} must keep its nested structure across iterations: it enters "
                f"{statement} as {first} but is {other} after one iteration. {fix}."))
        statement.fail(BranchTypeError(
            f"{subject} is {first} {defined[0][0]} and {other} {defined[-1][0]}{statement.of}; "
            f"{every} must give {'it ' if every == 'every path' else ''}the same structure"))
    if statement.is_loop and isinstance(entry, Tensor):
        found = next((v for _, v in defined if _dtype_of(v) is not entry.dtype), None)
        why = why_dtype(found, wanted=entry.dtype)
        statement.fail(LoopVariableTypeError(
            f"{statement.loop_variable(name)} enters {statement} as {entry.dtype.name} but is "
            f"{_dtype_name(found)} after one iteration; a loop variable must keep its dtype. " + (
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
