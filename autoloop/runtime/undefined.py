"""Values of variables that are not bound on every path.

`Undefined(name)` stands for a local that no executed path has assigned yet
(converted code creates it before a loop or ``if`` that may be the first to
assign the name). Reading it through `read` raises UnboundLocalError as
Python would. After graph control flow a variable bound on some paths only
is a `MaybeUndefined`: a tensor (from the assigning path) and a boolean
tensor saying whether it was assigned; `read` turns it into a graph check
that raises when the graph runs on a path that did not assign it.
"""

from __future__ import annotations

import dataclasses

from autoloop.runtime.locations import caller_location, raise_from_user


class Undefined:
    """The value of `name` before any assignment ran."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"Undefined({self.name!r})"

    def __bool__(self):
        raise UnboundLocalError(f"local variable '{self.name}' is used before it is assigned")

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise UnboundLocalError(f"local variable '{self.name}' is used before it is assigned "
                                f"(reading .{attribute})")


@dataclasses.dataclass
class MaybeUndefined:
    """A variable assigned on some paths of graph control flow only.

    `value` is the tensor from the assigning path (zeros elsewhere) and
    `defined` a boolean tensor, true where a path assigned it.
    """

    name: str
    value: object
    defined: object


class TracedUnboundError(UnboundLocalError):
    """An unbound variable read while tracing: graph branches turn it into a run-time error."""


def read(value):
    """`value`, checked to be bound: the runtime side of ``al__.read(x)``."""
    if isinstance(value, Undefined):
        location = caller_location()
        where = f" at {location[0]}:{location[1]}" if location else ""
        message = f"local variable '{value.name}' is read{where} but no path that ran before assigned it"
        from autoloop.runtime import staging
        if staging.tracing():  # maybe inside a graph branch that never runs: let it decide
            raise TracedUnboundError(message)
        raise_from_user(UnboundLocalError(message), location)
    if isinstance(value, MaybeUndefined):
        from autoloop.runtime import staging
        return staging.checked_read(value, caller_location())
    return value


def return_value(value):
    """The function's result: None if no return statement ran, as in Python."""
    if isinstance(value, Undefined):
        return None
    if isinstance(value, MaybeUndefined):
        from autoloop.runtime import staging
        return staging.checked_return(value, caller_location())
    return value


def is_undefined(value) -> bool:
    return isinstance(value, (Undefined, MaybeUndefined))
