"""Exceptions in converted code: what ``finally`` blocks and ``raise`` statements need.

`suppress_if` drops the exception leaving a ``try`` statement whose
``finally`` block jumped (``return``, ``break`` or ``continue`` there
discards it, as in Python)::

    with suppress_if(lambda: finally_jumped):
        try:
            raise ValueError
        finally:
            finally_jumped = True      # the user's `return` in finally

`raised` is what a converted ``raise`` raises: in Python and at the top of
a trace the user's exception; inside a graph branch or loop body (which may
never run) a `DeferredRaise` that the staging code turns into a graph op
raising the exception when that path runs. A failed Python-valued
``assert`` there is deferred the same way (`operators.assert_`).

    if x > 0:                       # x a tensor: staged
        raise ValueError('big')     # raise al__.raised(ValueError('big')): raised when the graph runs
"""

from __future__ import annotations

from autoloop.errors import AutoloopError
from autoloop.ir import context
from autoloop.runtime.locations import caller_location
from autoloop.runtime.undefined import TracedUnboundError


class suppress_if:  # noqa: N801  (used like a function in converted code)
    """A context manager that swallows the exception leaving it when ``jumped()`` holds."""

    __slots__ = ("jumped",)

    def __init__(self, jumped):
        self.jumped = jumped

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None or issubclass(kind, AutoloopError):
            return False  # autoloop's own errors (conversion, staging) are not the program's
        return bool(self.jumped())


class DeferredRaise(TracedUnboundError):
    """A ``raise`` or failed ``assert`` reached while tracing a graph branch or loop body.

    Python raises only if that path runs, so the staging code that catches
    it (as it catches an unbound read) puts a graph op in the branch or body
    that raises `exception` when the graph runs it; the rest of the trace
    goes on.
    """

    def __init__(self, exception: BaseException, location):
        super().__init__(str(exception))
        self.exception = exception
        self.location = location  # the user's (file, line) of the raise


def raised(exception):
    """What ``raise exception`` raises in converted code (``raise al__.raised(...)``).

    The exception itself (a class is instantiated, as Python does), or a
    `DeferredRaise` of it while a graph branch or loop body is being traced.
    """
    if isinstance(exception, type) and issubclass(exception, BaseException):
        exception = exception()
    if in_graph_branch() and isinstance(exception, Exception):
        return DeferredRaise(exception, caller_location())
    return exception


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
    if isinstance(error, DeferredRaise):
        return error.exception
    if isinstance(error, TracedUnboundError):
        return UnboundLocalError(str(error))
    return error
