"""How the state of a staged loop or branch travels through graph control flow.

A staged statement's state is one value per user variable. Its `Layout`
has one `Slot` per variable, saying how that variable crosses the graph op:

- ``VALUE``: a tensor-like value, carried as it is; Python numbers become
  tensors of the slot's dtype;
- ``MAYBE``: a variable bound on some paths only: a ``(value, defined)`` pair;
- ``LIST``: a Python list that graph control flow appends to: its TensorArray;
- ``FIXED``: a Python value the statement leaves alone (or a variable
  unbound on every path): not carried; every path must leave it as it was.

Four modules, one job each: this one is the slots and their encoding;
`autoloop.runtime.layout_planning` picks each variable's slot from what the
paths give it (`plan`, the same for loops and branches);
`autoloop.runtime.layout_rejections` words the errors when no slot can carry
it; `autoloop.runtime.statement` names the statement in those messages.

    slot = plan("x", entry, [("before the loop", 0), ("after an iteration", x1)], statement)
    layout = Layout([slot, ...])
    flat = layout.encode(values)      # what the While/Cond node carries; DoesNotFit if a value
    values = layout.decode(flat)      #   needs a wider layout (plan again with it)
"""

from __future__ import annotations

import dataclasses

from autoloop import nest
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.ops import api
from autoloop.runtime.lists import TensorList
from autoloop.runtime.specs import LeafSpec, SpecError, as_spec, is_tensor_like, is_weak, kind_name, zeros_for
from autoloop.runtime.undefined import MaybeUndefined, Undefined
from autoloop.tensor import Tensor

VALUE, MAYBE, LIST, FIXED = "value", "maybe", "list", "fixed"


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
