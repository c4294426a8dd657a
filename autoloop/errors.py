"""autoloop's errors: one hierarchy, rooted at `AutoloopError`.

Errors that API.md gives a builtin type for (TypeError for a loop variable
whose dtype changes, ValueError for a shape that changes, ...) subclass both
`AutoloopError` and that builtin, so ``except ValueError`` keeps working.
"""

from __future__ import annotations


class AutoloopError(Exception):
    """Base of every error autoloop raises on purpose."""


class InvalidArgumentError(AutoloopError, ValueError):
    """An op was given values it cannot work on, found while running a graph."""


class FailedPreconditionError(AutoloopError, RuntimeError):
    """An op ran before what it needs was ready (a TF1 variable read before it was initialised)."""


class DivisionByZeroError(InvalidArgumentError, ZeroDivisionError):
    """Integer ``//`` or ``%`` by zero: Python's ZeroDivisionError, TensorFlow's InvalidArgumentError."""


class LoopVariableTypeError(AutoloopError, TypeError):
    """A loop variable or branch output changed dtype or nested structure."""


class ShapeInvariantError(AutoloopError, ValueError):
    """A loop variable's shape broke its shape invariant."""


class UnsupportedError(AutoloopError, NotImplementedError):
    """A construct graph control flow cannot express (a try/except around a staged loop)."""


class GradientError(AutoloopError, ValueError):
    """A gradient cannot pass where it was asked to."""


class BackendError(AutoloopError, NotImplementedError):
    """A graph asks for what the chosen backend cannot compile (XLA: a shape that changes in a loop,
    a list that grows without a bound); raised while tracing, naming the user's line and the fix."""


def stopping_conversion(error: BaseException) -> BaseException:
    """`error`, marked as one that stops converting or tracing (a documented limitation).

    The runtime then never holds it back, and an error a ``finally`` block
    of the user's raises while it propagates does not hide it.
    """
    error.__autoloop_stops_conversion__ = True
    return error


def stops_conversion(error) -> bool:
    """Whether `error` is autoloop's own: an AutoloopError or one marked by `stopping_conversion`."""
    return isinstance(error, AutoloopError) or getattr(error, "__autoloop_stops_conversion__", False)


def raise_at(error: BaseException, location):
    """Raise `error` from a frame that shows the user's ``(file, line)``.

    The traceback then ends in ``File "<user file>", line N`` and, because the
    file is the user's real file, shows their source line.
    """
    if location is None:
        raise error
    filename, lineno = location
    code = compile("\n" * (max(lineno, 1) - 1) + "raise __autoloop_error__", filename, "exec")
    try:
        exec(code, {"__autoloop_error__": error})
    finally:
        error = None  # no reference cycle through this frame
