"""Forward mode: `ForwardAccumulator`, the functional `jvp`, and the sweep over a graph.

    x = autoloop.constant([1.0, 2.0])
    with autoloop.autodiff.ForwardAccumulator(x, autoloop.constant([1.0, 0.0])) as acc:
        y = x * x
    acc.jvp(y)                   # [2., 0.]: the derivative of y along the tangent

One interpreter computes tangents for both modes, op by op through
`autoloop.autodiff.jvp_rules.call_jvp`:

- eagerly, the accumulator is a recorder (`autoloop.ops.recording`): each op
  run inside the block that reads a tensor with a tangent gets its output
  tangents at once (eager loops run op by op, so they need nothing more);
- while tracing, it remembers the nodes traced inside the block, and `jvp`
  runs `forward_sweep` over them, adding the tangent ops to the graph. A
  ``While`` carries its tangents as extra loop variables (no stacks: O(1)
  extra memory however long the loop runs), a ``Cond`` as extra outputs
  (`autoloop.autodiff.control_flow_jvp`).

Forward over reverse (a Hessian-vector product) is a gradient computed
inside an accumulator's block:

    with ForwardAccumulator(x, v) as acc:
        with GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    acc.jvp(g)                   # H v
"""

from __future__ import annotations

import numpy as np

from autoloop import nest
from autoloop.autodiff.forward_op import EagerOp, GraphOp
from autoloop.autodiff.graph_backprop import value_in
from autoloop.autodiff.jacobian import UnconnectedGradients, unconnected_option
from autoloop.autodiff.jvp_rules import call_jvp
from autoloop.autodiff.residuals import Residuals
from autoloop.autodiff.rules import is_differentiable
from autoloop.ir import context
from autoloop.ops import recording
from autoloop.ops.creation_ops import zeros_like
from autoloop.ops.dispatch import convert
from autoloop.tensor import Tensor, eager


def forward_sweep(nodes, tangents: dict, accept=None) -> dict:
    """Add to `tangents` (Value -> Tensor) the tangents of the outputs of `nodes`, visited in order.

    The tangent ops are built in the current graph; `accept` limits the
    nodes that pass tangents on. Returns `tangents`.
    """
    residuals = Residuals()  # forward values are read where they are
    for node in nodes:
        if node.op == "Placeholder" or (accept is not None and not accept(node)):
            continue
        inputs = [tangents.get(v) for v in node.inputs]
        if all(t is None for t in inputs):
            continue
        outputs = list(node.outputs)  # a rule may give the node more outputs (a loop's tangents)
        found = call_jvp(GraphOp(node, residuals, lambda k: True), inputs)
        for value, tangent in zip(outputs, found):
            if tangent is not None:
                tangents[value] = tangent
    return tangents


class ForwardAccumulator:
    """Computes Jacobian-vector products of what runs inside its block; see the module docstring.

    `primals` and `tangents` are tensors or matching structures of them
    (each tangent of its primal's shape and dtype). ``jvp(y)`` gives the
    tangent of `y` (a tensor or structure): None where `y` does not depend
    on the primals (``unconnected_gradients=UnconnectedGradients.ZERO``:
    zeros).
    """

    def __init__(self, primals, tangents):
        nest.assert_same_structure(primals, tangents)
        self._primals = [_as_tensor(p) for p in nest.flatten(primals)]
        self._seeds = []
        for primal, tangent in zip(self._primals, nest.flatten(tangents)):
            tangent = convert(tangent, primal.dtype) if not isinstance(tangent, Tensor) else tangent
            if not is_differentiable(primal.dtype):
                raise TypeError(f"ForwardAccumulator: the primal {primal.name} is {primal.dtype.name}; tangents "
                                f"flow through floating-point tensors only")
            if tangent.dtype is not primal.dtype or not tangent.shape.is_compatible_with(primal.shape):
                raise ValueError(f"ForwardAccumulator: the tangent for {primal.name} is {tangent.dtype.name}"
                                 f"{tangent.shape}, but the primal is {primal.dtype.name}{primal.shape}; give "
                                 f"each tangent its primal's dtype and shape")
            self._seeds.append(tangent)
        self._graph = context.current_graph()
        self._eager: dict = {}  # eagerly: id(tensor) -> (tensor, tangent)
        self._traced: dict = {}  # traced: graph value -> tangent
        self._open = None  # traced: the ids of the nodes that existed when the block was entered
        self._inside: set = set()  # traced: ids of the nodes traced inside the block
        self._swept: set = set()  # traced: ids of the nodes the sweep has seen or built
        for primal, tangent in zip(self._primals, self._seeds):
            if self._graph is None:
                self._eager[id(primal)] = (primal, tangent)
            else:
                value = value_in(self._graph, primal)
                if value is not None:
                    self._traced[value] = tangent
        self._recording = False

    def __enter__(self):
        if self._recording:
            raise ValueError("this ForwardAccumulator is already recording; enter it once at a time")
        self._recording = True
        if self._graph is None:
            recording.start(self)
        else:
            self._open = {id(n) for n in self._graph.nodes}
        return self

    def __exit__(self, *exc_info):
        self._recording = False
        if self._graph is None:
            recording.stop(self)
        else:
            self._close_window()

    def _close_window(self):
        if self._open is not None:
            self._inside |= {id(n) for n in self._graph.nodes} - self._open
            self._open = None if not self._recording else {id(n) for n in self._graph.nodes}

    # -- the recorder protocol (eager ops) ----------------------------------------------------
    def record(self, op_name, attrs, inputs, outputs) -> None:
        tangents = [self._tangent_of(t) for t in inputs]
        if all(t is None for t in tangents):
            return
        with recording.replaced(self, None):  # the tangents' own ops are not differentiated by this one
            found = call_jvp(EagerOp(op_name, attrs, inputs, outputs), tangents)
        for tensor, tangent in zip(outputs, found):
            if tangent is not None:
                self._eager[id(tensor)] = (tensor, tangent)

    def wrap_loop(self, loop, run):
        return run  # an eager loop runs op by op: each op gets its tangents as it runs

    def is_tracked(self, tensor) -> bool:
        return id(tensor) in self._eager

    def record_call(self, concrete, inputs, arrays):
        """A traced function called eagerly on tensors with tangents: its tangent program runs once."""
        from autoloop.autodiff.function_calls import tangent_program
        program = tangent_program(concrete)
        tangents = []
        for given, array, takes in zip(inputs, arrays, program.takes):
            if takes:
                tangent = self._tangent_of(given) if isinstance(given, Tensor) else None
                tangents.append(tangent._numpy if tangent is not None else np.zeros_like(array))
        results = program.program(*arrays, *tangents)
        outputs = [eager(r) if not isinstance(r, list) else Tensor(r) for r in results[:program.results]]
        found = iter(results[program.results:])
        for tensor, gives in zip(outputs, program.gives):
            if gives:
                self._eager[id(tensor)] = (tensor, eager(next(found)))
        return concrete.pack_tensors(outputs)

    def _tangent_of(self, tensor):
        found = self._eager.get(id(tensor))
        return found[1] if found is not None and found[0] is tensor else None

    # -- results -------------------------------------------------------------------------------
    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangent of each tensor in `primals` (same structure); see the class docstring."""
        unconnected = unconnected_option(unconnected_gradients)
        flat = [_as_tensor(p) for p in nest.flatten(primals)]
        if self._graph is None:
            found = [self._tangent_of(t) for t in flat]
        else:
            found = self._traced_tangents(flat)
        if unconnected is UnconnectedGradients.ZERO:
            found = [zeros_like(t) if f is None and is_differentiable(t.dtype) else f for f, t in zip(found, flat)]
        return nest.pack_sequence_as(primals, found)

    def _traced_tangents(self, tensors) -> list:
        graph = context.current_graph()
        if graph is None or not self._graph.is_ancestor_of(graph):
            raise ValueError("this ForwardAccumulator recorded inside a traced function: call jvp there too")
        self._close_window()
        targets = [value_in(self._graph, t) for t in tensors if t.is_symbolic]
        needed = _producers([v for v in targets if v is not None])  # only what the asked values read
        nodes = [n for n in self._graph.nodes
                 if id(n) in self._inside and id(n) not in self._swept and id(n) in needed]
        before = {id(n) for n in self._graph.nodes}
        with context.building(graph):
            forward_sweep(nodes, self._traced)
        # What the sweep built (and what it swept) is not swept again by a later call.
        self._swept |= {id(n) for n in nodes} | ({id(n) for n in self._graph.nodes} - before)
        return [self._traced.get(value_in(self._graph, t)) if t.is_symbolic else None for t in tensors]


def _producers(values) -> set:
    """The ids of the nodes `values` are computed from (in their graph)."""
    found, stack = set(), [v.node for v in values]
    while stack:
        node = stack.pop()
        if id(node) not in found:
            found.add(id(node))
            stack.extend(v.node for v in node.inputs)
    return found


def jvp(fn, primals, tangents, unconnected_gradients=UnconnectedGradients.NONE):
    """``(fn(*primals), J_fn(primals) @ tangents)``: the value and the directional derivative.

    `primals` and `tangents` are sequences of tensors (one per argument
    of `fn`, each tangent of its primal's shape); the second result has the
    structure of ``fn``'s result. Eagerly ``fn`` runs op by op; inside an
    ``@autoloop.function`` its loops are differentiated as loops (the
    tangent carried beside the state). As ``jax.jvp``; TensorFlow spells it
    with a `ForwardAccumulator`, which this wraps.

        y, dy = autoloop.autodiff.jvp(lambda x: x ** 3, [x], [ones])    # dy = 3 x**2
    """
    primals = [_as_tensor(p) for p in primals]
    with ForwardAccumulator(primals, list(tangents)) as accumulator:
        result = fn(*primals)
    return result, accumulator.jvp(result, unconnected_gradients)


def _as_tensor(value):
    if hasattr(value, "components") and not isinstance(value, Tensor):  # a TensorArray
        return value.components()[0]
    return value if isinstance(value, Tensor) else convert(value)
