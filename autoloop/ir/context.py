"""Which graph new ops go into.

Outside any ``building(graph)`` block ops run eagerly; inside one they add
nodes to the innermost graph. The stack is per thread.
"""

from __future__ import annotations

import contextlib
import threading

_state = threading.local()


def _stack() -> list:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def current_graph():
    """The graph being built, or None when executing eagerly."""
    stack = getattr(_state, "stack", None)  # not _stack(): every eager op and call asks, 30 ns saved
    return stack[-1] if stack else None


@contextlib.contextmanager
def building(graph):
    """Send new ops into `graph` for the duration of the block."""
    stack = _stack()
    stack.append(graph)
    try:
        yield graph
    finally:
        stack.pop()


@contextlib.contextmanager
def eager():
    """Run ops eagerly inside the block even while a graph is being built."""
    stack = _stack()
    saved = stack[:]
    stack.clear()
    try:
        yield
    finally:
        stack[:] = saved
