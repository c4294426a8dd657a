"""The user's source line that is creating an op right now, and the expression it evaluates.

Frames inside the autoloop package are skipped; frames in code the compiler
generated are translated back to the user's file and line. Messages that
name the user's variables read the expression a frame is evaluating from its
source (``xs[i]``, ``x.numpy()``), by the instruction's columns:

    frame = user_frame(sys._getframe(1))
    expression_at(frame)      # the ast node of `xs[i]`
    location_of(frame)        # ("model.py", 12)
"""

from __future__ import annotations

import ast
import linecache
import os
import sys

from autoloop import source_map

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_location():
    """``(file, line)`` of the innermost user frame, or None."""
    frame = user_frame(sys._getframe(1))
    while frame is not None:
        location = location_of(frame)
        if location is not None:
            return location
        frame = user_frame(frame.f_back)
    return None


def format_location(location) -> str:
    if location is None:
        return "<unknown>"
    return f"{location[0]}:{location[1]}"


def user_frame(frame):
    """The innermost frame, from `frame` outwards, that runs the user's code or code generated from it."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if source_map.is_generated(filename) or not (filename.startswith(_PACKAGE_DIR)
                                                      or filename.startswith("<frozen")):
            return frame
        frame = frame.f_back
    return None


def location_of(frame):
    """The user's ``(file, line)`` of `frame` (a generated line mapped back), or None."""
    filename = frame.f_code.co_filename
    if source_map.is_generated(filename):
        return source_map.lookup(filename, frame.f_lineno)
    return filename, frame.f_lineno


def expression_at(frame):
    """The expression `frame` is evaluating now (an `ast.expr`), read from its source, or None."""
    try:
        positions = list(frame.f_code.co_positions())[frame.f_lasti // 2]
    except IndexError:
        return None
    first, last, start, end = positions
    lines = linecache.getlines(frame.f_code.co_filename, frame.f_globals)
    if None in positions or last > len(lines):
        return None
    text = [line.encode() for line in lines[first - 1:last]]
    text[-1] = text[-1][:end]
    text[0] = text[0][start:]
    try:
        return ast.parse("(" + b"".join(text).decode() + ")", mode="eval").body
    except (SyntaxError, UnicodeDecodeError):
        return None
