"""The user's source line that is creating an op right now.

Frames inside the autoloop package are skipped; frames in code the compiler
generated are translated back to the user's file and line (`source_map`).
"""

from __future__ import annotations

import sys

from autoloop.source_map import format_location, stack_location  # noqa: F401 (format_location: here too)


def user_location():
    """``(file, line)`` of the innermost user frame, or None."""
    return stack_location(sys._getframe(1))
