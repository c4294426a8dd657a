"""Eager op recording: how a `GradientTape` sees the ops that run outside a trace.

Every op `autoloop.ops.dispatch.apply` runs eagerly is reported to each
active *recorder* (a tape inside its ``with`` block):

    with recording(tape):
        y = x * x            # calls tape.record("Mul", {}, (x, x), (y,))

Eager loops report themselves too (`run_loop`): each recorder may run a loop
its own way, by wrapping the plain loop (a tape marks the ops of a
``back_prop=False`` loop, or keeps only checkpoints of a ``checkpoint=True``
loop and replays the rest when it differentiates).

A recorder has two methods: ``record(op_name, attrs, inputs, outputs)`` and
``wrap_loop(loop, run) -> run``. The stack of active recorders belongs to
the thread, like the stack of graphs being built (`autoloop.ir.context`);
`anywhere()` is a cheap first test for callers on fast paths (is any thread
recording at all?).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, NamedTuple

from autoloop.ir import context

class _ThreadState(threading.local):
    stack: list | None = None  # a class default: cheaper than getattr's caught AttributeError


_state = _ThreadState()
_recording_threads = [0]  # how many recorders are active in all threads together
_count_lock = threading.Lock()


def anywhere() -> bool:
    """Whether some thread has an active recorder (then `active()` says whether this one has)."""
    return _recording_threads[0] > 0


def _counted(change: int) -> None:
    with _count_lock:
        _recording_threads[0] += change
    context.count_busy(change)


def active() -> list:
    """This thread's active recorders, outermost first."""
    stack = _state.stack
    if stack is None:
        stack = _state.stack = []
    return stack


@contextlib.contextmanager
def recording(recorder):
    """Report the eager ops run inside the block to `recorder` as well."""
    stack = active()
    stack.append(recorder)
    _counted(1)
    try:
        yield recorder
    finally:
        stack.remove(recorder)
        _counted(-1)


@contextlib.contextmanager
def replaced(recorder, substitute):
    """Inside the block `substitute` takes `recorder`'s place (None: `recorder` stops recording)."""
    stack = active()
    position = next((k for k, r in enumerate(stack) if r is recorder), None)
    if position is None:
        yield
        return
    if substitute is None:
        del stack[position]
    else:
        stack[position] = substitute
    try:
        yield
    finally:
        if substitute is None:
            stack.insert(position, recorder)
        else:
            stack[stack.index(substitute)] = recorder


def start(recorder) -> None:
    """`recorder` starts recording in this thread (until `stop`): `recording` without a block."""
    active().append(recorder)
    _counted(1)


def stop(recorder) -> None:
    active().remove(recorder)
    _counted(-1)


def record(op_name: str, attrs: dict, inputs, outputs) -> None:
    """Tell the active recorders that op `op_name` ran on `inputs` (Tensors) giving `outputs`."""
    for recorder in tuple(active()):
        recorder.record(op_name, attrs, inputs, outputs)


class EagerLoop(NamedTuple):
    """What a recorder learns about an eager ``while_loop`` it may run its own way."""

    name: str
    location: Any  # the user's (file, line), or None
    back_prop: bool
    checkpoint: Any  # None, "sqrt" or a stride (`while_loop`'s checkpoint_option)
    tensors: Any  # state -> the state's tensors


def plain_loop(test, step, state, limit):
    """``while iterations < limit and test(state): state = step(state)``; the final state."""
    iterations = 0
    while (limit is None or iterations < limit) and test(state):
        state = step(state)
        iterations += 1
    return state


def run_loop(loop: EagerLoop, test, step, state, limit):
    """Run an eager loop, each active recorder wrapping how it runs (see the module docstring).

    `state` is the loop state (``loop.tensors(state)`` its tensors),
    ``test(state)`` a Python bool, ``step(state)`` the state after one
    iteration.
    """
    run = plain_loop
    for recorder in tuple(active()):
        run = recorder.wrap_loop(loop, run)
    return run(test, step, state, limit)
