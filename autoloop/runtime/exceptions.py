"""Exceptions in converted code: what ``finally`` blocks and ``raise`` statements need.

`suppress_if` drops the exception leaving a ``try`` statement whose
``finally`` block jumped (``return``, ``break`` or ``continue`` there
discards it, as in Python); an error the ``finally`` block raises itself
goes on::

    with suppress_if(lambda: finally_jumped) as finally_block:
        try:
            raise ValueError
        finally:
            entering_finally(finally_block)      # remembers the ValueError
            finally_jumped = True      # the user's `return` in finally

`raised` is what a converted ``raise`` raises: in Python and at the top of
a trace the user's exception; inside a graph branch or loop body (which may
never run) a `HeldBack`, as the runtime holds back Python errors there: the
staging code turns it into a graph op raising the exception when that path
runs. A failed Python-valued ``assert`` there is held back the same way
(`operators.assert_`).

    if x > 0:                       # x a tensor: staged
        raise ValueError('big')     # raise al__.raised(ValueError('big')): raised when the graph runs
"""

from __future__ import annotations

import sys
import threading

from autoloop.errors import UnsupportedError, stopping_conversion, stops_conversion
from autoloop.ir import context
from autoloop.runtime.locations import caller_location, describe, raise_from_user
from autoloop.ir.effects import has_effects
from autoloop.runtime.undefined import HeldBack, TracedUnboundError, raise_when_run
from autoloop.runtime.values import is_graph_tensor


class suppress_if:  # noqa: N801  (used like a function in converted code)
    """A context manager that swallows the exception the ``try`` body raised when ``jumped()``
    holds (the ``finally`` block calls `entering_finally` first thing)."""

    __slots__ = ("jumped", "pending")

    def __init__(self, jumped):
        self.jumped = jumped
        self.pending = None

    def __enter__(self):
        return self

    def enter(self):
        """Called as the ``finally`` block starts: remember the exception on its way out, if any."""
        self.pending = sys.exception() if hasattr(sys, "exception") else sys.exc_info()[1]

    def __exit__(self, kind, error, traceback):
        if kind is None or error is not self.pending or stops_conversion(error):
            return False  # no error, one the finally block raised, or autoloop's own
        jumped = self.jumped()
        if is_graph_tensor(jumped):
            location = caller_location()
            pending = _as_raised(error)
            raise stopping_conversion(UnsupportedError(
                f"the finally block of the try statement at {describe(location)} returns, breaks or continues "
                f"under a tensor condition, and its try body raised {type(pending).__name__}: {pending}. In Python the "
                f"jump discards that error; here whether it jumps is known only when the graph runs, after "
                f"tracing has stopped at the error. Make the condition a Python value, or move the jump out of "
                f"the finally block")) from None
        return bool(jumped)


def _as_raised(error):
    """`error` as the user's program raised it (what the runtime holds back or names differently)."""
    if isinstance(error, HeldBack):
        return error.exception
    return UnboundLocalError(str(error)) if isinstance(error, TracedUnboundError) else error


def entering_finally(block: suppress_if):
    """The first statement of a ``finally`` block that may jump: see `suppress_if`."""
    block.enter()


class AlwaysRaises(HeldBack):
    """Every path of a staged statement raises: the graph raises the error of the path taken.

    Nothing after the statement runs, so the code around it stops tracing;
    the staging code around it treats it like a raise, and the function being
    traced ends there (its graph raises when it runs).
    """

    already_staged = True

    def __init__(self, location):
        super().__init__(RuntimeError("every path of the statement raises"), location)


def raised(exception):
    """What ``raise exception`` raises in converted code (``raise al__.raised(...)``).

    The exception itself (a class is instantiated, as Python does), or a
    `HeldBack` of it while a graph branch or loop body is being traced.
    Inside a graph branch staged within the body of a ``try`` that catches
    errors, the handlers could never see it: an UnsupportedError.
    """
    if isinstance(exception, type) and issubclass(exception, BaseException):
        exception = exception()
    graph = context.current_graph()
    if graph is None or not isinstance(exception, Exception):
        return exception
    if stops_conversion(sys.exc_info()[1]):
        return exception  # a finally block runs while conversion stops: nothing to hold back
    exception.__autoloop_raised__ = True  # the program's own: see held_back_at_top
    tries = _active_tries()
    if tries and tries[-1][0] is graph:
        return exception  # the try around it catches it while tracing, as Python would
    location = caller_location()
    reject_inside_catching_try(f"raise {type(exception).__name__} inside graph control flow", location)
    if graph.parent is not None:
        return HeldBack(exception, location)
    return exception


def reject_inside_catching_try(what: str, location, staged: bool = False):
    """UnsupportedError if a ``try`` that catches errors is active and the graph being built is not
    its own, or `staged` (the error is a graph op already, raised only when the graph runs): an error
    the graph raises when it runs (`what` raises it) could never reach its handlers."""
    tries = _active_tries()
    if tries and (staged or what.startswith("an assert") or tries[-1][0] is not context.current_graph()):
        raise_from_user(UnsupportedError(
            f"{what} ({describe(location)}) within the try statement at line {tries[-1][1]}: its "
            f"handlers (or a jump in its finally block, which discards errors) could never see an error "
            f"raised when the graph runs; make the condition a Python value or move the try statement out "
            f"of the converted function"), location)


class try_body:  # noqa: N801  (used like a function in converted code)
    """``with al__.try_body(line):`` around the body of a ``try`` that catches errors.

    While it runs, a ``raise`` traced in a graph branch staged inside it is
    an error (the handlers would never see it); one in the graph the ``try``
    itself is traced in is raised as it is, for the handlers to catch.
    """

    __slots__ = ("line",)

    def __init__(self, line: int):
        self.line = line

    def __enter__(self):
        _active_tries().append((context.current_graph(), self.line))
        return self

    def __exit__(self, kind, error, traceback):
        _active_tries().pop()
        return False


def caught() -> None:
    """The first statement of every ``except`` handler in converted code.

    An error that stopped conversion (a documented limitation, such as a
    graph loop staged inside the ``try``) is never the program's to handle:
    raised again here when the handler caught it, or caught an error that a
    ``finally`` block raised while it propagated (which replaced it).
    """
    stopping = _stopping_error_in_context(sys.exception() if hasattr(sys, "exception") else sys.exc_info()[1])
    if stopping is not None:
        raise stopping


def held_back_at_top(error, location) -> bool:
    """Whether `error`, leaving the traced function, is raised by its graph instead.

    True for `AlwaysRaises` (the graph raises already), and for an error of
    the program itself (its ``raise`` or ``assert``, an unbound read, a lookup
    or arithmetic error) raised while tracing the function's own graph after
    effects that Python would have run first (a failed graph ``assert``, a
    ``print``): the graph then runs those and raises `error` after them, as
    Python does. The caller ends the trace with no result. autoloop's own
    reports (a documented limitation) are raised as they are.
    """
    if isinstance(error, AlwaysRaises):
        return True
    graph = context.current_graph()
    if graph is None or graph.parent is not None or not _programs_own(error):
        return False
    if _stopping_error_in_context(error) is not None:
        return False  # conversion stopped: that is what the user must see
    if not any(has_effects(node) for node in graph.nodes):
        return False  # nothing would run before it: raising now is what the graph would do
    exception = error.exception if isinstance(error, HeldBack) else (
        UnboundLocalError(str(error)) if isinstance(error, TracedUnboundError) else error)
    raise_when_run(HeldBack(exception, location))
    return True


def _programs_own(error) -> bool:
    if stops_conversion(error):
        return False
    return (getattr(error, "__autoloop_raised__", False) or isinstance(error, TracedUnboundError)
            or isinstance(error, (LookupError, ArithmeticError, NameError)))


def _stopping_error_in_context(error):
    """The error that stopped conversion, if `error` replaced it while a ``finally`` block ran.

    The user's finally blocks run while such an error propagates; an error
    they raise (often a read of a variable the unfinished statement never
    assigned) must not hide it.
    """
    seen = set()
    while error is not None and id(error) not in seen:
        if stops_conversion(error):
            return error
        seen.add(id(error))
        error = error.__context__
    return None


class _ThreadState(threading.local):
    tries: list | None = None


_state = _ThreadState()


def _active_tries() -> list:
    tries = _state.tries
    if tries is None:
        tries = _state.tries = []
    return tries


def in_graph_branch() -> bool:
    """Whether a graph branch or loop body is being traced (code that may not run)."""
    graph = context.current_graph()
    return graph is not None and graph.parent is not None


def user_visible(error):
    """The error a user should see for `error` leaving converted code (no internal wrappers).

    Inside a graph branch or loop body it is `error` itself: the staging code
    around it still has to hold it back.
    """
    if in_graph_branch():
        return error
    unsupported = _stopping_error_in_context(error)
    if unsupported is not None:
        return unsupported
    if isinstance(error, AlwaysRaises):
        return error  # handled by the traced function: see conversion
    if isinstance(error, HeldBack):
        return error.exception
    if isinstance(error, TracedUnboundError):
        return UnboundLocalError(str(error))
    return error
