"""Which graph new ops go into.

Inside a ``building(graph)`` block ops add nodes to the innermost graph;
inside an ``eager()`` block they run at once. Outside both, ops run eagerly
unless a *default graph* is installed (`set_default_graph`, what
``autoloop.compat.v1.disable_eager_execution`` does): then they add nodes
to it, as TF1 code expects. The block stack is per thread; the default
graph is one for the program, like TensorFlow's.
"""

from __future__ import annotations

import contextlib
import threading

class _ThreadState(threading.local):
    # A class default, not getattr(..., None): a thread that never built a graph would otherwise pay
    # for a raised and caught AttributeError (0.5 µs) on every eager op and every call.
    stack: list | None = None


_state = _ThreadState()
_default_graph = None  # a callable giving the graph for ops outside any block, or None (eager)
# Graph and eager blocks open, recorders (GradientTapes) active, a default graph installed and
# `autoloop.config.run_functions_eagerly(True)`, in all threads together. While it is 0 (every eager
# op and call outside traces and tapes) there is nothing else to ask, and hot paths read this one
# number: a thread-local read is the costliest part of a call that a loop over large arrays has
# evicted from the caches.
BUSY = [0]
_count_lock = threading.Lock()


def count_busy(change: int) -> None:
    """Add `change` to `BUSY` (a block opened or closed, a recorder started or stopped)."""
    with _count_lock:
        BUSY[0] += change


def _stack() -> list:
    stack = _state.stack
    if stack is None:
        stack = _state.stack = []
    return stack


def current_graph():
    """The graph being built, or None when executing eagerly."""
    if not BUSY[0]:
        return None
    stack = _state.stack  # not _stack(): every eager op and call asks
    if stack:
        return stack[-1]  # None inside an eager() block
    return _default_graph() if _default_graph is not None else None


def is_being_built(graph) -> bool:
    """Whether this thread is building `graph` now: it, or a graph inside it, is in an open block."""
    for building_graph in _stack():
        while building_graph is not None:
            if building_graph is graph:
                return True
            building_graph = building_graph.parent
    return False


def set_default_graph(provider) -> None:
    """Send ops made outside any block to ``provider()`` (None: run them eagerly again)."""
    global _default_graph
    change = (provider is not None) - (_default_graph is not None)
    _default_graph = provider
    if change:
        count_busy(change)


@contextlib.contextmanager
def building(graph):
    """Send new ops into `graph` for the duration of the block."""
    with _block(graph):
        yield graph


@contextlib.contextmanager
def eager():
    """Run ops eagerly inside the block even while a graph is being built."""
    with _block(None):
        yield


def outermost_graph():
    """Where ops go outside every function being traced: the TF1 graph being built (the outermost one this
    thread builds, else the default one), or None (eagerly)."""
    tf1 = [graph for graph in _stack() if graph is not None and getattr(graph, "tf1_style", False)]
    if tf1:
        return tf1[0]
    return _default_graph() if _default_graph is not None else None


@contextlib.contextmanager
def _block(graph):
    stack = _stack()
    stack.append(graph)
    count_busy(1)
    try:
        yield
    finally:
        stack.pop()
        count_busy(-1)
