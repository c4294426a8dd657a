"""Where generated code came from: generated file:line -> user file:line.

The compiler registers a map for every function it emits; anything that
reports a location (graph nodes, error frames) translates through here, so
users see their own file and line, never generated code.
"""

from __future__ import annotations

_MAPS: dict[str, dict[int, tuple[str, int]]] = {}


def register(generated_filename: str, line_map: dict[int, tuple[str, int]]) -> None:
    """Record that line ``n`` of `generated_filename` came from ``line_map[n]``."""
    _MAPS[generated_filename] = dict(line_map)


def lookup(filename: str, lineno: int):
    """The user's ``(file, line)`` for a generated location, or None."""
    line_map = _MAPS.get(filename)
    if line_map is None:
        return None
    return line_map.get(lineno)


def is_generated(filename: str) -> bool:
    return filename in _MAPS
