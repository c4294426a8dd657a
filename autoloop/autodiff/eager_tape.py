"""The eager tape: the ops run outside a trace, recorded and differentiated.

A `Tape` is a recorder (`autoloop.ops.recording`): while active it keeps
every op that reads a *tracked* tensor (a watched one, or one such an op
produced), as TensorFlow's tape does. `backprop` sweeps the recorded ops
from last to first, calling the same gradient rules as a traced graph (on
eager tensors, through `autoloop.autodiff.forward_op.EagerOp`), so eager and
traced gradients agree.

Eager loops run op by op, so their iterations are recorded like any ops,
with two exceptions a tape arranges through `wrap_loop`:

- the ops of a ``while_loop(..., back_prop=False)`` are marked: a gradient
  that reaches one raises ValueError naming the loop;
- a ``while_loop(..., checkpoint=...)`` is recorded as one
  `CheckpointedLoop` entry that keeps only the states at its checkpoints
  (`autoloop.autodiff.checkpoint` says where): when the sweep reaches it,
  it reruns each segment from its checkpoint under a fresh tape and sweeps
  those ops, segment by segment from the last, continuing the same sums in
  the same order, so the gradient is the fully recorded one, bit for bit.
"""

from __future__ import annotations

from autoloop.autodiff.checkpoint import schedule_for_option
from autoloop.autodiff.forward_op import EagerOp
from autoloop.autodiff.paths import op_connections
from autoloop.autodiff.rules import Accumulator, call_rule, is_differentiable
from autoloop.ops import recording
from autoloop.ops.location import format_location


class Entry:
    """One recorded op; `blocked` is the ``back_prop=False`` loop it ran in, if any."""

    __slots__ = ("op_name", "attrs", "inputs", "outputs", "blocked")
    traceable = True  # `backward` builds ops into a graph being built, as a vectorized Jacobian traces the sweep

    def __init__(self, op_name, attrs, inputs, outputs, blocked):
        self.op_name, self.attrs, self.inputs, self.outputs, self.blocked = op_name, attrs, inputs, outputs, blocked

    def reaches(self, reached: set) -> None:
        """Add the outputs a path from `reached` gets to."""
        connections = op_connections(self.op_name, [t.dtype for t in self.inputs], [t.dtype for t in self.outputs])
        for tensor, inputs in zip(self.outputs, connections):
            if any(id(self.inputs[k]) in reached for k in inputs):
                reached.add(id(tensor))

    def backward(self, accumulator: Accumulator, reached) -> None:
        if not any(_on_path(t, reached) and accumulator.has(id(t)) for t in self.outputs):
            return
        if self.blocked is not None:
            raise ValueError(
                f"cannot differentiate through the while loop {self.blocked.name!r} at "
                f"{format_location(self.blocked.location)}: it was built with back_prop=False. Build it "
                f"with back_prop=True, or put stop_gradient on its inputs if no gradient should flow through it")
        grads = [accumulator.total(id(t)) if _on_path(t, reached) else None for t in self.outputs]
        inputs = self.inputs
        op = EagerOp(self.op_name, self.attrs, inputs, self.outputs, lambda k: _on_path(inputs[k], reached))
        for tensor, grad in zip(inputs, call_rule(op, grads)):
            if grad is not None and _on_path(tensor, reached) and is_differentiable(tensor.dtype):
                accumulator.add(id(tensor), grad)


def _on_path(tensor, reached) -> bool:
    return reached is None or id(tensor) in reached


class Tape:
    """Records eager ops that read tracked tensors; see the module docstring.

    `parent` (a tape replaying a checkpointed loop) lends its tracked tensors:
    a replayed body reads values from outside the loop that the parent tracks.
    """

    def __init__(self, parent=None):
        self.entries: list = []
        self.tracked: dict = {}  # id -> tensor (held, so ids stay unique)
        self.parent = parent
        self._blocked = None

    def is_tracked(self, tensor) -> bool:
        return id(tensor) in self.tracked or (self.parent is not None and self.parent.is_tracked(tensor))

    def watch(self, tensor) -> None:
        self.tracked[id(tensor)] = tensor

    def add_entry(self, entry) -> None:
        """Record an entry made elsewhere (a traced function's call); its outputs become tracked."""
        self.entries.append(entry)
        for tensor in entry.outputs:
            self.tracked[id(tensor)] = tensor

    def record(self, op_name, attrs, inputs, outputs) -> None:
        if not any(self.is_tracked(t) for t in inputs):
            return
        self.entries.append(Entry(op_name, attrs, inputs, outputs, self._blocked))
        for tensor in outputs:
            self.tracked[id(tensor)] = tensor

    def wrap_loop(self, loop, run):
        if not loop.back_prop:
            def blocked(test, step, state, limit):
                saved, self._blocked = self._blocked, loop
                try:
                    return run(test, step, state, limit)
                finally:
                    self._blocked = saved
            return blocked
        if loop.checkpoint is not None:
            return lambda test, step, state, limit: self._checkpointed(loop, test, step, state, limit)
        return run

    def _checkpointed(self, loop, test, step, state, limit):
        """Run the loop keeping only checkpoints; record it as one `CheckpointedLoop`."""
        schedule = schedule_for_option(loop.checkpoint)
        follower = _Follower(self)
        flags = [self.is_tracked(t) for t in loop.tensors(state)]
        initial = state
        checkpoints = []
        iterations = 0
        with recording.replaced(self, follower):
            while limit is None or iterations < limit:
                follower.start(loop.tensors(state), flags)
                if not test(state):
                    break
                if iterations == schedule.position(len(checkpoints)):
                    checkpoints.append((state, flags))
                state = step(state)
                flags = [follower.follows(t) for t in loop.tensors(state)]
                iterations += 1
        if any(flags) or follower.captured:
            entry = CheckpointedLoop(loop, schedule, step, initial, checkpoints, iterations, state,
                                     list(follower.captured.values()))
            self.entries.append(entry)
            for tensor, flag in zip(loop.tensors(state), flags):
                if flag:
                    self.tracked[id(tensor)] = tensor
        return state


class _Follower:
    """While a checkpointed loop runs forward: which state tensors depend on tracked ones (nothing is kept)."""

    def __init__(self, tape: Tape):
        self.tape = tape
        self.current: dict = {}
        self.captured: dict = {}  # tracked tensors from outside the loop that it read

    def start(self, tensors, flags) -> None:
        self.current = {id(t): t for t, flag in zip(tensors, flags) if flag}

    def follows(self, tensor) -> bool:
        return id(tensor) in self.current or self.tape.is_tracked(tensor)

    def record(self, op_name, attrs, inputs, outputs) -> None:
        reads = False
        for tensor in inputs:
            if id(tensor) in self.current:
                reads = True
            elif self.tape.is_tracked(tensor):
                reads = True
                self.captured[id(tensor)] = tensor
        if reads:
            self.current.update((id(t), t) for t in outputs)

    def wrap_loop(self, loop, run):
        return run


class CheckpointedLoop:
    """An eager checkpointed loop on the tape: its checkpoints, and how to rerun an iteration."""

    what = "a checkpointed while loop"  # for messages
    traceable = False  # its backward reruns the loop eagerly

    def __init__(self, loop, schedule, step, initial, checkpoints, iterations, final, captured):
        self.loop, self.schedule, self.step = loop, schedule, step
        self.initial, self.checkpoints, self.iterations, self.final = initial, checkpoints, iterations, final
        self.captured = captured
        self.inputs = list(loop.tensors(initial)) + captured
        self.outputs = list(loop.tensors(final))

    def reaches(self, reached: set) -> None:
        if any(id(t) in reached for t in self.inputs):
            reached.update(id(t) for t in self.outputs if is_differentiable(t.dtype))

    def backward(self, accumulator: Accumulator, reached) -> None:
        if not any(_on_path(t, reached) and accumulator.has(id(t)) for t in self.outputs):
            return
        tensors = self.loop.tensors
        ends = self.outputs
        for k in reversed(range(len(self.checkpoints))):
            state, flags = self.checkpoints[k]
            stop = min(self.schedule.position(k + 1), self.iterations)
            replay = Tape(parent=self._outer_tracked())
            for tensor, flag in zip(tensors(state), flags):
                if flag:
                    replay.watch(tensor)
            with recording.recording(replay):
                for _ in range(stop - self.schedule.position(k)):
                    state = self.step(state)
            for old, new in zip(ends, tensors(state)):
                if old is not new:
                    accumulator.move(id(old), id(new))
            # Paths start at the tracked state and the values read from outside the loop, so
            # gradients go only to tensors that live on (a replay's constants die with it).
            on_path = {id(t) for t in replay.tracked.values()} | {id(t) for t in self.captured}
            for entry in replay.entries:
                entry.reaches(on_path)
            for entry in reversed(replay.entries):
                entry.backward(accumulator, on_path)
            for entry in replay.entries:  # freed with the replay: their ids may be reused
                for tensor in entry.outputs:
                    accumulator.discard(id(tensor))
            ends = list(tensors(self.checkpoints[k][0]))

    def _outer_tracked(self):
        return _Tracked({id(t): t for t in self.captured})


class _Tracked:
    """Tensors a replay may read from outside the loop, as a tape parent."""

    def __init__(self, tensors: dict):
        self._tensors = tensors

    def is_tracked(self, tensor) -> bool:
        return id(tensor) in self._tensors


def backprop(entries, targets, seeds, sources) -> list:
    """Gradients of ``sum(targets[k] * seeds[k])`` for each of `sources` over the recorded `entries`."""
    reached = {id(s) for s in sources if is_differentiable(s.dtype)}
    for entry in entries:
        entry.reaches(reached)
    accumulator = Accumulator()
    for target, seed in zip(targets, seeds):
        if seed is not None and id(target) in reached:
            accumulator.add(id(target), seed)
    for entry in reversed(entries):
        entry.backward(accumulator, reached)
    return [accumulator.total(id(s)) for s in sources]
