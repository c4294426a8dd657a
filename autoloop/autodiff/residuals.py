"""How the backward pass reads forward values ("residuals"), level by level.

The backward pass of a graph is built in a backward graph; a gradient rule
asks for a forward value `v` and gets a Tensor of the backward graph that
holds the same value. Where that comes from depends on the level:

- `Residuals`: the backward graph *is* the forward graph (``gradients()``
  in a traced function): `v` itself.
- `LoopResiduals`: `v` is computed in a ``While`` body and the backward
  body runs once per forward iteration, in reverse. The forward loop gets
  one more loop variable, a stack (`autoloop.control_flow.stacks`) that
  saves `v` at the iteration counter every iteration; the backward body
  reads it at its own counter. A value the body captured from outside (or its
  shape) is read from the level around the loop instead, saving nothing.
- `BranchResiduals`: `v` is computed in a ``Cond`` branch: it becomes one
  more output of the forward ``Cond`` (the other branch gives a cheap
  placeholder of its dtype), which the level around reads.

Levels nest like the forward graphs: the value a loop pushes on a stack is
itself read through the level around the loop (an inner loop's stacks are
saved per outer iteration). Only values some rule reads are saved.
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.control_flow import stacks
from autoloop.ir import context, rewrite
from autoloop.ops.dispatch import apply, constant_node, constant_value_of, convert, on_values
from autoloop.tensor import Tensor


class Residuals:
    """Forward values read where they are: the backward pass is built in the forward graph."""

    def __init__(self):
        self._shapes: dict = {}

    def value(self, value) -> Tensor:
        return Tensor(value=value)

    def shape(self, value) -> Tensor:
        """`value`'s shape as an int32 vector: a constant when static, else read at run time."""
        if value.shape.is_fully_defined():
            return convert(np.array(value.shape.as_list(), np.int32))
        if value not in self._shapes:
            with context.building(value.graph):
                shape = apply("Shape", [Tensor(value=value)], {"out_type": dtypes.int32})
            self._shapes[value] = self.value(shape._value)
        return self._shapes[value]


class _SubGraphResiduals(Residuals):
    """Values of `graph`, a sub-graph: captured ones are read at the level around (`outer`),
    constants are made again, and the rest is handed out by `_save`, each once."""

    def __init__(self, graph, outer: Residuals):
        super().__init__()
        self.forward, self.outer = graph, outer
        self._read: dict = {}

    def value(self, value) -> Tensor:
        if value.graph is not self.forward:
            if value.graph.is_ancestor_of(self.forward):
                return self.outer.value(value)
            raise AssertionError(f"{value.name} is not a value of {self.forward.name}")
        if value not in self._read:
            outer = captured_from(self.forward, value)
            if outer is not None:
                self._read[value] = self.outer.value(outer)
            elif _shape_of_capture(self.forward, value) is not None:
                self._read[value] = self.outer.value(_shape_of_capture(self.forward, value))
            else:
                known = known_constant(value)  # a Tensor: its truth is no test of being known
                self._read[value] = known if known is not None else self._save(value)
        return self._read[value]

    def _save(self, value) -> Tensor:
        raise NotImplementedError


def _shape_of_capture(graph, value):
    """Where `value` of `graph` is the ``Shape`` of a value captured from outside: that shape, taken in the level
    around (the same in every iteration, and known there while compiling on XLA, as a saved copy is not)."""
    node = value.node
    if node.op != "Shape":
        return None
    outer = captured_from(graph, node.inputs[0])
    if outer is None:
        return None
    with context.building(outer.graph):
        return apply("Shape", [Tensor(value=outer)], dict(node.attrs))._value


class LoopResiduals(_SubGraphResiduals):
    """Values of the forward ``While`` `loop`'s body, saved per iteration; see the module docstring.

    `counter` is the body parameter counting the forward iterations,
    `index` (in `graph`, the backward body) the iteration being undone,
    `outer` the residuals of the level around the loop.
    """

    def __init__(self, loop, counter, index: Tensor, graph, outer: Residuals, record):
        super().__init__(loop.attrs["body"], outer)
        self.loop, self.counter, self.index, self.graph = loop, counter, index, graph
        self.record = record

    def _save(self, value) -> Tensor:
        stack = self.outer.value(push(self.loop, self.counter, value))
        self.record.saved.append(value)
        with context.building(self.graph):
            return stacks.get(stack, self.index, value.dtype, value.shape)


def push(loop, counter, value):
    """Save `value` (of `loop`'s body) at iteration `counter` on a new stack; the stack after the loop."""
    with context.building(loop.graph):
        empty = stacks.new_stack()
    counter_tensor, saved = Tensor(value=counter), Tensor(value=value)
    return rewrite.add_loop_var(loop, empty._value, on_values(lambda stack: stacks.push(stack, counter_tensor, saved)),
                                name="saved")


def add_counter(loop):
    """A loop variable counting `loop`'s iterations: ``(its value after the loop, its body parameter)``."""
    zero = constant_node(loop.graph, np.int32(0))
    after = rewrite.add_loop_var(loop, zero, on_values(lambda count: count + 1), name="iterations")
    return after, loop.attrs["body"].inputs[loop.attrs["num_loop_vars"] - 1]


class BranchResiduals(_SubGraphResiduals):
    """Values of one branch (`key`) of the forward ``Cond`` `node`, passed out as extra outputs."""

    def __init__(self, node, key: str, outer: Residuals):
        super().__init__(node.attrs[key], outer)
        self.node, self.key = node, key

    def _save(self, value) -> Tensor:
        mine, other = (lambda: value), (lambda: placeholder_like(value)._value)
        builders = (mine, other) if self.key == "true_graph" else (other, mine)
        return self.outer.value(rewrite.add_cond_output(self.node, *builders))


def placeholder_like(value) -> Tensor:
    """A cheap value of `value`'s dtype whose shape is compatible with `value`'s static shape.

    Unknown dimensions become 0 (no elements to fill), an unknown rank a scalar.
    """
    if value.dtype is dtypes.variant:
        return stacks.new_stack()  # never read: the backward Cond takes the branch the forward one took
    shape = value.shape
    dims = [] if shape.rank is None else [0 if d is None else d for d in shape.as_list()]
    return apply("Fill", [convert(np.array(dims, np.int32)), convert(value.dtype.as_numpy_dtype(0))])


def known_constant(value):
    """A constant Tensor holding `value` when tracing computed it (nothing to save), else None."""
    known = constant_value_of(value)
    if isinstance(known, np.ndarray | np.generic):
        return convert(np.asarray(known))
    return None


def captured_from(graph, value):
    """The outer value whose capture placeholder in `graph` is `value`, or None."""
    for outer, inner in graph.captures.items():
        if inner is value:
            return outer
    return None

