"""Values of variables that are not bound on every path.

`Undefined(name)` stands for a local that no executed path has assigned yet
(converted code creates it before a loop or ``if`` that may be the first to
assign the name). Reading it through `read` raises UnboundLocalError as
Python would. After graph control flow a variable bound on some paths only
is a `MaybeUndefined`: a tensor (from the assigning path) and a boolean
tensor saying whether it was assigned; `read` turns it into a graph check
that raises when the graph runs on a path that did not assign it.

    x = Undefined("x")
    read(x)            # UnboundLocalError: local variable 'x' is read at f.py:3 ...
"""

from __future__ import annotations

import dataclasses
import sys

from autoloop import nest, source_map
from autoloop.errors import stops_conversion
from autoloop.ir import context
from autoloop.ops import api
from autoloop.ops import runtime_checks  # noqa: F401  (registers CheckDefined, AssertTrue)
from autoloop.ops.dispatch import apply
from autoloop.runtime.locations import caller_location, describe, raise_from_user
from autoloop.tensor import Tensor


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


class HeldBack(TracedUnboundError):
    """A Python error (``acc[5]``, ``d['k']``, ``1 // 0``) raised while tracing code that may never
    run: a graph branch, or the lazy operand of ``and``/``or``/``if``-expressions. Python raises
    it only if that code runs, so the staging code turns it into a graph op raising `exception`
    (at `location`, the user's line) when the graph runs that path.
    """

    def __init__(self, exception: BaseException, location):
        super().__init__(str(exception))
        self.exception = exception
        self.location = location

    # what data-dependent Python code raises (an unbound read: a name only a handler or a path Python
    # did not take assigned, read where no `al__.read` check stands)
    HELD = (LookupError, ArithmeticError, UnboundLocalError)

    @classmethod
    def of(cls, error):
        """`error` as a HeldBack if it is one to hold back (not autoloop's own, nor raised while
        one propagated), else None."""
        # The program's own raise or assert (`exceptions.raised`) too: raised as it is inside a try
        # that catches errors, for its handlers; one they did not catch leaves the branch here.
        own = isinstance(error, cls.HELD) or getattr(error, "__autoloop_raised__", False)
        if own and not stops_conversion(error) and not stops_conversion(error.__context__):
            return cls(error, source_map.innermost_location(error.__traceback__))
        return None


def read(value):
    """`value`, checked to be bound: the runtime side of ``al__.read(x)``."""
    if isinstance(value, Undefined):
        location = caller_location()
        where = f" at {location[0]}:{location[1]}" if location else ""
        message = (f"local variable '{value.name}' is used before assignment: it is read{where} but no path "
                   f"that ran before assigned it")
        if context.current_graph() is not None:  # maybe inside a graph branch that never runs: let it decide
            stopped = sys.exc_info()[1]
            if stops_conversion(stopped):
                raise stopped  # a finally block runs while conversion stops: nothing to hold back
            raise TracedUnboundError(message)
        raise_from_user(UnboundLocalError(message), location)
    if isinstance(value, MaybeUndefined):
        location = caller_location()
        from autoloop.runtime.exceptions import reject_inside_catching_try  # (it builds on this module)
        reject_inside_catching_try(f"the read of '{value.name}', which may be unbound when the graph runs,",
                                   location, staged=True)
        return checked(value, f"local variable '{value.name}' is used before assignment: it is read at "
                              f"{describe(location)} but no path that ran before assigned it", "UnboundLocalError")
    return value


def return_value(value):
    """The function's result: None if no return statement ran, as in Python."""
    if isinstance(value, Undefined):
        return None
    if isinstance(value, MaybeUndefined):
        location = caller_location()
        return checked(value, f"the function reached its end at {describe(location)} without a return "
                              f"statement on the path that ran; in a graph every path must return a value",
                       "MissingReturnError")
    return value


def checked(value: MaybeUndefined, message: str, error: str, op: str = "CheckDefined"):
    """`value.value`, each tensor guarded by a graph check (`op`) that raises `error` where it is undefined."""
    def check(leaf):
        if not isinstance(leaf, Tensor):
            return leaf
        return apply(op, [value.defined, leaf], {"message": message, "error": error})
    return nest.map_structure(check, value.value)


def raise_when_run(error):
    """A graph op, in the graph being traced, that raises `error` when it runs: an unbound read,
    or (an error with an ``exception``) the user's exception held back until its path runs."""
    if getattr(error, "already_staged", False):
        return  # the graph being built raises it already (every path of a cond raises)
    from autoloop.runtime.exceptions import reject_inside_catching_try  # (it builds on this module)
    held = getattr(error, "exception", None) or UnboundLocalError()
    reject_inside_catching_try(f"the {type(held).__name__} that graph control flow holds back here",
                               getattr(error, "location", None) or caller_location(), staged=True)
    exception = getattr(error, "exception", None)
    attrs = {"message": str(error), "error": "UnboundLocalError"} if exception is None else {
        "message": None, "exception": exception}
    apply("AssertTrue", [api.constant(False)], attrs)
    if getattr(error, "location", None) is not None:  # shown at the raise, not at the branch's if
        context.current_graph().nodes[-1].location = error.location
