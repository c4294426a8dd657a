"""Where in the user's source a runtime call was made.

Converted code calls the runtime from generated lines; the compiler's
source map turns those into the user's ``(file, line)``.
"""

from __future__ import annotations

import sys

from autoloop import source_map
from autoloop.errors import raise_at


def caller_location(depth: int = 2):
    """The user's ``(file, line)`` of the nearest generated-code frame above us."""
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if source_map.is_generated(filename):
            return source_map.lookup(filename, frame.f_lineno)
        frame = frame.f_back
    return None


def caller_names(depth: int = 2) -> dict:
    """What the compiler's names mean in the nearest generated-code frame above us
    (`source_map.generated_names`); empty outside converted code."""
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if source_map.is_generated(filename):
            return source_map.generated_names(filename)
        frame = frame.f_back
    return {}


def traceback_location(traceback):
    """The user's ``(file, line)`` of the innermost generated-code frame of `traceback`, or None."""
    return source_map.innermost_location(traceback)


def describe(location) -> str:
    return f"{location[0]}, line {location[1]}" if location else "unknown location"


def raise_from_user(error, location):
    """Raise `error` from a frame at the user's line (plainly if unknown)."""
    raise_at(error, location)
