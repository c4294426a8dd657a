"""Loop variables and branch outputs: flattening, labels and the checks between iterations.

A `LoopVars` holds the user's structure, its leaves (tensors or composites)
and the flat list of component tensors that a ``While``/``Cond`` node carries,
plus a human label per leaf for error messages (the user's variable name
when the compiler gave one, else a path like ``loop_vars[1].j``).
"""

from __future__ import annotations

import re

from autoloop import nest
from autoloop.control_flow.composite import (
    as_loop_value, components_of, describe_kind, rebuild, type_key)
from autoloop.control_flow.dtype_origin import why_dtype
from autoloop.errors import LoopVariableTypeError, ShapeInvariantError
from autoloop.shapes import TensorShape


class LoopVars:
    """The flattened form of a (possibly nested) structure of loop values.

    Python numbers and numpy arrays among the leaves become tensors, and
    `structure` holds the converted leaves: that is what cond and body are
    given, and what a loop that runs zero times returns.
    """

    def __init__(self, structure, names=None, root: str = "loop_vars"):
        pairs = nest.flatten_with_paths(structure)
        self.labels = [_label(path, names, root) for path, _ in pairs]
        self.leaves = [as_loop_value(leaf, label) for (_, leaf), label in zip(pairs, self.labels)]
        self.structure = nest.pack_sequence_as(structure, self.leaves)
        self.counts = [len(components_of(leaf)) for leaf in self.leaves]

    def components(self) -> list:
        return [c for leaf in self.leaves for c in components_of(leaf)]

    def component_labels(self) -> list[str]:
        labels = []
        for leaf, label in zip(self.leaves, self.labels):
            parts = components_of(leaf)
            if len(parts) == 1:
                labels.append(label)
            else:
                fields = _COMPONENT_FIELDS.get(type(leaf).__name__, [str(i) for i in range(len(parts))])
                labels.extend(f"{label} ({type(leaf).__name__}.{f})" for f in fields[:len(parts)])
        return labels

    def pack(self, components: list):
        """The user's structure rebuilt from new component tensors."""
        leaves, start = [], 0
        for leaf, count in zip(self.leaves, self.counts):
            leaves.append(rebuild(leaf, components[start:start + count]))
            start += count
        return nest.pack_sequence_as(self.structure, leaves)


_COMPONENT_FIELDS = {"SparseTensor": ["indices", "values", "dense_shape"],
                     "IndexedSlices": ["values", "indices", "dense_shape"],
                     "TensorArray": ["flow"]}


def _label(path, names, root) -> str:
    """``'x'`` or ``'x'[1]`` for a converted variable, ``loop_vars[1][0]`` otherwise."""
    if names is None:
        return root + "".join(f"[{key!r}]" for key in path)
    head, rest = (names[path[0]], path[1:]) if path else (names[0], ())
    return f"'{head}'" + "".join(f"[{key!r}]" for key in rest)


def component_invariants(loop_vars: LoopVars, shape_invariants) -> tuple[list[TensorShape], list[bool]]:
    """One shape invariant per component, from the user's (structured) invariants, and for each
    whether the user gave it (else it is the initial shape)."""
    if shape_invariants is None:
        user = [None] * len(loop_vars.leaves)
    else:
        try:
            nest.assert_same_structure(loop_vars.structure, shape_invariants, check_types=False)
        except (ValueError, TypeError):
            raise ValueError(
                f"shape_invariants must have the same structure as loop_vars: loop_vars is "
                f"{nest.map_structure_up_to_leaves(loop_vars.structure)!r}, shape_invariants is "
                f"{nest.map_structure_up_to_leaves(shape_invariants)!r}") from None
        user = nest.flatten(shape_invariants)
    shapes, given = [], []
    for label, leaf, invariant, count in zip(loop_vars.labels, loop_vars.leaves, user, loop_vars.counts):
        if hasattr(leaf, "component_invariants"):
            try:
                shapes.extend(leaf.component_invariants(invariant))
            except ShapeInvariantError as error:  # say which loop variable the invariant was for
                raise ShapeInvariantError(f"loop variable {label}: {error}") from None
        else:
            shapes.append(leaf.shape if invariant is None else TensorShape(invariant))
        given.extend([invariant is not None] * count)
    return shapes, given


def check_entry_shapes(loop_vars: LoopVars, invariants, hint: str) -> None:
    """Each initial value must be an instance of its shape invariant."""
    for label, component, invariant in zip(loop_vars.component_labels(), loop_vars.components(), invariants):
        if not component.shape.is_subtype_of(invariant):
            raise ShapeInvariantError(
                f"The shape invariant specified for loop variable {label} is not compatible with "
                f"its initial shape: it enters the loop with shape {component.shape}, but the "
                f"specified shape invariant is {invariant}. {hint}")


def check_iteration(before: LoopVars, after_structure, invariants, hint: str, names=None, given=()) -> LoopVars:
    """`after_structure` (what the body returned) checked against `before`.

    Raises LoopVariableTypeError for a change of nested structure, kind or
    dtype, ShapeInvariantError for a shape that breaks its invariant (`given`:
    per component, whether the user gave that invariant; else it is the
    initial shape). The messages say what TensorFlow's say (``'x' has dtype
    int32 before the loop, but dtype float32 after one iteration``), then the fix.
    Returns the flattened body results.
    """
    try:
        nest.assert_same_structure(before.structure, after_structure, check_types=False)
    except (ValueError, TypeError) as error:
        which, old, new = _first_difference(before.structure, after_structure, names)
        old, new = nest.describe_structures(old, new)
        raise LoopVariableTypeError(
            f"{which} does not have the same nested structure after one iteration: it enters the loop as "
            f"{old} but is {new} ({str(error).splitlines()[-1]}). Give it its final structure "
            f"before the loop.") from None
    after = LoopVars(after_structure, names)
    for label, old, new in zip(before.labels, before.leaves, after.leaves):
        if type_key(old) != type_key(new):
            raise LoopVariableTypeError(
                f"loop variable {label} enters the loop as a {_kind(old)} but is a {_kind(new)} after "
                f"one iteration; a loop variable must keep its type and dtype. Cast it (autoloop.cast) "
                f"or initialize it with the type it has in the loop.")
    labels = before.component_labels()
    given = list(given) or [False] * len(labels)
    for label, old, new, invariant, own in zip(labels, before.components(), after.components(), invariants, given):
        if old.dtype is not new.dtype:
            why = why_dtype(new, wanted=old.dtype)
            raise LoopVariableTypeError(
                f"loop variable {label} has dtype {old.dtype.name} before the loop, but dtype {new.dtype.name} "
                f"after one iteration; a loop variable must keep its dtype. " + (
                    f"{why[0].upper()}{why[1:]}." if why else
                    f"Initialize it with the dtype it has in the loop, or cast it back with "
                    f"autoloop.cast(..., autoloop.{old.dtype.name})."))
        if not new.shape.is_subtype_of(invariant):
            relaxed = invariant.most_specific_compatible_shape(new.shape)
            what = (f"has shape {new.shape} after one iteration, which does not conform with its shape "
                    f"invariant {invariant}" if own else
                    f"has shape {old.shape} before the loop, but shape {new.shape} after one iteration")
            raise ShapeInvariantError(
                f"loop variable {label} {what}. To allow the "
                f"shape to vary across iterations, {hint.format(label=label, variable=as_code(label), shape=_shape_code(relaxed))}")
    return after


def _first_difference(before, after, names):
    """``(description, old, new)`` of the first top-level loop variable whose structure changed."""
    if isinstance(before, list | tuple) and isinstance(after, list | tuple) and len(before) == len(after):
        for position, (old, new) in enumerate(zip(before, after)):
            try:
                nest.assert_same_structure(old, new, check_types=False)
            except (ValueError, TypeError):
                label = f"'{names[position]}'" if names is not None else f"loop_vars[{position}]"
                return f"loop variable {label}", old, new
    return "the loop variables", before, after


def _kind(value) -> str:
    kind = describe_kind(value)
    dtype = getattr(value, "dtype", None)
    return f"{kind} of {dtype.name}" if dtype is not None else kind


def as_code(label: str) -> str:
    """The user's variable as they would write it: ``'x'[1]`` -> ``x[1]``."""
    return re.sub(r"^'([^']*)'", r"\1", label)


def _shape_code(shape: TensorShape) -> str:
    return "TensorShape(None)" if shape.rank is None else f"TensorShape({shape.as_list()})"
