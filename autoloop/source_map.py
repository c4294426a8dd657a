"""Where generated code came from: generated file:line -> user file:line.

The compiler registers a map for every function it emits, and forgets it
when the emitted code is freed; anything that reports a location (graph
nodes, error frames) translates through here, so users see their own file
and line, never generated code.

Messages that name the user's variables find the user's frame (skipping
autoloop's own) and read the expression it is evaluating from its source,
by the columns of the instruction that runs:

    frame = user_frame(sys._getframe(1))
    expression_at(frame)      # the ast node of `xs[i]`
    location_of(frame)        # ("model.py", 12)
"""

from __future__ import annotations

import ast
import linecache
import os

_MAPS: dict[str, dict[int, tuple[str, int]]] = {}
_NAMES: dict[str, dict[str, tuple]] = {}  # generated file -> its generated names (`generated_names`)
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def register(generated_filename: str, line_map: dict[int, tuple[str, int]], names=None) -> dict:
    """Record that line ``n`` of `generated_filename` came from ``line_map[n]``, and what the names the
    compiler made there stand for (`names`: name -> ``(what, user lines)``, see `generated_names`);
    returns the map kept."""
    kept = _MAPS[generated_filename] = dict(line_map)
    _NAMES[generated_filename] = dict(names or {})
    return kept


def forget(generated_filename: str, kept: dict) -> None:
    """Drop the map `register` returned (not a newer one registered under the same name since)."""
    if _MAPS.get(generated_filename) is kept:
        del _MAPS[generated_filename]
        del _NAMES[generated_filename]


def generated_names(generated_filename: str) -> dict:
    """The names the compiler made in `generated_filename`, each with what it stands for in the user's
    source: ``{"retval_": ("return value", (4, 6)), "break_": ("break", (9,))}`` (empty if none)."""
    return _NAMES.get(generated_filename, {})


def lookup(filename: str, lineno: int):
    """The user's ``(file, line)`` for a generated location, or None."""
    line_map = _MAPS.get(filename)
    if line_map is None:
        return None
    return line_map.get(lineno)


def is_generated(filename: str) -> bool:
    return filename in _MAPS


def format_location(location) -> str:
    if location is None:
        return "<unknown>"
    return f"{location[0]}:{location[1]}"


def user_frame(frame):
    """The innermost frame, from `frame` outwards, that runs the user's code or code generated from it."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if is_generated(filename) or not filename.startswith((_PACKAGE_DIR, "<frozen")):
            return frame
        frame = frame.f_back
    return None


def generated_frame(frame):
    """The innermost frame, from `frame` outwards, that runs code generated from the user's; None if none."""
    while frame is not None and not is_generated(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def stack_location(frame, generated_only=False):
    """The user's ``(file, line)`` of the innermost frame, from `frame` outwards, that runs code generated
    from theirs (mapped back) or, unless `generated_only`, their own code (not autoloop's); None if none.

    With `generated_only` (the runtime, called by converted code) the first generated frame answers,
    even with None; otherwise a generated line the map does not know is passed over.
    """
    while frame is not None:
        filename = frame.f_code.co_filename
        if is_generated(filename):
            location = lookup(filename, frame.f_lineno)
            if location is not None or generated_only:
                return location
        elif not generated_only and not filename.startswith((_PACKAGE_DIR, "<frozen")):
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


def innermost_location(traceback, user_files=False, stop=None):
    """The user's ``(file, line)`` of the innermost frame of `traceback` that runs generated code (mapped
    back), or with `user_files` also of the user's own files (`is_user_file`); None if there is none.
    `stop(frame)`, where given, ends the search with None when it holds for a frame."""
    location = None
    while traceback is not None:
        frame = traceback.tb_frame
        if stop is not None and stop(frame):
            return None
        filename = frame.f_code.co_filename
        if is_generated(filename):
            location = lookup(filename, traceback.tb_lineno) or location
        elif user_files and is_user_file(filename):
            location = (filename, traceback.tb_lineno)
        traceback = traceback.tb_next
    return location


def is_user_file(filename: str) -> bool:
    """Whether `filename` is a real file of the user's: not autoloop's, not another installed library's
    or the standard library's, not generated code."""
    if filename.startswith("<") or not os.path.isabs(filename) and not os.path.exists(filename):
        return False
    path = os.path.abspath(filename)
    return not path.startswith(_PACKAGE_DIR) and not path.startswith(_library_dirs())


def _library_dirs() -> tuple:
    import sysconfig
    return tuple({os.path.abspath(sysconfig.get_paths()[key]) + os.sep
                  for key in ("stdlib", "platstdlib", "purelib", "platlib")})


def location_of(frame):
    """The user's ``(file, line)`` of `frame` (a generated line mapped back), or None."""
    filename = frame.f_code.co_filename
    if is_generated(filename):
        return lookup(filename, frame.f_lineno)
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
