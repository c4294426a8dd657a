"""The user's source line that is creating an op right now.

Frames inside the autoloop package are skipped; frames in code the compiler
generated are translated back to the user's file and line.
"""

from __future__ import annotations

import os
import sys

from autoloop import source_map

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_location():
    """``(file, line)`` of the innermost user frame, or None."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if source_map.is_generated(filename):
            mapped = source_map.lookup(filename, frame.f_lineno)
            if mapped is not None:
                return mapped
        elif not filename.startswith(_PACKAGE_DIR) and not filename.startswith("<frozen"):
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


def format_location(location) -> str:
    if location is None:
        return "<unknown>"
    return f"{location[0]}:{location[1]}"
