"""Where in the user's source a runtime call was made.

Converted code calls the runtime from generated lines; the compiler's
source map turns those into the user's ``(file, line)``.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from autoloop import source_map
from autoloop.errors import raise_at


def caller_location(depth: int = 2):
    """The user's ``(file, line)`` of the nearest generated-code frame above us."""
    return source_map.stack_location(sys._getframe(depth), generated_only=True)


def caller_names(depth: int = 2) -> dict:
    """What the compiler's names mean in the nearest generated-code frame above us
    (`source_map.generated_names`); empty outside converted code."""
    frame = source_map.generated_frame(sys._getframe(depth))
    return source_map.generated_names(frame.f_code.co_filename) if frame is not None else {}


def describe(location) -> str:
    return f"{location[0]}, line {location[1]}" if location else "unknown location"


def raise_from_user(error: BaseException, location) -> NoReturn:
    """Raise `error` from a frame at the user's line (plainly if unknown)."""
    raise_at(error, location)
