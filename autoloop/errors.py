"""autoloop's errors: one hierarchy, rooted at `AutoloopError`.

Errors that API.md gives a builtin type for (TypeError for a loop variable
whose dtype changes, ValueError for a shape that changes, ...) subclass both
`AutoloopError` and that builtin, so ``except ValueError`` keeps working.
"""

from __future__ import annotations

import ast
import functools
import linecache
from typing import NoReturn, TypeVar

_Error = TypeVar("_Error", bound=BaseException)


class AutoloopError(Exception):
    """Base of every error autoloop raises on purpose."""


class InvalidArgumentError(AutoloopError, ValueError):
    """An op was given values it cannot work on, found while running a graph."""


class FailedPreconditionError(AutoloopError, RuntimeError):
    """An op ran before what it needs was ready (a TF1 variable read before it was initialised)."""


class DivisionByZeroError(InvalidArgumentError, ZeroDivisionError):
    """Integer ``//`` or ``%`` by zero: Python's ZeroDivisionError, TensorFlow's InvalidArgumentError."""


class InputMismatchError(InvalidArgumentError, TypeError):
    """A concrete function called on a tensor of another dtype or shape than its trace's: Python's
    TypeError, TensorFlow's InvalidArgumentError."""


class OutOfScopeError(AutoloopError, TypeError, ValueError):
    """A graph tensor used while another graph is built (one that escaped its trace): TensorFlow's
    TypeError, and a ValueError as autoloop reported it before."""


class LoopVariableTypeError(AutoloopError, TypeError):
    """A loop variable or branch output changed dtype or nested structure."""


class BranchTypeError(AutoloopError, TypeError):
    """The paths of a graph ``if`` (or the branches of `cond`) give a variable different dtypes or
    nested structures: ``'y' is int32 in the if branch and float32 in the else branch ...``."""


class ShapeInvariantError(AutoloopError, ValueError):
    """A loop variable's shape broke its shape invariant."""


class UnsupportedError(AutoloopError, NotImplementedError):
    """A construct graph control flow cannot express (a try/except around a staged loop)."""


class LoopCapacityError(AutoloopError, RuntimeError):
    """A loop ran more iterations than its ``capacity`` (the bound given for what it saves or appends,
    which XLA preallocates); the loop is never cut short instead."""


class BackendError(AutoloopError, NotImplementedError):
    """A graph asks for what the chosen backend cannot compile (XLA: a shape that changes in a loop,
    a list that grows without a bound); raised while tracing, naming the user's line and the fix."""

    location: tuple | None = None  # the user's (file, line), where it is raised from


def stopping_conversion(error: _Error) -> _Error:
    """`error`, marked as one that stops converting or tracing (a documented limitation).

    The runtime then never holds it back, and an error a ``finally`` block
    of the user's raises while it propagates does not hide it.
    """
    error.__autoloop_stops_conversion__ = True  # type: ignore[attr-defined]  # a mark of our own
    return error


def stops_conversion(error) -> bool:
    """Whether `error` is autoloop's own: an AutoloopError or one marked by `stopping_conversion`."""
    return isinstance(error, AutoloopError) or getattr(error, "__autoloop_stops_conversion__", False)


def raise_at(error: BaseException, location) -> NoReturn:  # type: ignore[misc]  # the exec raises
    """Raise `error` from a frame that shows the user's ``(file, line)``.

    The traceback then ends in ``File "<user file>", line N, in <function>``:
    the file is the user's real file, so it shows their source line, and the
    frame is named after the user's function around that line (``<module>``
    only where there is none, or the source cannot be read).
    """
    if location is None:
        raise error
    filename, lineno = location
    code = compile(_raising_source(filename, max(lineno, 1)), filename, "exec")
    name = _function_around(filename, lineno)
    if name is not None:
        code = code.replace(co_name=name, co_qualname=name)
    try:
        exec(code, {"__autoloop_error__": error, "E": error})
    finally:
        del error  # no reference cycle through this frame


def _raising_source(filename: str, lineno: int) -> str:
    """Source whose line `lineno` raises ``__autoloop_error__`` (also called ``E``) over exactly the
    columns of the user's text there, so that a traceback shows their line without carets under a
    part of it (a line shorter than ``raise E`` gets them)."""
    user_line = linecache.getline(filename, lineno).rstrip().encode()
    body = user_line.lstrip()
    indent = user_line[:len(user_line) - len(body)].decode()
    statement = "raise E" if len(body) <= 7 else "raise(E" + " " * (len(body) - 8) + ")"
    if not indent:
        return "\n" * (lineno - 1) + statement
    if lineno < 2:  # no line above for the `if` that allows the indentation
        return "\n" * (lineno - 1) + "raise E"
    return "\n" * (lineno - 2) + "if 1:\n" + indent + statement


def _function_around(filename: str, lineno: int) -> str | None:
    """The name of the innermost function, lambda or class whose source holds line `lineno`.

    A lambda's first line belongs to the function around it: the error may come from the
    statement that holds the lambda (``cond(c, lambda: a, lambda: b)``), not from its body.
    """
    lines = linecache.getlines(filename)
    if not lines:
        return None
    found, start = None, 0
    for first, last, name in _scopes(filename, "".join(lines)):
        if name == "<lambda>":
            first += 1
        if first <= lineno <= last and first >= start:
            found, start = name, first
    return found


@functools.lru_cache(maxsize=16)  # a pure function of the text; errors come in runs from one file
def _scopes(filename: str, text: str) -> tuple:
    """``(first line, last line, name)`` of every function, lambda and class in `text`."""
    try:
        tree = ast.parse(text, filename)
    except (SyntaxError, ValueError):
        return ()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    return tuple((node.lineno, node.end_lineno, getattr(node, "name", "<lambda>"))
                 for node in ast.walk(tree) if isinstance(node, kinds))
