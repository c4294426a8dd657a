"""Items and attributes as the state of converted loops and branches: ``al__.ref``.

Converted code reads and writes a composite variable (``x['b']``,
``self.total``) through ``al__.ref(x)['b']`` and ``al__.ref(self).total``
wherever it passes it between a statement and its functions, so that one
first assigned inside a loop or branch behaves as in Python:

- reading a key, index or attribute that does not exist gives
  `Undefined`, not an error (an error only where the user's own code reads it);
- storing `Undefined` removes it again (a path that did not assign it);
- storing a `MaybeUndefined` (assigned on some graph paths only) stores a
  tensor that raises KeyError / AttributeError when the graph runs on a path
  that did not assign it, and reading it back through ``ref`` gives the
  `MaybeUndefined` again (the check's own inputs), so the state keeps its
  "defined" flag. The check (``CheckAssigned``) runs only where the value is used.

    x = {}
    al__.ref(x)['b']                  # Undefined("['b']")
    al__.ref(x)['b'] = value          # x['b'] = value
"""

from __future__ import annotations

from autoloop.runtime.undefined import MaybeUndefined, Undefined, checked
from autoloop.tensor import Tensor

_ERRORS = {"item": "KeyError", "attribute": "AttributeError"}


class ref:  # noqa: N801 - converted code reads ``al__.ref(x)['b']``
    """A view of `target` whose missing items and attributes read as `Undefined`; see the module docstring."""

    __slots__ = ("_autoloop_target",)

    def __init__(self, target):
        object.__setattr__(self, "_autoloop_target", target)

    def __getattr__(self, name):
        target = object.__getattribute__(self, "_autoloop_target")
        try:
            value = getattr(target, name)
        except AttributeError:
            return Undefined(f".{name}")
        return _recovered(value, f".{name}")

    def __setattr__(self, name, value):
        target = object.__getattribute__(self, "_autoloop_target")
        if isinstance(value, Undefined):
            if hasattr(target, name):
                delattr(target, name)
            return
        setattr(target, name, _stored(value, f"attribute '{name}'", "attribute"))

    def __getitem__(self, key):
        target = object.__getattribute__(self, "_autoloop_target")
        try:
            value = target[key]
        except (KeyError, IndexError):
            return Undefined(f"[{key!r}]")
        return _recovered(value, f"[{key!r}]")

    def __setitem__(self, key, value):
        target = object.__getattribute__(self, "_autoloop_target")
        if isinstance(value, Undefined):
            if isinstance(target, dict):
                target.pop(key, None)
            return  # a list item cannot be unassigned: it existed, or the user's store raised
        target[key] = _stored(value, f"item {key!r}", "item")


def _stored(value, what, kind):
    if not isinstance(value, MaybeUndefined):
        return value
    message = (f"{what} is read, but it was assigned only on paths of graph control flow that did not "
               f"run; assign it before the loop or if statement, or on every path")
    return checked(value, message, _ERRORS[kind], op="CheckAssigned")


def _recovered(value, label):
    """A value `ref` stored for a MaybeUndefined is that MaybeUndefined again."""
    node = value.op if isinstance(value, Tensor) else None
    if node is not None and node.op == "CheckAssigned":
        defined, inner = node.inputs
        return MaybeUndefined(label, Tensor(value=inner), Tensor(value=defined))
    return value
