"""The dataflow form of a graph: TF1's Enter/Merge/Switch/NextIteration/Exit.

`autoloop.execute.dataflow.lower` turns a graph of functional ``While`` and
``Cond`` nodes into this form, and `autoloop.execute.dataflow.executor`
runs it. It is one flat list of `Node`s with no sub-graphs; a loop is a
*frame* instead, and its nodes run once per iteration of that frame:

- ``Enter`` takes a value of the enclosing frame into the loop's frame:
  into the first iteration, or, with ``is_constant``, into every iteration
  (a loop-invariant capture);
- ``Merge`` forwards whichever input arrives alive: a loop variable's
  ``Enter`` in the first iteration, its ``NextIteration`` later; for a
  ``Cond``, the output of the branch that ran;
- ``Switch(data, pred)`` forwards `data` to its output 1 when `pred` holds,
  to its output 0 otherwise; the other output carries a *dead* value;
- ``LoopCond`` marks the loop's condition; ``NextIteration`` sends a value to
  the next iteration; ``Exit`` takes the final value out of the loop.
- ``Token`` carries no data: it stands for its ordering edges having run,
  so that ordering can go round a loop or out of a branch (a loop with
  effects carries a token, so its effects run in program order across
  iterations).

A node whose input is dead does not run: its outputs are dead too, except
for ``Merge``, which waits for a live input. That is how the branch not
taken, and the body in the iteration whose test is false, are skipped.
Ordering edges (``^name`` in the text form) carry deadness like data.

Because ``Merge`` reads ``NextIteration``, the form has back-edges: it is its
own representation, checked by `autoloop.execute.dataflow.verify`.

    >>> lowered = lower(graph)
    >>> print(lowered)                       # the text form
    >>> [node.op for node in lowered.nodes][:4]
    ['Placeholder', 'Const', 'Enter', 'Enter']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autoloop.dtypes import DType
from autoloop.shapes import TensorShape

# The ops of the dataflow machinery; every other node runs an op of the registry.
MACHINERY_OPS = ("Placeholder", "Enter", "Merge", "Switch", "LoopCond", "NextIteration", "Exit", "Token")


@dataclass(eq=False)
class Frame:
    """A loop's frame: its nodes run once per iteration; the root frame runs once."""

    name: str
    parent: Frame | None
    parallel_iterations: int = 1
    loop: LoopBoundary | None = None  # the functional While it was lowered from, if any


    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def encloses(self, other: Frame) -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False

    def __repr__(self):
        return f"<Frame {self.name}>"


@dataclass(eq=False)
class LoopBoundary:
    """What a loop's frame takes and gives, so that a plan may run the whole loop as one node.

    `source` is the functional ``While`` node the frame was lowered from,
    `inputs` the values of the enclosing frame that its operands became (in
    the While's operand order), `exits` its ``Exit`` nodes: one per loop
    variable, then the effects token's if the loop has effects.
    `program_order` is the While's place in program order.
    """

    source: Any
    inputs: list[Output]
    exits: list[Node]
    program_order: tuple
    compiled: dict = field(default_factory=dict)  # unchanged loop variables -> the loop as generated code


@dataclass(eq=False)
class Output:
    """Output `index` of `node`."""

    node: Node
    index: int
    dtype: DType
    shape: TensorShape

    @property
    def name(self) -> str:
        return f"{self.node.name}:{self.index}"

    def __repr__(self):
        return f"<Output {self.name}>"


@dataclass(eq=False)
class Node:
    """One node: `op` on `inputs`, in `frame`.

    An ``Enter`` belongs to the frame it enters (its inputs come from the
    enclosing frame); an ``Exit`` to the frame it leaves (its readers are in
    the enclosing frame). `source` is the functional graph's node an
    ordinary node was lowered from (its kernel attrs, name and user line
    are the source's); `program_order` places it in the order the reference
    interpreter would run it (used to report the first of several errors).
    """

    op: str
    name: str
    frame: Frame
    inputs: list[Output]
    control_inputs: list[Node]
    attrs: dict
    outputs: list[Output] = field(default_factory=list)
    source: Any = None
    program_order: tuple = ()
    tuple_result: bool = False  # how a registry kernel run for this node returns (sources say their own)
    runs_loop: LoopBoundary | None = None  # a plan's node standing for a whole loop (compiled)

    @property
    def read_frame(self) -> Frame:
        """The frame in which this node's outputs are read (the frame around it, for an Exit)."""
        return self.frame.parent if self.op == "Exit" else self.frame

    @property
    def location(self):
        return self.source.location if self.source is not None else None

    def __repr__(self):
        return f"<dataflow Node {self.name} = {self.op}({', '.join(v.name for v in self.inputs)})>"


class DataflowGraph:
    """A lowered graph: nodes in frames; see the module docstring.

    `inputs` and `outputs` are the functional graph's parameters and results;
    `effects` are the nodes whose running means every effect of the
    functional graph has happened (what a call of the function runs besides
    its outputs); `values` maps each value of the functional graph's top
    level to its output here, and `completions` each top-level node to the
    nodes that mark it done (what ``Session.run`` needs to run an op).
    """

    def __init__(self, name: str):
        self.name = name
        self.root = Frame("root", None)
        self.frames: list[Frame] = [self.root]
        self.nodes: list[Node] = []
        self.inputs: list[Output] = []
        self.outputs: list[Output] = []
        self.effects: list[Node] = []
        self.values: dict = {}
        self.completions: dict = {}
        self.call_plans: dict = {}  # compile_loops -> the executor's Plan of a call of this graph
        self._names: dict[str, int] = {}

    def add(self, op: str, inputs, frame: Frame, output_specs, attrs=None, control=(), source=None,
            name: str | None = None, program_order: tuple = ()) -> Node:
        """Append a node with outputs of the given ``(dtype, shape)`` specs; its name made unique."""
        node = Node(op, self._unique(name or op), frame, list(inputs), list(dict.fromkeys(control)),
                    dict(attrs or {}), source=source, program_order=program_order)
        node.outputs = [Output(node, index, dtype, shape) for index, (dtype, shape) in enumerate(output_specs)]
        self.nodes.append(node)
        return node

    def add_frame(self, name: str, parent: Frame, parallel_iterations: int) -> Frame:
        frame = Frame(name, parent, parallel_iterations)
        self.frames.append(frame)
        return frame

    def _unique(self, base: str) -> str:
        count = self._names.get(base, 0)
        self._names[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def __repr__(self):
        return f"<DataflowGraph {self.name!r}: {len(self.nodes)} nodes, {len(self.frames)} frames>"

    def __str__(self):
        from autoloop.execute.dataflow.printer import format_dataflow
        return format_dataflow(self)
