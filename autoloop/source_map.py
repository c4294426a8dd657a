"""Where generated code came from: generated file:line -> user file:line.

The compiler registers a map for every function it emits, and forgets it
when the emitted code is freed; anything that reports a location (graph
nodes, error frames) translates through here, so users see their own file
and line, never generated code.
"""

from __future__ import annotations

_MAPS: dict[str, dict[int, tuple[str, int]]] = {}


def register(generated_filename: str, line_map: dict[int, tuple[str, int]]) -> dict:
    """Record that line ``n`` of `generated_filename` came from ``line_map[n]``; returns the map kept."""
    kept = _MAPS[generated_filename] = dict(line_map)
    return kept


def forget(generated_filename: str, kept: dict) -> None:
    """Drop the map `register` returned (not a newer one registered under the same name since)."""
    if _MAPS.get(generated_filename) is kept:
        del _MAPS[generated_filename]


def lookup(filename: str, lineno: int):
    """The user's ``(file, line)`` for a generated location, or None."""
    line_map = _MAPS.get(filename)
    if line_map is None:
        return None
    return line_map.get(lineno)


def is_generated(filename: str) -> bool:
    return filename in _MAPS
