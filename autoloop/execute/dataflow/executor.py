"""The dataflow executor: runs the lowered form with frames, iterations and dead values.

    values = run(lowered, fetches, feeds={placeholder_output: array}, targets=[node, ...])
    outputs = call(lowered, *input_arrays)   # the function's outputs, all its effects run

Only what the fetches and targets need runs: the graph is pruned backwards
from them (through back-edges too), so a ``Print`` nothing needs never
runs. Then every node runs as soon as its inputs are there, tagged with its
frame and iteration:

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
several cores; everything else runs on the scheduling thread. (Even with
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
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from autoloop.errors import InvalidArgumentError
from autoloop.execute.interpreter import kernel_of
from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects

OFFLOAD_ELEMENTS = 1 << 15  # kernels reading at least this many elements run on the pool
DEFAULT_WORKERS = min(4, os.cpu_count() or 1)


class _Dead:
    """The value of a tensor on a path not taken."""

    def __repr__(self):
        return "<dead>"


DEAD = _Dead()
_TOKEN = np.True_  # what a live Token carries
_CONTROL = -1  # the slot of an ordering edge
_BRANCH_MERGE, _LOOP_MERGE = 1, 2


def call(graph, *inputs, workers: int | None = None) -> tuple:
    """Run `graph` (a `DataflowGraph`) as its function: outputs for `inputs`, every effect run."""
    if len(inputs) != len(graph.inputs):
        raise TypeError(f"graph {graph.name!r} takes {len(graph.inputs)} inputs, got {len(inputs)}")
    return tuple(run(graph, graph.outputs, dict(zip(graph.inputs, inputs)), graph.effects, workers))


def run(graph, fetches, feeds=None, targets=(), workers: int | None = None) -> list:
    """The values of `fetches` (outputs of `graph`'s root frame) after running what they and `targets` need.

    `feeds` maps outputs to values that replace them (placeholders must be
    fed when needed). `workers` is the thread pool's size (0: every kernel
    on the calling thread).
    """
    with np.errstate(all="ignore"):
        return _Run(_Plan(graph, list(fetches), dict(feeds or {}), list(targets)), workers).execute()


class UnfedPlaceholderError(InvalidArgumentError):
    """A run needs a placeholder that no feed gives a value."""


# -- what one run needs ------------------------------------------------------------------------
class _Plan:
    """The pruned graph as flat tables: who reads what, how many inputs each node waits for."""

    def __init__(self, graph, fetches, feeds, targets):
        self.graph = graph
        self.fetches = fetches
        self.feeds = feeds
        needed = self._prune(fetches, feeds, targets)
        self.nodes = [n for n in graph.nodes if id(n) in needed]
        index = {id(n): k for k, n in enumerate(self.nodes)}
        self.index = index
        fed = {id(v) for v in feeds}
        self.readers = [[[] for _ in n.outputs] for n in self.nodes]  # node -> output -> [(reader, slot)]
        self.control_readers = [[] for _ in self.nodes]
        self.waits_for = [0] * len(self.nodes)  # inputs + ordering edges each node waits for
        for k, node in enumerate(self.nodes):
            for slot, value in enumerate(node.inputs):
                if id(value) not in fed:
                    self.readers[index[id(value.node)]][value.index].append((k, slot))
            for before in node.control_inputs:
                self.control_readers[index[id(before)]].append(k)
            self.waits_for[k] = len(node.inputs) + len(node.control_inputs)
        fed_readers: dict[int, list] = {id(value): [] for value in feeds}
        for k, node in enumerate(self.nodes):
            for slot, value in enumerate(node.inputs):
                if id(value) in fed:
                    fed_readers[id(value)].append((k, slot))
        self.fed_readers = [(value, fed_readers[id(value)]) for value in feeds]
        self.enters = collections.Counter(id(n.frame) for n in self.nodes if n.op == "Enter")
        self.exits: dict[int, list[int]] = collections.defaultdict(list)
        for k, node in enumerate(self.nodes):
            if node.op == "Exit":
                self.exits[id(node.frame)].append(k)
        self.fetched = collections.defaultdict(list)  # (node, output) -> positions in the fetch list
        for position, value in enumerate(fetches):
            self.fetched[(id(value.node), value.index)].append(position)
        fed_outputs = {(id(v.node), v.index) for v in feeds}  # a fed value is not recomputed
        computed = {key: positions for key, positions in self.fetched.items() if key not in fed_outputs}
        self.offloadable = [node.op not in _MACHINERY and node.op != "Const" and control_flow.lookup(node.op) is None
                            and not (node.source is not None and has_effects(node.source)) for node in self.nodes]
        self.kernels = [kernel_of(node.source if node.source is not None else node)
                        if node.op not in _MACHINERY else None for node in self.nodes]
        self.merges = [_LOOP_MERGE if node.op == "Merge" and node.attrs.get("loop") else
                       _BRANCH_MERGE if node.op == "Merge" else 0 for node in self.nodes]
        self.fetched_outputs = [[computed.get((id(node), index), ()) for index in range(len(node.outputs))]
                                if any((id(node), index) in computed for index in range(len(node.outputs)))
                                else None for node in self.nodes]
        self.start = [k for k, node in enumerate(self.nodes)
                      if self.waits_for[k] == 0 and node.op != "Placeholder"]

    def _prune(self, fetches, feeds, targets) -> set[int]:
        fed = {id(v) for v in feeds}
        for value in list(fetches) + list(feeds):
            if value.node.read_frame is not self.graph.root:
                raise ValueError(f"{value.name} is computed inside loop frame {value.node.frame.name!r}; only values "
                                 f"outside every loop can be fetched or fed")
        needed: set[int] = set()
        stack = [v.node for v in fetches if id(v) not in fed] + list(targets)
        while stack:
            node = stack.pop()
            if id(node) in needed:
                continue
            needed.add(id(node))
            stack.extend(v.node for v in node.inputs if id(v) not in fed)
            stack.extend(node.control_inputs)
        for node in self.graph.nodes:
            if id(node) in needed and node.op == "Placeholder":
                raise UnfedPlaceholderError(
                    f"the placeholder {node.name!r} ({node.outputs[0].dtype.name}, shape {node.outputs[0].shape}) "
                    f"needs a value: pass it in feed_dict, for example feed_dict={{{node.name}: ...}}")
        return needed


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
    def __init__(self, plan: _Plan, workers: int | None):
        self.plan = plan
        self.workers = DEFAULT_WORKERS if workers is None else workers
        self.ready = collections.deque()
        self.results = [DEAD] * len(plan.fetches)
        self.received = [False] * len(plan.fetches)
        self.done_queue = queue.SimpleQueue()
        self.in_flight = 0  # kernels running on the pool
        self.pool = None
        self.waiting: list = []  # large kernels ready for the pool, a heap by program order
        self.failures: list = []
        self._order = itertools.count()  # ties in program order: first come, first served
        self.handlers = [_HANDLERS.get(node.op, _Run._kernel).__get__(self) for node in plan.nodes]

    # -- the loop ------------------------------------------------------------------------
    def execute(self) -> list:
        plan = self.plan
        root = _FrameRun(plan.graph.root, None, 0)
        first = self._start_iteration(root)
        for value, readers in plan.fed_readers:
            for reader, slot in readers:
                self._deliver(reader, slot, plan.feeds[value], first)
            for position in plan.fetched.get((id(value.node), value.index), ()):
                self.results[position], self.received[position] = plan.feeds[value], True
        for node in plan.start:
            self._push(node, first, [], False)
        try:
            self._loop()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)
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
        if merge == _LOOP_MERGE:  # one input per iteration: the Enter's, then NextIteration's
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
            self._fill_pool()
            return
        try:
            results = kernel(values)
        except Exception as error:  # noqa: BLE001 - reported after the run stops, first in program order
            self._fail(node, iteration, error)
            return
        self._emit(node, iteration, results, False)
        self._done_with(iteration)

    def _fill_pool(self) -> None:
        """Keep every worker busy with the waiting kernel first in program order.

        Oldest iterations first: their results free memory soonest, so the
        arrays in flight stay about one per worker (all of the first kernels
        of ten iterations at once would hold ten arrays, and numpy's
        allocator would hand them back to the system and fault them in again).
        """
        while self.waiting and self.in_flight < self.workers and not self.failures:
            _, _, node, iteration, kernel, values = heapq.heappop(self.waiting)
            if self.pool is None:
                self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="autoloop-dataflow")
            self.in_flight += 1
            self.pool.submit(self._run_in_pool, node, iteration, kernel, values)

    def _run_in_pool(self, node, iteration, kernel, values) -> None:
        try:
            with np.errstate(all="ignore"):
                self.done_queue.put((node, iteration, kernel(values), None))
        except BaseException as error:  # noqa: BLE001 - handed to the scheduling thread
            self.done_queue.put((node, iteration, None, error))

    def _finish_kernel(self, node: int, iteration: _Iteration, results, error) -> None:
        self.in_flight -= 1
        self._fill_pool()
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


_MACHINERY = {"Placeholder", "Enter", "Merge", "Switch", "LoopCond", "NextIteration", "Exit", "Token"}
_HANDLERS = {
    "Enter": _Run._enter,
    "Exit": _Run._exit,
    "NextIteration": _Run._next_iteration,
    "Switch": _Run._switch,
    "Merge": _Run._forward,
    "LoopCond": _Run._forward,
    "Token": _Run._token,
}
