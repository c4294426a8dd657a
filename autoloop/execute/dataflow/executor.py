"""The dataflow executor: runs the lowered form with frames, iterations and dead values.

    values = run(lowered, fetches, feeds={placeholder_output: array}, targets=[node, ...])
    outputs = call(lowered, *input_arrays)   # the function's outputs, all its effects run

A `Plan` (plan.py) decides once what runs: only what the fetches and
targets need, and each loop either as one node running compiled code or
as frames (the cost rule). Then every node runs as soon as its inputs are
there, tagged with its frame and iteration:

- a node with a dead input (the side of a ``Switch`` not taken) does not
  run and passes deadness on; a ``Merge`` forwards the first live input;
- an ``Enter`` starts its loop's frame (one per iteration of the frame
  around it): its value goes to the first iteration, or, loop-invariant, to
  every iteration; a live ``NextIteration`` starts the next iteration, a
  dead one (the body of the last, false, test) goes nowhere; an ``Exit``
  gives its value to the frame around it;
- at most ``parallel_iterations`` iterations of one frame are in flight:
  the next waits until the oldest is done. Iterations are non-strict: a
  loop variable's next iteration may start while another variable is still
  computing the previous one (a loop counter running ahead of ``x``, as in ``tf.while_loop``'s
  documentation).

One thread schedules. Kernels on large arrays (which numpy runs without
holding the GIL) go to a small thread pool, so independent ones overlap on
several cores; everything else runs on the scheduling thread. A worker runs
a kernel's chain (`Plan.chain_next`) before it hands the last result back,
so it does not wait for the scheduling thread to wake between them; each
worker computes one kernel or chain at a time, so a loop holds about one
iteration's temporaries per worker, and less where a chain of element-wise
kernels ends in a sum over every axis: that runs block by block
(`autoloop.execute.dataflow.fused`), its large intermediate never whole. (Even with
one worker, large kernels run on the pool: glibc's allocator hands the
main thread's freed arrays back to the system and faults them in again on
the next iteration, which made a 1M-element loop four times slower there.) Effects keep
program order through the ordering edges and tokens lowering made.

When a kernel fails, nothing new starts; the kernels already running
finish, and the failure first in program order (as the reference
interpreter would meet it) is raised, naming the op and the user's line.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import os
import queue
import threading
import time

import numpy as np

from autoloop.execute.dataflow.plan import (  # noqa: F401 - OFFLOAD_ELEMENTS, UnfedPlaceholderError: public here
    LOOP_MERGE, OFFLOAD_ELEMENTS, Plan, UnfedPlaceholderError)
from autoloop.execute.dataflow.workers import Workers

DEFAULT_WORKERS = min(4, os.cpu_count() or 1)


class _Dead:
    """The value of a tensor on a path not taken."""

    def __repr__(self):
        return "<dead>"


DEAD = _Dead()
_TOKEN = np.True_  # what a live Token carries
_CONTROL = -1  # the slot of an ordering edge


def call(graph, *inputs, workers: int | None = None, compile_loops: bool | None = None) -> tuple:
    """Run `graph` (a `DataflowGraph`) as its function: outputs for `inputs`, every effect run.

    The plan is made at the first call and kept on `graph`, one per `compile_loops`.
    """
    if len(inputs) != len(graph.inputs):
        raise TypeError(f"graph {graph.name!r} takes {len(graph.inputs)} inputs, got {len(inputs)}")
    plan = graph.call_plans.get(compile_loops)
    if plan is None:
        plan = graph.call_plans[compile_loops] = Plan(graph, graph.outputs, graph.inputs, graph.effects,
                                                      compile_loops)
    return tuple(execute(plan, inputs, workers))


def run(graph, fetches, feeds=None, targets=(), workers: int | None = None,
        compile_loops: bool | None = None) -> list:
    """The values of `fetches` (outputs of `graph`'s root frame) after running what they and `targets` need.

    `feeds` maps outputs to values that replace them (placeholders must be
    fed when needed). `workers` is the thread pool's size (0: every kernel
    on the calling thread). `compile_loops` is the `Plan`'s. Plans once per
    call: a caller running the same fetches again keeps a `Plan` and calls
    `execute`.
    """
    feeds = dict(feeds or {})
    return execute(Plan(graph, list(fetches), list(feeds), list(targets), compile_loops), list(feeds.values()),
                   workers)


def execute(plan: Plan, feed_values, workers: int | None = None, trace: list | None = None) -> list:
    """Run `plan` with `feed_values` for its fed values (in order): the values of its fetches.

    With a `trace` list, each kernel run appends ``(node, iteration tags,
    start, end, thread id, thread name)`` (times from ``time.perf_counter``);
    a chain run block by block appends one entry, its `FusedSum` for the node
    (its ``name`` and ``op`` join its nodes').
    """
    with np.errstate(all="ignore"):
        return _Run(plan, workers, trace).execute(list(feed_values))


# -- the state of one run ----------------------------------------------------------------------
class _Iteration:
    """One iteration of one frame instance: inputs gathered so far, work in flight."""

    __slots__ = ("frame_run", "number", "pending", "outstanding", "children")

    def __init__(self, frame_run, number: int):
        self.frame_run = frame_run
        self.number = number
        self.pending: dict[int, list] = {}  # node -> [inputs still awaited, input values, dead?]
        self.outstanding = 0  # nodes of this iteration queued or running
        self.children: dict[int, _FrameRun] = {}  # inner frames entered from this iteration

    def tags(self) -> list[int]:
        """Iteration numbers from the outermost loop in, for program order."""
        numbers = []
        current = self
        while current.frame_run.parent is not None:
            numbers.append(current.number)
            current = current.frame_run.parent
        return numbers[::-1]


class _FrameRun:
    """One instance of a frame: one execution of a loop, entered from one iteration around it."""

    __slots__ = ("frame", "parent", "iterations", "started", "finished", "deferred", "invariants",
                 "enters_waiting", "exits_sent")

    def __init__(self, frame, parent: _Iteration | None, enters: int):
        self.frame = frame
        self.parent = parent
        self.iterations: dict[int, _Iteration] = {}
        self.started = 0  # iterations started
        self.finished = 0  # iterations done (they finish in order)
        self.deferred: list = []  # NextIteration values for iteration `started`, waiting for room
        self.invariants: list = []  # (Enter, value) of the loop-invariant Enters arrived so far
        self.enters_waiting = enters
        self.exits_sent: set[int] = set()


class _Run:
    def __init__(self, plan: Plan, workers: int | None, trace: list | None):
        self.plan = plan
        self.workers = DEFAULT_WORKERS if workers is None else workers
        self.trace = trace
        self.ready = collections.deque()
        self.results = [DEAD] * len(plan.fetches)
        self.received = [False] * len(plan.fetches)
        self.done_queue = queue.SimpleQueue()
        self.in_flight = 0  # kernels running on the pool
        self.pool = None
        self.waiting: list = []  # large kernels ready for the pool, a heap by program order
        self.failures: list = []
        self._order = itertools.count()  # ties in program order: first come, first served
        self.handlers = [_HANDLERS.get(node.op, _Run._kernel).__get__(self) if node.runs_loop is None
                         else self._kernel for node in plan.nodes]

    # -- the loop ------------------------------------------------------------------------
    def execute(self, feed_values: list) -> list:
        plan = self.plan
        root = _FrameRun(plan.graph.root, None, 0)
        first = self._start_iteration(root)
        for value, readers, positions in zip(feed_values, plan.fed_readers, plan.fed_fetches):
            for reader, slot in readers:
                self._deliver(reader, slot, value, first)
            for position in positions:
                self.results[position], self.received[position] = value, True
        for node in plan.start:
            self._push(node, first, [], False)
        try:
            self._loop()
        finally:
            if self.pool is not None:
                self.pool.stop()
        if self.failures:
            self._raise_first_failure()
        self._check_finished(first)
        return self.results

    def _loop(self) -> None:
        ready, done, handlers = self.ready, self.done_queue, self.handlers
        while True:
            while ready and not self.failures:
                handlers[ready[0][0]](*ready.popleft())  # nothing here keeps the inputs alive afterwards
                while self.in_flight and not done.empty():
                    self._finish_kernel(*done.get())
            # Workers are given kernels only now, once the ready work has queued its large kernels: the
            # oldest first, so a finished iteration's next kernel (which takes over its buffer) goes before
            # a later iteration's first one (which would allocate another).
            self._fill_pool()
            if self.in_flight == 0:
                return
            self._finish_kernel(*done.get())

    def _push(self, node: int, iteration: _Iteration, values, dead: bool) -> None:
        iteration.outstanding += 1
        self.ready.append((node, iteration, values, dead))

    def _done_with(self, iteration: _Iteration) -> None:
        iteration.outstanding -= 1
        if iteration.outstanding == 0:
            self._advance(iteration.frame_run)

    # -- moving values -------------------------------------------------------------------------
    def _deliver(self, reader: int, slot: int, value, iteration: _Iteration) -> None:
        plan = self.plan
        merge = plan.merges[reader]
        if merge:
            self._merge_input(reader, merge, value, iteration)
            return
        waiting = iteration.pending.get(reader)
        if waiting is None:
            waits_for = plan.waits_for[reader]
            if waits_for == 1:
                iteration.outstanding += 1
                self.ready.append((reader, iteration, [value] if slot != _CONTROL else [], value is DEAD))
                return
            waiting = iteration.pending[reader] = [waits_for, [None] * len(plan.nodes[reader].inputs), False]
        if slot != _CONTROL:
            waiting[1][slot] = value
        if value is DEAD:
            waiting[2] = True
        waiting[0] -= 1
        if waiting[0] == 0:
            del iteration.pending[reader]
            self._push(reader, iteration, waiting[1], waiting[2])

    def _merge_input(self, reader: int, merge: int, value, iteration: _Iteration) -> None:
        if merge == LOOP_MERGE:  # one input per iteration: the Enter's, then NextIteration's
            self._push(reader, iteration, [value], value is DEAD)
            return
        state = iteration.pending.get(reader)
        if state is None:
            state = iteration.pending[reader] = [len(self.plan.nodes[reader].inputs), False]
        state[0] -= 1
        if value is not DEAD and not state[1]:
            state[1] = True
            self._push(reader, iteration, [value], False)
        if state[0] == 0:
            del iteration.pending[reader]
            if not state[1]:
                self._push(reader, iteration, [DEAD], True)

    def _emit(self, node: int, iteration: _Iteration, outputs, dead: bool) -> None:
        """Send `node`'s outputs (all dead if `dead`) to its readers in `iteration`."""
        plan = self.plan
        deliver = self._deliver
        for index, readers in enumerate(plan.readers[node]):
            value = DEAD if dead else outputs[index]
            for reader, slot in readers:
                deliver(reader, slot, value, iteration)
        control_readers = plan.control_readers[node]
        if control_readers:
            control = DEAD if dead else _TOKEN
            for reader in control_readers:
                deliver(reader, _CONTROL, control, iteration)
        fetched = plan.fetched_outputs[node]
        if fetched is not None and iteration.frame_run.parent is None:
            for index, positions in enumerate(fetched):
                for position in positions:
                    self.results[position] = DEAD if dead else outputs[index]
                    self.received[position] = True

    # -- ordinary kernels --------------------------------------------------------------------------
    def _kernel(self, node: int, iteration: _Iteration, values, dead: bool) -> None:
        if dead:
            self._emit(node, iteration, (), True)
            self._done_with(iteration)
            return
        kernel = self.plan.kernels[node]
        if self.workers and self.plan.offloadable[node] and _large(values):
            position = _program_position(self.plan.nodes[node], iteration)
            heapq.heappush(self.waiting, (position, next(self._order), node, iteration, kernel, values))
            return  # the pool takes it once the ready work is queued (`_loop`): oldest first
        try:
            if self.trace is None:
                results = kernel(values)
            else:
                results = self._traced(node, iteration, kernel, values)
        except Exception as error:  # noqa: BLE001 - reported after the run stops, first in program order
            self._fail(node, iteration, error)
            return
        self._emit(node, iteration, results, False)
        self._done_with(iteration)

    def _traced(self, node: int, iteration: _Iteration, kernel, values):
        """`kernel(values)`, its start, end and thread appended to the trace (list.append is atomic)."""
        start = time.perf_counter()
        try:
            return kernel(values)
        finally:
            thread = threading.current_thread()
            self.trace.append((self.plan.nodes[node], iteration.tags(), start, time.perf_counter(), thread.ident,
                               thread.name))

    def _fused(self, run, iteration: _Iteration, values):
        """``run(values)`` (a `FusedSum`), traced as one box named after its kernels if there is a trace."""
        if self.trace is None:
            return run(values)
        start = time.perf_counter()
        results = run(values)
        if results is not None:
            thread = threading.current_thread()
            self.trace.append((run, iteration.tags(), start, time.perf_counter(), thread.ident, thread.name))
        return results

    def _fill_pool(self) -> None:
        """Keep every worker busy with the waiting kernel first in program order, and maybe one queued behind.

        Oldest iterations first: their results free memory soonest, so the
        arrays in flight stay about one iteration's per worker (all of the
        first kernels of ten iterations at once would hold ten arrays, and
        numpy's allocator would hand them back to the system and fault them
        in again). A kernel waits queued behind a busy worker only where
        `Plan.may_queue` says nothing older can come before it: a worker
        finishing then starts it at once instead of waiting for this thread
        to wake (on a loaded machine that wait can be milliseconds).
        """
        waiting, may_queue = self.waiting, self.plan.may_queue
        while waiting and not self.failures:
            if self.in_flight >= self.workers and (self.in_flight >= 2 * self.workers
                                                   or not may_queue[waiting[0][2]]):
                return
            _, _, node, iteration, kernel, values = heapq.heappop(waiting)
            if self.pool is None:
                self.pool = Workers(self._run_in_pool)
            self.in_flight += 1
            self.pool.put([node, iteration, kernel, values], min(self.in_flight, self.workers))

    def _run_in_pool(self, task: list) -> None:
        """Run a kernel, then its chain (`Plan.chain_next`), on a worker; hand the last result back.

        `task` is ``[node, iteration, kernel, values]``, emptied here: the
        inputs are let go before the scheduling thread hears (a kernel it
        starts then may reuse their memory).
        """
        node, iteration, kernel, values = task
        task.clear()
        chain_next, kernels, fused = self.plan.chain_next, self.plan.kernels, self.plan.fused
        try:
            with np.errstate(all="ignore"):
                while True:
                    run = fused[node]  # element-wise kernels summed whole: block by block, or None
                    results = None if run is None else self._fused(run, iteration, values)
                    if results is not None:
                        node = run.last
                    elif self.trace is None:
                        results = kernel(values)
                    else:
                        results = self._traced(node, iteration, kernel, values)
                    follower = chain_next[node]
                    if follower is None:
                        break
                    node, kernel, values = follower, kernels[follower], results
            del values
            self.done_queue.put((node, iteration, results, None))
        except BaseException as error:  # noqa: BLE001 - handed to the scheduling thread
            del values
            self.done_queue.put((node, iteration, None, error))

    def _finish_kernel(self, node: int, iteration: _Iteration, results, error) -> None:
        self.in_flight -= 1
        if error is not None:
            self._fail(node, iteration, error)
            return
        if self.failures:
            return
        self._emit(node, iteration, results, False)
        self._done_with(iteration)

    def _fail(self, node: int, iteration: _Iteration, error: BaseException) -> None:
        self.failures.append((_program_position(self.plan.nodes[node], iteration), error))
        self.ready.clear()

    def _raise_first_failure(self):
        position, error = min(self.failures, key=lambda failure: failure[0])
        raise error

    # -- the machinery ---------------------------------------------------------------------------
    def _forward(self, node, iteration, values, dead) -> None:  # LoopCond, Merge, Identity-like
        self._emit(node, iteration, values, dead)
        self._done_with(iteration)

    def _token(self, node, iteration, values, dead) -> None:
        self._emit(node, iteration, [_TOKEN], dead)
        self._done_with(iteration)

    def _switch(self, node, iteration, values, dead) -> None:
        if dead:
            self._emit(node, iteration, (), True)
        else:
            data, pred = values
            self._emit(node, iteration, [DEAD, data] if pred else [data, DEAD], False)
        self._done_with(iteration)

    def _enter(self, node, iteration, values, dead) -> None:
        lowered = self.plan.nodes[node]
        frame_run = iteration.children.get(id(lowered.frame))
        if frame_run is None:
            frame_run = _FrameRun(lowered.frame, iteration, self.plan.enters[id(lowered.frame)])
            iteration.children[id(lowered.frame)] = frame_run
            self._start_iteration(frame_run)
        value = DEAD if dead else values[0]
        if lowered.attrs["is_constant"]:
            frame_run.invariants.append((node, value))
            for inner in frame_run.iterations.values():
                self._emit(node, inner, [value], dead)
        else:
            self._emit(node, frame_run.iterations[0], [value], dead)
        frame_run.enters_waiting -= 1
        self._done_with(iteration)
        self._advance(frame_run)

    def _exit(self, node, iteration, values, dead) -> None:
        frame_run = iteration.frame_run
        if not dead:  # a dead Exit is the loop going on; it leaves dead only if the loop never ends live
            frame_run.exits_sent.add(node)
            self._emit(node, frame_run.parent, values, False)
        self._done_with(iteration)

    def _next_iteration(self, node, iteration, values, dead) -> None:
        frame_run = iteration.frame_run
        if not dead:  # a dead value (the body of the last test) starts nothing
            target = iteration.number + 1
            if target < frame_run.started:
                self._emit(node, frame_run.iterations[target], values, False)
            elif target - frame_run.finished < frame_run.frame.parallel_iterations:
                self._emit(node, self._start_iteration(frame_run), values, False)
            else:
                frame_run.deferred.append((node, values))
        self._done_with(iteration)

    def _start_iteration(self, frame_run: _FrameRun) -> _Iteration:
        iteration = _Iteration(frame_run, frame_run.started)
        frame_run.iterations[frame_run.started] = iteration
        frame_run.started += 1
        for node, value in frame_run.invariants:
            self._emit(node, iteration, [value], value is DEAD)
        return iteration

    def _advance(self, frame_run: _FrameRun) -> None:
        """Retire the iterations of `frame_run` that are done, in order; start waiting ones; end the frame."""
        while frame_run.finished < frame_run.started:
            oldest = frame_run.iterations[frame_run.finished]
            if oldest.outstanding or oldest.children or (oldest.number == 0 and frame_run.enters_waiting):
                return
            if oldest.pending and not self.failures:
                raise RuntimeError(f"internal error: the dataflow executor stalled in frame "
                                   f"{frame_run.frame.name!r}, iteration {oldest.number}, waiting for "
                                   f"{[self.plan.nodes[k].name for k in oldest.pending]}")
            del frame_run.iterations[frame_run.finished]
            frame_run.finished += 1
            if frame_run.deferred:
                waiting, frame_run.deferred = frame_run.deferred, []
                iteration = self._start_iteration(frame_run)
                for node, values in waiting:
                    self._emit(node, iteration, values, False)
        if frame_run.parent is not None:
            self._end_frame(frame_run)

    def _end_frame(self, frame_run: _FrameRun) -> None:
        parent = frame_run.parent
        if parent.children.pop(id(frame_run.frame), None) is None:
            return  # ended already
        for node in self.plan.exits[id(frame_run.frame)]:
            if node not in frame_run.exits_sent:
                self._emit(node, parent, (), True)
        if parent.outstanding == 0:
            self._advance(parent.frame_run)

    def _check_finished(self, root_iteration: _Iteration) -> None:
        missing = [v.name for v, received in zip(self.plan.fetches, self.received) if not received]
        if missing or root_iteration.pending:
            stuck = [self.plan.nodes[k].name for k in root_iteration.pending]
            raise RuntimeError(f"internal error: the dataflow executor stopped without computing {missing} "
                               f"(nodes still waiting: {stuck})")
        for value, result in zip(self.plan.fetches, self.results):
            if result is DEAD:
                raise ValueError(f"{value.name} is dead in this run: it is computed only in a branch that "
                                 f"was not taken")


def _large(values) -> bool:
    """Whether a kernel reading `values` is worth a trip to the thread pool."""
    total = 0
    for value in values:
        if isinstance(value, np.ndarray):
            total += value.size
    return total >= OFFLOAD_ELEMENTS


def _program_position(node, iteration: _Iteration) -> tuple:
    """Where the reference interpreter would run `node` in `iteration`: its static place, iterations interleaved."""
    position: tuple = ()
    tags = iteration.tags()
    for depth, place in enumerate(node.program_order):
        position += tuple(place)
        if depth < len(tags):
            position += (tags[depth],)
    return position


_HANDLERS = {
    "Enter": _Run._enter,
    "Exit": _Run._exit,
    "NextIteration": _Run._next_iteration,
    "Switch": _Run._switch,
    "Merge": _Run._forward,
    "LoopCond": _Run._forward,
    "Token": _Run._token,
}
