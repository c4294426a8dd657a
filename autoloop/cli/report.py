"""The command line's one-line messages, each ending with the user's ``file:line`` when known.

    autoloop: error: TypeError: Floor does not take int32 tensors ... (model.py:37)
    autoloop: interrupted while the graph ran, at the loop of model.py:12

The location is the innermost frame of the user's code in the error's
traceback (generated code is mapped back through `autoloop.source_map`),
the file and line of a `SyntaxError`, or, for a Ctrl-C while a graph runs,
the line of the op that was running.
"""

from __future__ import annotations

import os
import re
import sys

from autoloop import source_map

# A location the message already ends with: "(in Floor at FILE:LINE)" or "(FILE, line N)".
_TRAILING_LOCATION = re.compile(r"\s*\((?:in \S+ at )?[^()]*(?::\d+|, line \d+)\)\.?$")


def user_location(error: BaseException):
    """``(file, line)`` of the user's code where `error` happened, or None."""
    location = getattr(error, "autoloop_location", None)
    if location is not None:
        return location
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        return error.filename, error.lineno
    return source_map.innermost_location(error.__traceback__, user_files=True)


def where(location) -> str:
    """``file:line``, the file relative to the working directory when it is below it."""
    filename, line = location
    relative = os.path.relpath(filename) if os.path.isabs(filename) else filename
    return f"{relative if not relative.startswith('..') else filename}:{line}"


def error_line(error: BaseException, describe_type: bool) -> str:
    """The one line for `error`: its first line, with its type, ending with the user's location."""
    if isinstance(error, SyntaxError) and error.filename:
        message = f"syntax error: {error.msg}"
    else:
        text = str(error).splitlines()[0] if str(error) else ""
        message = f"{type(error).__name__}: {text}" if describe_type else text
    message = message.replace(os.getcwd() + os.sep, "")  # paths as the command line was given them
    location = user_location(error)
    if location is None:
        return message
    return f"{_TRAILING_LOCATION.sub('', message)} ({where(location)})"


def interrupted_line(interrupt: KeyboardInterrupt, running: bool) -> str:
    """The one line for a Ctrl-C: what was going on, and the user's line if known."""
    what = "interrupted while the graph ran" if running else "interrupted"
    location = user_location(interrupt)
    if location is None:
        return what
    return f"{what}, at {where(location)}"


def say(line: str) -> None:
    print(f"autoloop: {line}", file=sys.stderr)
