"""The plan of a run: what the fetches need, and how each loop runs (the cost rule).

    plan = Plan(lowered, fetches, fed, targets)     # once per (fetches, feeds, targets): cache it
    plan.frames                                     # [FramePlan(frame, executor, reason), ...]

A plan is made once and run many times (``compat.v1.Session`` keeps one
per signature of ``run``, on itself). It decides, ahead of any run, what
the executor would otherwise decide per node and per iteration:

- **Pruning.** Only what the fetches and targets need runs: the graph is
  walked backwards from them, through back-edges too, stopping at fed
  values. A ``Print`` nothing needs never runs.
- **Tables.** Each node's readers (node, input slot), how many inputs and
  ordering edges it waits for, which Merges are a loop's, which outputs are
  fetched, its kernel, bound once.
- **In place.** A ufunc kernel whose input is a large array that a ufunc
  of the same frame made and that nothing else reads writes its result
  into that array (`out=`), the compiled executor's rule
  (`Plan._in_place_slots`).
- **Chains.** A pool kernel whose result has one reader, itself a pool
  kernel reading nothing else, is followed by that reader on the same
  worker (`Plan.chain_next`): ``tanh(x * i)`` summed is one trip to the
  pool per iteration, not three, and no hand-off between the kernels. A
  chain whose last result goes to no pool kernel may wait queued behind a
  busy worker (`Plan.may_queue`).
- **Fused sums.** A chain of element-wise kernels ending in a ``Sum`` over
  every axis runs block by block (`Plan.fused`, `autoloop.execute.dataflow.fused`):
  its large intermediate never exists whole, and the sum adds what numpy
  adds, in numpy's order.
- **How each loop runs** (`choose`, the cost rule). A loop whose
  iterations cannot overlap profitably runs as *one node* of the frame
  around it: its functional ``While`` compiled to generated code by the
  compiled executor (`autoloop.execute.codegen`), a Python ``while`` over
  numpy values with none of the per-node, per-iteration bookkeeping of
  frames. The others run as frames: Enter/Merge/Switch/NextIteration/Exit,
  iterations tagged and overlapping, large kernels on the thread pool.

The cost rule, for each loop from the outermost in (a loop inside a
compiled loop is compiled with it):

1. **Frames** if the fetches need only part of the loop's work and the
   part they skip holds an effect or a nested loop (fetching a value must
   not run what it does not need). Where the skipped part is plain work on
   loop variables nothing needs (seed 000: fetching the counter must not
   run ``x``'s ``tf.Print``), the compiled loop carries those variables
   round unchanged instead, and the rules below apply.
2. **Compiled** if ``parallel_iterations == 1``: iterations cannot overlap.
3. **Compiled** if every value of the loop has a known shape with fewer
   than `OFFLOAD_ELEMENTS` elements: no kernel is large enough to go to the
   thread pool, so overlapping iterations would only interleave Python
   bookkeeping on one thread (``sum_square``: 0.2 µs an iteration compiled,
   about 30 µs as frames).
4. **Frames** otherwise: some kernel is large (or of unknown size), and
   iterations overlapping on the thread pool can use several cores.

Either way the results, effects and their order, and the error raised
(the first in program order, naming the op and the user's line) are the
reference interpreter's: the compiled loop is the compiled executor,
itself held to the interpreter.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np

from autoloop.dtypes import variant
from autoloop.errors import InvalidArgumentError
from autoloop.execute.dataflow.form import MACHINERY_OPS, Frame, Node, Output
from autoloop.execute.dataflow.fused import FusedSum
from autoloop.execute.errors import raise_for_node
from autoloop.execute.executor import CompiledGraph
from autoloop.execute.interpreter import kernel_of
from autoloop.execute.statements import IN_PLACE_MIN_BYTES, _allocates
from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects
from autoloop.ir.graph import Graph, op_attrs_of
from autoloop.ir.rewrite import clone
from autoloop.ops import registry

OFFLOAD_ELEMENTS = 1 << 15  # kernels reading at least this many elements run on the pool
LOOP_MERGE, BRANCH_MERGE = 2, 1  # what `Plan.merges` says of a node: a loop's Merge, a branch's


class UnfedPlaceholderError(InvalidArgumentError):
    """A run needs a placeholder that no feed gives a value."""


@dataclass(frozen=True)
class FramePlan:
    """How one loop's frame runs: ``"compiled"`` (one node, generated code) or ``"frames"``, and why."""

    frame: str
    executor: str
    reason: str

    def __str__(self):
        return f"{self.frame}: {self.executor} ({self.reason})"


class Plan:
    """The pruned graph as flat tables, loops chosen by the cost rule; see the module docstring.

    `compile_loops`: None applies the cost rule; True compiles every loop
    that can be (whose work the fetches need whole); False runs every loop
    as frames. `fuse_sums=False` runs every chain kernel by kernel, none
    block by block (`Plan.fused`): the same results, more memory.
    """

    def __init__(self, graph, fetches, fed, targets=(), compile_loops: bool | None = None, fuse_sums: bool = True):
        self.graph = graph
        self.fuse_sums = fuse_sums
        self.fetches = list(fetches)
        self.fed = list(fed)
        for value in self.fetches + self.fed:
            if value.node.read_frame is not graph.root:
                raise ValueError(f"{value.name} is computed inside loop frame {value.node.frame.name!r}; only values "
                                 f"outside every loop can be fetched or fed")
        fed_ids = {id(v) for v in self.fed}
        needed = _needed(self.fetches, fed_ids, targets)
        for node in graph.nodes:
            if node.op == "Placeholder" and id(node) in needed:
                raise UnfedPlaceholderError(
                    f"the placeholder {node.name!r} ({node.outputs[0].dtype.name}, shape {node.outputs[0].shape}) "
                    f"needs a value: pass it in feed_dict, for example feed_dict={{{node.name}: ...}}")
        self.frames, compiled = _choose_all(graph, needed, compile_loops)
        self._tables(fed_ids, targets, compiled)

    # -- the tables ------------------------------------------------------------------------
    def _tables(self, fed_ids, targets, compiled: dict) -> None:
        """Prune again with each compiled loop as one node, and lay the result out as lists."""
        exits = {}  # id(Exit) -> (compiled node, its output index)
        for node in compiled.values():
            for position, exit_node in enumerate(node.runs_loop.exits):
                exits[id(exit_node)] = (node, position)

        def standing_for(node: Node) -> Node:
            """The node that runs `node`: itself, or the compiled loop it is part of."""
            frame = node.frame
            found = None
            while frame is not None:
                found = compiled.get(id(frame), found)
                frame = frame.parent
            return node if found is None else found

        def producer(value: Output) -> tuple[Node, int]:
            node = standing_for(value.node)
            if node is value.node:
                return node, value.index
            return exits[id(value.node)]

        needed: set[int] = set()
        order: list[Node] = []
        stack = [standing_for(v.node) for v in self.fetches if id(v) not in fed_ids]
        stack += [standing_for(n) for n in targets]
        while stack:
            node = stack.pop()
            if id(node) in needed:
                continue
            needed.add(id(node))
            order.append(node)
            stack.extend(producer(v)[0] for v in node.inputs if id(v) not in fed_ids)
            stack.extend(standing_for(n) for n in node.control_inputs)
        position_of = {id(n): k for k, n in enumerate(self.graph.nodes)}
        for node in compiled.values():
            position_of[id(node)] = min(position_of[id(n)] for n in node.runs_loop.exits)
        self.nodes = nodes = sorted(order, key=lambda n: position_of[id(n)])
        index = {id(n): k for k, n in enumerate(nodes)}
        self.readers = [[[] for _ in n.outputs] for n in nodes]  # node -> output -> [(reader, slot)]
        self.control_readers = [[] for _ in nodes]
        self.waits_for = [0] * len(nodes)  # inputs + ordering edges each node waits for
        fed_readers: dict[int, list] = {id(value): [] for value in self.fed}
        for k, node in enumerate(nodes):
            for slot, value in enumerate(node.inputs):
                if id(value) in fed_ids:
                    fed_readers[id(value)].append((k, slot))
                else:
                    source, output = producer(value)
                    self.readers[index[id(source)]][output].append((k, slot))
            before = dict.fromkeys(standing_for(n) for n in node.control_inputs)
            for earlier in before:
                self.control_readers[index[id(earlier)]].append(k)
            self.waits_for[k] = len(node.inputs) + len(before)
        self.fed_readers = [fed_readers[id(value)] for value in self.fed]
        self.enters = collections.Counter(id(n.frame) for n in nodes if n.op == "Enter")
        self.exits: dict[int, list[int]] = collections.defaultdict(list)
        for k, node in enumerate(nodes):
            if node.op == "Exit":
                self.exits[id(node.frame)].append(k)
        fetched: dict = collections.defaultdict(list)  # (node index, output) -> positions in the fetch list
        self.fed_fetches = [[] for _ in self.fed]  # fed value -> positions in the fetch list
        fed_position = {id(v): p for p, v in enumerate(self.fed)}
        for position, value in enumerate(self.fetches):
            if id(value) in fed_ids:
                self.fed_fetches[fed_position[id(value)]].append(position)
            else:
                source, output = producer(value)
                fetched[(index[id(source)], output)].append(position)
        self.fetched_outputs = [[fetched.get((k, i), ()) for i in range(len(node.outputs))]
                                if any((k, i) in fetched for i in range(len(node.outputs))) else None
                                for k, node in enumerate(nodes)]  # per node: per output, fetch positions
        self.offloadable = [node.op not in MACHINERY_OPS and node.op != "Const" and node.runs_loop is None
                            and control_flow.lookup(node.op) is None and not _small(node.inputs)
                            and not (node.source is not None and has_effects(node.source)) for node in nodes]
        self.in_place = self._in_place_slots()  # per node: the input its kernel writes its result into, or None
        self.kernels = [_compiled_kernel(node) if node.runs_loop is not None else
                        _in_place_kernel(node, slot) if slot is not None else
                        kernel_of(node.source if node.source is not None else node)
                        if node.op not in MACHINERY_OPS else None
                        for node, slot in zip(nodes, self.in_place)]
        self.chain_next = [self._chain_next(k) for k in range(len(nodes))]
        followers = set(self.chain_next)
        self.fused = [None if k in followers or not self.fuse_sums else self._fused(k) for k in range(len(nodes))]
        self.may_queue = [self._may_queue(k) for k in range(len(nodes))]
        self.merges = [LOOP_MERGE if node.op == "Merge" and node.attrs.get("loop") else
                       BRANCH_MERGE if node.op == "Merge" else 0 for node in nodes]
        self.start = [k for k, node in enumerate(nodes) if self.waits_for[k] == 0 and node.op != "Placeholder"]

    def _chain_next(self, k: int) -> int | None:
        """The node a pool worker runs right after `k`, on `k`'s result, without going back to the scheduler.

        Its sole reader, when that reads nothing else (no other input, no
        ordering edge) and is a pool kernel too: it would be ready the moment
        `k` is done, with exactly `k`'s result. ``x * c -> tanh -> reduce_sum``
        is one trip to the pool per iteration, not three.
        """
        readers = self.readers[k]
        if not self.offloadable[k] or len(readers) != 1 or len(readers[0]) != 1:
            return None
        (reader, _), = readers[0]
        if (self.control_readers[k] or self.fetched_outputs[k] is not None or self.waits_for[reader] != 1
                or not self.offloadable[reader]):
            return None
        return reader

    def _fused(self, k: int) -> FusedSum | None:
        """The chain from `k` (where a pool task starts) run block by block: element-wise kernels summed whole.

        `k` runs an element-wise ufunc; the nodes chained after it run
        unary ones, then a ``Sum``: ``reduce_sum(tanh(x * c))``. (Whether
        the Sum is over every axis, and the arrays' layout and dtype, are
        checked when it runs.)
        """
        nodes, chain_next = self.nodes, self.chain_next
        if not self.offloadable[k] or not _element_wise(nodes[k]):
            return None
        chain, follower = [k], chain_next[k]
        while follower is not None and _element_wise(nodes[follower]) and len(nodes[follower].inputs) == 1:
            chain.append(follower)
            follower = chain_next[follower]
        if follower is None or nodes[follower].op != "Sum" or nodes[follower].source is None:
            return None
        return FusedSum([nodes[j] for j in chain + [follower]], follower, self.in_place[k])

    def _may_queue(self, k: int) -> bool:
        """Whether a pool task starting at `k` may wait queued behind a busy worker.

        When its chain's last result goes to no pool kernel: then no kernel
        that a worker would rather run first (the next one of an older
        iteration, reusing its buffer) can come from the tasks running now,
        and the worker finishing one starts the queued one at once, without
        waiting for the scheduling thread to wake.
        """
        if not self.offloadable[k]:
            return False
        while self.chain_next[k] is not None:
            k = self.chain_next[k]
        return not any(self.offloadable[reader] for readers in self.readers[k] for reader, _ in readers)

    def _in_place_slots(self) -> list:
        """For each node, the input its ufunc kernel may overwrite with its result (`out=`), or None.

        The compiled executor's rule (`autoloop.execute.statements`): a
        large array that a ufunc made in the same frame, of the result's
        dtype and exact static shape, read by this node alone (once) and
        neither fetched nor fed. Its last reader takes its buffer, so a
        body of element-wise kernels allocates one array, not one per op.
        """
        index = {id(n): k for k, n in enumerate(self.nodes)}
        return [self._in_place_slot(k, node, index) if _ufunc_node(node) else None
                for k, node in enumerate(self.nodes)]

    def _in_place_slot(self, k: int, node: Node, index: dict) -> int | None:
        output = node.outputs[0]
        if not (output.shape.is_fully_defined() and output.shape.rank
                and output.dtype.size * output.shape.num_elements() >= IN_PLACE_MIN_BYTES):
            return None
        for position, value in enumerate(node.inputs):
            producer = index.get(id(value.node))
            if producer is None or value.node.frame is not node.frame or not _ufunc_node(value.node):
                continue
            fetched = self.fetched_outputs[producer]
            if (self.readers[producer][value.index] == [(k, position)] and not (fetched and fetched[value.index])
                    and value.dtype is output.dtype and value.shape == output.shape):
                return position
        return None


def _ufunc_node(node: Node) -> bool:
    """Whether `node` runs a one-output ufunc kernel with no attrs and no effects (its result is a new array)."""
    source = node.source
    if (source is None or node.runs_loop is not None or source.op != node.op or node.op in MACHINERY_OPS
            or control_flow.lookup(node.op) is not None or has_effects(source) or op_attrs_of(source.attrs)):
        return False
    return _allocates(source)


def _element_wise(node: Node) -> bool:
    """Whether `node` runs an element-wise ufunc (`_ufunc_node`, and not a generalized one like matmul)."""
    return _ufunc_node(node) and registry.get(node.op).kernel_for("numpy").fn.signature is None


def _in_place_kernel(node: Node, slot: int):
    """``run(args) -> [result]``: `node`'s ufunc writing its result into ``args[slot]`` (see `_in_place_slots`)."""
    fn = registry.get(node.op).kernel_for("numpy").fn
    source = node.source

    def run(args):
        try:
            target = args[slot]
            if isinstance(target, np.ndarray):
                return [fn(*args, out=target)]
            return [fn(*args)]
        except Exception as error:  # noqa: BLE001 - every failure is reported as the node's
            raise_for_node(source, error)
    return run


def _small(values) -> bool:
    """Whether `values` are known, from their static shapes, to hold too few elements for the thread pool."""
    total = 0
    for value in values:
        if not value.shape.is_fully_defined():
            return False
        total += value.shape.num_elements()
    return total < OFFLOAD_ELEMENTS


def _needed(fetches, fed_ids: set, targets) -> set[int]:
    """Ids of the nodes that `fetches` and `targets` need, not looking past fed values."""
    needed: set[int] = set()
    stack = [v.node for v in fetches if id(v) not in fed_ids] + list(targets)
    while stack:
        node = stack.pop()
        if id(node) in needed:
            continue
        needed.add(id(node))
        stack.extend(v.node for v in node.inputs if id(v) not in fed_ids)
        stack.extend(node.control_inputs)
    return needed


# -- the cost rule ------------------------------------------------------------------------------
def _choose_all(graph, needed: set, compile_loops: bool | None) -> tuple[list[FramePlan], dict]:
    """A `FramePlan` for each loop the run needs, and a compiled node per loop that runs as one."""
    inside = collections.defaultdict(list)  # id(frame) -> its nodes and those of the frames in it
    for node in graph.nodes:
        frame = node.frame
        while frame.parent is not None:
            inside[id(frame)].append(node)
            frame = frame.parent
    plans, compiled = [], {}
    for frame in graph.frames:  # outer frames come before the frames inside them
        if frame.parent is None or not any(id(n) in needed for n in inside[id(frame)]):
            continue
        if any(id(outer) in compiled for outer in _enclosing(frame)):
            continue  # compiled with the loop around it
        executor, reason, unchanged = choose(frame, inside[id(frame)], needed, compile_loops)
        plans.append(FramePlan(frame.name, executor, reason))
        if executor == "compiled":
            compiled[id(frame)] = _loop_node(frame, inside[id(frame)], unchanged)
    return plans, compiled


def choose(frame: Frame, nodes: list[Node], needed: set, compile_loops: bool | None = None) -> tuple:
    """``(executor, reason, unchanged)`` for the loop of `frame` (whose nodes, nested frames' too, are `nodes`).

    `unchanged`: the loop variables that compiled code carries round
    unchanged, because the fetches need neither them nor the work on them.
    """
    if frame.loop is None:
        return "frames", "not lowered from a while_loop", ()
    if compile_loops is False:
        return "frames", "every loop as frames (compile_loops=False)", ()
    skipped = [n for n in _work(frame, nodes) if id(n) not in needed]
    unchanged, pruned = (), ""
    if skipped:
        part = f"the fetches need only part of the loop ({skipped[0].name} does not run)"
        if any(n.frame is not frame or (n.source is not None and has_effects(n.source)) for n in skipped):
            return "frames", f"{part}, inside a nested loop or an effect: a non-strict run", ()
        unchanged = tuple(k for k, exit_node in enumerate(frame.loop.exits[:len(frame.loop.source.outputs)])
                          if id(_merge_of(exit_node)) not in needed)
        pruned = f"; {part}: its other loop variables go round unchanged"
    if compile_loops:
        return "compiled", "every loop that can be (compile_loops=True)" + pruned, unchanged
    if frame.parallel_iterations == 1:
        return "compiled", "parallel_iterations=1: iterations cannot overlap" + pruned, unchanged
    large = next((v for n in nodes for v in n.outputs if v.dtype is not variant
                  and not (v.shape.is_fully_defined() and v.shape.num_elements() < OFFLOAD_ELEMENTS)), None)
    if large is None:
        return ("compiled", f"every value has fewer than {OFFLOAD_ELEMENTS} elements: nothing to overlap" + pruned,
                unchanged)
    return "frames", (f"{large.name} has {large.shape.num_elements() if large.shape.is_fully_defined() else 'unknown'} "
                      f"elements: iterations overlap on the thread pool"), ()


def _merge_of(exit_node: Node) -> Node:
    """The Merge of the loop variable that `exit_node` takes out of the loop (Exit <- Switch <- Merge)."""
    return exit_node.inputs[0].node.inputs[0].node


def _work(frame: Frame, nodes: list[Node]) -> list[Node]:
    """The nodes of the loop that its results and effects need (what compiled code would run), but
    its machinery."""
    members = {id(n) for n in nodes}
    live: set[int] = set()
    stack = list(frame.loop.exits)
    while stack:
        node = stack.pop()
        if id(node) in live or id(node) not in members:
            continue
        live.add(id(node))
        stack.extend(v.node for v in node.inputs)
        stack.extend(node.control_inputs)
    return [n for n in nodes if id(n) in live and n.op not in MACHINERY_OPS]


def _enclosing(frame: Frame):
    frame = frame.parent
    while frame is not None:
        yield frame
        frame = frame.parent


# -- a loop as one node ---------------------------------------------------------------------------
def _loop_node(frame: Frame, nodes: list[Node], unchanged: tuple) -> Node:
    """One node of the frame around `frame` that runs the whole loop: its outputs are the Exits'
    (those of the `unchanged` loop variables are their first values: nothing reads them)."""
    loop = frame.loop
    control = dict.fromkeys(c for n in nodes if n.op == "Enter" and n.frame is frame for c in n.control_inputs)
    node = Node(loop.source.op, loop.source.name, frame.parent, list(loop.inputs), list(control),
                {"unchanged": unchanged}, source=loop.source, program_order=loop.program_order)
    node.outputs = [Output(node, k, e.outputs[0].dtype, e.outputs[0].shape) for k, e in enumerate(loop.exits)]
    node.runs_loop = loop
    return node


def _compiled_kernel(node: Node):
    """``run(args) -> outputs``: the loop compiled once (kept on its frame's boundary), then called."""
    loop, unchanged = node.runs_loop, node.attrs["unchanged"]
    if unchanged not in loop.compiled:
        source = loop.source
        attrs = dict(source.attrs)
        if unchanged:  # the body gives those loop variables back as it got them: their work is not live
            attrs["body"] = body = clone(source.attrs["body"])
            body.outputs = [body.inputs[k] if k in unchanged else value for k, value in enumerate(body.outputs)]
        graph = Graph(source.name)
        inputs = [graph.add_input(v.dtype, v.shape) for v in source.inputs]
        copy = graph.add_node(source.op, inputs, attrs, [(v.dtype, v.shape) for v in source.outputs],
                              location=source.location, name=source.name)
        graph.outputs = list(copy.outputs)
        loop.compiled[unchanged] = CompiledGraph(graph).generated
    run = loop.compiled[unchanged]
    token = [np.True_] * (len(loop.exits) - len(loop.source.outputs))

    def run_loop(args):
        return list(run(*args)) + token
    return run_loop
