"""A traced function called eagerly while a `GradientTape` records: one tape entry.

The call runs a *forward* graph, the function's graph that also returns the
values its gradient will read, and the tape keeps those with a *backward*
graph that maps the gradients of the results (and the kept values) to the
gradients of the arguments, as TensorFlow records a ``tf.function`` call.
Both are built once per trace, from a copy of its graph, and kept on the
`ConcreteFunction`: the backward pass is `backprop` with `ExportedResiduals`,
which turns each forward value a rule reads into one more forward output
and one more backward input (a loop's stacks included). Nothing is computed
twice, so prints print once and random draws are the ones the result used.

    with GradientTape() as tape:
        tape.watch(x)
        y = f(x)                 # f an @autoloop.function: recorded as one entry
    tape.gradient(y, x)
"""

from __future__ import annotations

import threading

import numpy as np

from autoloop.autodiff.graph_backprop import backprop
from autoloop.autodiff.residuals import Residuals, known_constant
from autoloop.autodiff.rules import is_differentiable
from autoloop.control_flow.gradient_elements import GradientElements
from autoloop.execute import CompiledGraph
from autoloop.ir import context, rewrite
from autoloop.ir.graph import Graph
from autoloop.ops import recording
from autoloop.ops.dispatch import graph_value, verify
from autoloop.tensor import Tensor, eager

_BUILD_LOCK = threading.Lock()


class ExportedResiduals(Residuals):
    """Forward values read from a separate backward graph: each becomes a forward output, fed back in."""

    def __init__(self, forward: Graph, backward: Graph):
        super().__init__()
        self.forward, self.backward = forward, backward
        self._read: dict = {}

    def value(self, value) -> Tensor:
        if value not in self._read:
            known = known_constant(value)
            if known is not None:
                self._read[value] = known
            else:
                self.forward.outputs.append(value)
                self._read[value] = Tensor(value=self.backward.add_input(value.dtype, value.shape, name="saved"))
        return self._read[value]


class GradientPair:
    """The forward graph with its saved values as extra outputs, and the backward graph, compiled.

    The backward graph takes a gradient per differentiable result, then the
    saved values; it returns a gradient for each argument in `connected`.
    If the backward graph cannot be made (a ``back_prop=False`` loop on the
    way), `error` says why and the forward graph is the plain one.
    """

    def __init__(self, graph: Graph, compile=CompiledGraph):
        self.results = len(graph.outputs)
        forward = rewrite.clone(graph)
        backward = Graph(f"{graph.name}_gradient")
        self.differentiable = [is_differentiable(v.dtype) for v in forward.outputs]
        seeds = [Tensor(value=backward.add_input(v.dtype, v.shape, name="gradient")) if wanted else None
                 for v, wanted in zip(forward.outputs, self.differentiable)]
        self.error = None
        try:
            with context.building(backward):
                found = backprop(forward, list(forward.outputs), seeds, list(forward.inputs),
                                 ExportedResiduals(forward, backward))
                self.connected = [g is not None for g in found]
                backward.outputs = [graph_value(backward, g) for g in found if g is not None]
        except ValueError as error:  # a gradient through a back_prop=False loop: raised if one is asked for
            self.error, forward, self.connected = error, graph, [False] * len(graph.inputs)
        verify(forward)
        if self.error is None:
            verify(backward)
        self.forward = compile(forward)
        self.backward = compile(backward) if self.error is None else None
        self.backward_graph = backward if self.error is None else None  # for a sweep that is traced
        self.output_specs = [(v.dtype, v.shape) for v in graph.outputs]


def gradient_pair(concrete) -> GradientPair:
    """`concrete`'s pair, built on first use and kept on it."""
    return _kept(concrete, "_gradient_pair", GradientPair)


def _kept(concrete, key: str, build):
    """``build(concrete.graph, concrete.compile)``, made once (under a lock) and kept on `concrete`."""
    made = concrete.__dict__.get(key)
    if made is None:
        with _BUILD_LOCK:
            made = concrete.__dict__.get(key)
            if made is None:
                made = concrete.__dict__[key] = build(concrete.graph, concrete.compile)
    return made


def call(concrete, inputs: list, arrays: list):
    """Run `concrete` on `arrays`; if a tape in this thread tracks one of `inputs` (the arguments as
    given, tensors or arrays), record the call on it (a `ForwardAccumulator` runs the call's
    `TangentProgram` instead). Returns the structured result."""
    recorders = [r for r in recording.active() if hasattr(r, "is_tracked")
                 and any(isinstance(t, Tensor) and r.is_tracked(t) for t in inputs)]
    tapes = [r for r in recorders if not hasattr(r, "record_call")]
    accumulators = [r for r in recorders if hasattr(r, "record_call")]
    if accumulators:
        if tapes or len(accumulators) > 1:
            raise NotImplementedError(
                f"the traced function {concrete.graph.name!r} is called eagerly where a ForwardAccumulator and "
                f"another tape or accumulator both track its arguments; autoloop differentiates such a call in "
                f"one mode at a time: call it inside an @autoloop.function that does both")
        return accumulators[0].record_call(concrete, inputs, arrays)
    if not recorders:
        return concrete.run_flat(arrays)
    pair = gradient_pair(concrete)
    results = pair.forward(*arrays)
    outputs = [eager(r) if not isinstance(r, list) else Tensor(r) for r in results[:pair.results]]
    entry = CallEntry(pair, inputs, outputs, results[pair.results:])
    for tape in tapes:
        tape.add_entry(entry)
    return concrete.pack_tensors(outputs)


class CallEntry:
    """A recorded call: see the module docstring."""

    what = "a call of a traced function whose results include a TensorArray"  # for messages (not `traceable`)

    def __init__(self, pair: GradientPair, inputs, outputs, saved):
        self.pair, self.inputs, self.outputs, self.saved = pair, inputs, outputs, saved

    def reaches(self, reached: set) -> None:
        if any(id(t) in reached for t in self.inputs):
            reached.update(id(t) for t in self.outputs if is_differentiable(t.dtype))

    @property
    def traceable(self) -> bool:
        """Whether `backward` can build its ops into a graph being built, as a vectorized Jacobian traces the
        eager sweep: every gradient the backward graph takes is a floating-point tensor's."""
        return self.pair.error is None and all(
            dtype.is_floating for wanted, (dtype, _) in zip(self.pair.differentiable, self.pair.output_specs) if wanted)

    def backward(self, accumulator, reached) -> None:
        on_path = [reached is None or id(t) in reached for t in self.outputs]
        if not any(on and accumulator.has(id(t)) for on, t in zip(on_path, self.outputs)):
            return
        if self.pair.error is not None:
            raise self.pair.error
        seeds = []
        for tensor, on, wanted, (dtype, _) in zip(self.outputs, on_path, self.pair.differentiable,
                                                  self.pair.output_specs):
            if not wanted:
                continue
            grad = accumulator.total(id(tensor)) if on else None
            if grad is None:
                grad = Tensor(GradientElements()) if not dtype.is_floating else eager(np.zeros_like(tensor._numpy))
            seeds.append(grad)
        grads = iter(self._traced(seeds) if context.current_graph() is not None else
                     [eager(g) if not isinstance(g, GradientElements) else Tensor(g)
                      for g in self.pair.backward(*[s._numpy for s in seeds], *self.saved)])
        for tensor, connected in zip(self.inputs, self.pair.connected):
            if not connected:
                continue
            grad = next(grads)
            if isinstance(tensor, Tensor) and (reached is None or id(tensor) in reached):
                accumulator.add(id(tensor), grad)

    def _traced(self, seeds) -> list:
        """The backward graph's ops built into the current graph, the saved values as constants."""
        from autoloop.autodiff.replay import inline
        graph = self.pair.backward_graph
        saved = [Tensor(value) if isinstance(value, list) else eager(value) for value in self.saved]
        return inline(graph, dict(zip(graph.inputs, seeds + saved)), graph.outputs, captured=None)


class TangentProgram:
    """A traced function's graph that also takes a tangent per floating-point argument and returns
    a tangent per floating-point result (`forward_sweep` over a copy of the graph), compiled.

    Built once per trace, on first use, and kept on the `ConcreteFunction`.
    """

    def __init__(self, graph: Graph, compile=CompiledGraph):
        from autoloop.autodiff.forward import forward_sweep
        from autoloop.ops.creation_ops import zeros_like
        tangent_program = rewrite.clone(graph)
        self.results = len(graph.outputs)
        self.takes = [v.dtype.is_floating for v in tangent_program.inputs]
        self.gives = [v.dtype.is_floating for v in tangent_program.outputs]
        seeds = {value: Tensor(value=tangent_program.add_input(value.dtype, value.shape, name="tangent"))
                 for value, takes in zip(list(tangent_program.inputs), self.takes) if takes}
        with context.building(tangent_program):
            found = forward_sweep(list(tangent_program.nodes), dict(seeds))
            tangents = [found.get(v) if found.get(v) is not None else zeros_like(Tensor(value=v))
                        for v, gives in zip(tangent_program.outputs, self.gives) if gives]
            tangent_program.outputs.extend(graph_value(tangent_program, t) for t in tangents)
        verify(tangent_program)
        self.program = compile(tangent_program)


def tangent_program(concrete) -> TangentProgram:
    """`concrete`'s `TangentProgram`, built on first use and kept on it."""
    return _kept(concrete, "_tangent_program", TangentProgram)
