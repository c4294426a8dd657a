"""Lowering: functional ``While``/``Cond`` nodes become the dataflow form.

    lowered = lower(graph)                          # a DataflowGraph (see form.py)
    lowered = lower(graph, parallel_iterations=1)   # every loop: one iteration at a time

The walk is generic: ordinary nodes are copied into the frame being built,
and a control-flow node is lowered by the ``lower`` rule its registration in
`autoloop.ir.control_flow` names, ``rule(lowering, node, context, env,
control) -> completion nodes``. This module holds the rules of ``While``,
``Cond`` and ``Scan``. Sub-graphs are inlined: node names get their loop's
or branch's prefix (``while/body/Add``).

``While`` (TensorFlow's construction of a ``tf.while_loop``): every loop variable goes
``Enter -> Merge -> Switch``; the Switch sends it to ``Exit`` when the
``LoopCond`` is false, into the body when it is true, and the body's result
goes round through ``NextIteration`` into the Merge. Captured values enter
once through ``Enter(is_constant=True)``. ``maximum_iterations`` adds a
counter loop variable, and the condition is then evaluated only while the
counter is below the limit (as the reference interpreter does). A loop
with effects carries a *token* loop variable: the first effects of an
iteration come after it, and it goes round after the last ones, so effects
keep program order across iterations for any ``parallel_iterations``.

``Scan`` stays one node of its frame, run by its interpreter rule
(`lower_as_one_node`): its frames, masks and run-time checks are not
written with this machinery yet.

``Cond``: the predicate and each captured value pass a ``Switch`` on the
predicate; each branch reads the side of its switches, and each output is
a ``Merge`` of the two branches' results. A branch with effects also gives
a token to a ``Merge`` that marks the branch done.

Gating: a node inside a loop or branch whose inputs are all loop-invariant
(``Enter(is_constant=True)``), or which has none (a constant), gets an
ordering edge from the context's *pivot* (an ``Identity`` of a Switch
output), so it runs once per iteration, and not at all in a branch not
taken, as TF's control-flow contexts do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autoloop import dtypes
from autoloop.execute.dataflow.form import DataflowGraph, Frame, LoopBoundary, Node, Output
from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects
from autoloop.ir.lazy import resolve
from autoloop.shapes import TensorShape

TOKEN_SPEC = (dtypes.bool_, TensorShape([]))  # what a Token output is declared as (its value is True)
_SCALAR = TensorShape([])


@dataclass(frozen=True)
class Context:
    """Where nodes are being placed: a frame, its gate, a name prefix and a place in program order."""

    frame: Frame
    pivot: Node | None  # what a node with nothing else to wait for waits for (None: run at once)
    prefix: str
    order: tuple  # one tuple per frame level: the position in program order

    def at(self, position) -> Context:
        """This context, positioned at `position` of its current level."""
        return Context(self.frame, self.pivot, self.prefix, self.order[:-1] + (self.order[-1] + (position,),))

    def inner(self, frame: Frame, pivot: Node | None, prefix: str, phase) -> Context:
        """The context of a sub-graph of the node here: a new frame level, or the same one."""
        if frame is self.frame:
            return Context(frame, pivot, prefix, self.order[:-1] + (self.order[-1] + (phase,),))
        return Context(frame, pivot, prefix, self.order + ((phase,),))


def lower(graph, parallel_iterations: int | None = None) -> DataflowGraph:
    """The dataflow form of `graph` (a top-level graph of ``autoloop.ir``).

    `parallel_iterations`, when given, replaces every loop's own (the
    executor's results must not depend on it). NotImplementedError for a
    control-flow op whose ``lower`` slot is empty.
    """
    if parallel_iterations is not None and (isinstance(parallel_iterations, bool)
                                            or not isinstance(parallel_iterations, int) or parallel_iterations <= 0):
        raise ValueError(f"parallel_iterations must be a positive integer, got {parallel_iterations!r}")
    lowering = Lowering(graph.name, parallel_iterations)
    out = lowering.out
    env: dict = {}
    for value in graph.inputs:
        placeholder = out.add("Placeholder", [], out.root, [(value.dtype, value.shape)],
                              attrs=value.node.attrs, source=value.node, name=value.node.name)
        env[value] = placeholder.outputs[0]
        out.inputs.append(placeholder.outputs[0])
        lowering.completions[value.node] = [placeholder]
    lowering.lower_graph(graph, Context(out.root, None, "", ((),)), env)
    out.outputs = [env[v] for v in graph.outputs]
    out.effects = [done for node in graph.nodes if has_effects(node) for done in lowering.completions[node]]
    out.values = env
    out.completions = {node: lowering.completions[node] for node in graph.nodes}
    return out


class Lowering:
    """One lowering: the graph being built and what each functional node became."""

    def __init__(self, name: str, parallel_iterations: int | None):
        self.out = DataflowGraph(name)
        self.parallel_iterations = parallel_iterations
        self.completions: dict = {}  # functional node -> the lowered nodes that mark it done

    # -- building ----------------------------------------------------------------
    def add(self, op: str, inputs, context: Context, specs, attrs=None, control=(), source=None,
            name: str | None = None, frame: Frame | None = None) -> Node:
        """A node in `context` (or in `frame`, for an Enter), gated by the context's pivot if it needs it."""
        control = list(control)
        if context.pivot is not None and not control and all(_invariant(v) for v in inputs) and op != "Merge":
            control.append(context.pivot)
        return self.out.add(op, inputs, frame or context.frame, specs, attrs, control, source,
                            name=context.prefix + (name or op), program_order=context.order)

    def token(self, context: Context, control, name: str = "Token") -> Node:
        """A node standing for all of `control` having run (dead if any of them is)."""
        return self.add("Token", [], context, [TOKEN_SPEC], control=control, name=name)

    def identity(self, value: Output, context: Context, name: str) -> Node:
        return self.add("Identity", [value], context, [(value.dtype, value.shape)], name=name)

    def constant(self, value, context: Context, name: str = "Const") -> Output:
        array = np.asarray(value)
        spec = (dtypes.as_dtype(array.dtype), TensorShape(array.shape))
        return self.add("Const", [], context, [spec], attrs={"value": array[()]}, name=name).outputs[0]

    # -- walking -------------------------------------------------------------------
    def lower_graph(self, graph, context: Context, env: dict, entry=()) -> list[Node]:
        """Lower `graph`'s nodes into `context`; `env` maps its parameters and receives its values.

        The graph's first effects also wait for the nodes in `entry`.
        Returns the nodes that mark its last effects done (what a token
        going on from this graph must wait for).
        """
        first, last = _effect_ends(graph) if entry or any(has_effects(n) for n in graph.nodes) else ((), ())
        first_ids = {id(n) for n in first}
        for position, node in enumerate(graph.nodes):
            if node.op == "Placeholder":
                if node.outputs[0] not in env:
                    raise ValueError(f"internal error: placeholder {node.name} of graph {graph.name!r} "
                                     f"has no value to stand for")
                self.completions.setdefault(node, [])
                continue
            control = [done for before in node.control_inputs for done in self.completions[before]]
            if id(node) in first_ids:
                control += list(entry)
            self.completions[node] = self.lower_node(node, context.at(position), env, control)
        return [done for node in last for done in self.completions[node]]

    def lower_node(self, node, context: Context, env: dict, control) -> list[Node]:
        op = control_flow.lookup(node.op)
        if op is None:
            inputs = [env[v] for v in node.inputs]
            lowered = self.add(node.op, inputs, context, [(v.dtype, v.shape) for v in node.outputs],
                               attrs=node.attrs, control=control, source=node, name=node.name)
            env.update(zip(node.outputs, lowered.outputs))
            return [lowered]
        rule = resolve(op.lower)
        if rule is None:
            raise NotImplementedError(
                f"{node.op} node {node.name} cannot be lowered to the dataflow form yet (its `lower` slot in "
                f"autoloop.ir.control_flow is empty); run this graph with the compiled executor "
                f"(autoloop.function) instead of a Session")
        return rule(self, node, context, env, control)


def _invariant(value: Output) -> bool:
    """Whether `value` is the same in every iteration of its frame (a loop-invariant Enter)."""
    return value.node.op == "Enter" and value.node.attrs["is_constant"]


def _effect_ends(graph):
    """The effectful nodes of `graph` that no other one precedes, and those that none follows."""
    effectful = [n for n in graph.nodes if has_effects(n)]
    ids = {id(n) for n in effectful}
    preceded = {id(n) for n in effectful if any(id(c) in ids for c in n.control_inputs)}
    followed = {id(c) for n in effectful for c in n.control_inputs if id(c) in ids}
    return ([n for n in effectful if id(n) not in preceded],
            [n for n in effectful if id(n) not in followed])


class _Gate:
    """Switches on one predicate: each value switched once, pivots for both sides."""

    def __init__(self, lowering: Lowering, pred: Output, context: Context, control, prefix: str):
        self.lowering, self.pred, self.context, self.control = lowering, pred, context, list(control)
        self.prefix = prefix
        switch = self._switch(pred, prefix + "pred_switch")
        self.pivot = {True: lowering.identity(switch.outputs[1], context, prefix + "pivot_t"),
                      False: lowering.identity(switch.outputs[0], context, prefix + "pivot_f")}
        self._switches: dict = {}

    def _switch(self, value: Output, name: str) -> Node:
        spec = (value.dtype, value.shape)
        return self.lowering.add("Switch", [value, self.pred], self.context, [spec, spec], control=self.control,
                                 name=name)

    def side(self, value: Output, taken: bool) -> Output:
        """`value` as seen on the `taken` side (dead on the other)."""
        switch = self._switches.get(value)
        if switch is None:
            switch = self._switches[value] = self._switch(value, self.prefix + "Switch")
        return switch.outputs[1 if taken else 0]


# -- Cond -------------------------------------------------------------------------------------
def lower_cond(lowering: Lowering, node, context: Context, env: dict, control) -> list[Node]:
    """``Cond`` as Switch/Merge pairs; see the module docstring."""
    groups = control_flow.operands(node)
    here = Context(context.frame, context.pivot, f"{context.prefix}{node.name}/", context.order)
    gate = _Gate(lowering, env[groups.pred[0]], here, control, "")
    results = {}
    ends = {}
    for taken, key, captures in ((True, "true_graph", groups.true_captures),
                                 (False, "false_graph", groups.false_captures)):
        branch = node.attrs[key]
        branch_env = {ph: gate.side(env[outer], taken) for outer, ph in zip(captures, branch.inputs)}
        inner = context.inner(context.frame, gate.pivot[taken], f"{here.prefix}{'true' if taken else 'false'}/",
                              int(taken))
        ends[taken] = lowering.lower_graph(branch, inner, branch_env)
        results[taken] = [branch_env[v] for v in branch.outputs]
    completion = []
    for value, on_true, on_false in zip(node.outputs, results[True], results[False]):
        merge = lowering.add("Merge", [on_true, on_false], here, [(value.dtype, value.shape)])
        env[value] = merge.outputs[0]
        completion.append(merge)
    if has_effects(node) or not node.outputs:
        # Something to wait for that is live whichever branch ran: each side's token after its effects.
        tokens = [lowering.token(here, ends[taken] or [gate.pivot[taken]], name=f"{side}_done").outputs[0]
                  for taken, side in ((True, "true"), (False, "false"))]
        completion.append(lowering.add("Merge", tokens, here, [TOKEN_SPEC], name="branch_done"))
    return completion


# -- While ------------------------------------------------------------------------------------
def lower_while(lowering: Lowering, node, context: Context, env: dict, control) -> list[Node]:
    """``While`` as Enter/Merge/Switch/NextIteration/Exit; see the module docstring."""
    return _LoopLowering(lowering, node, context, env, control).build()


class _LoopLowering:
    """The nodes of one loop, built in the order TensorFlow builds a ``tf.while_loop``.

    `build` runs the steps: the loop variables enter (`enter_state`), the
    condition is tested (`test`), every carried value is routed to Exit or
    into the body (`route`), and the body computes the next iteration
    (`go_round`). Carried are the loop variables, then the iteration counter
    (with ``maximum_iterations``), then the effects token (with effects).
    """

    def __init__(self, lowering: Lowering, node, context: Context, env: dict, control):
        self.lowering, self.node, self.outer, self.env, self.control = lowering, node, context, env, control
        self.groups = control_flow.operands(node)
        self.count = node.attrs["num_loop_vars"]
        self.cond, self.body = node.attrs["cond"], node.attrs["body"]
        name = f"{context.prefix}{node.name}"
        parallel = lowering.parallel_iterations or node.attrs.get("parallel_iterations", 10)
        self.frame = lowering.out.add_frame(name, context.frame, parallel)
        self.here = context.inner(self.frame, None, f"{name}/", -1)  # the loop's own nodes
        self.limit = self.groups.maximum_iterations[0] if self.groups.maximum_iterations else None
        self._invariants: dict = {}
        self.merges: list[Node] = []  # of the loop variables
        self.counter: Node | None = None  # the iteration counter's Merge
        self.token: Node | None = None  # the effects token's Merge

    def build(self) -> list[Node]:
        self.enter_state()
        test, after_cond = self.test()
        switches = self.route(test, after_cond)
        exits = [self.lowering.add("Exit", [s.outputs[0]], self.here, [(v.dtype, v.shape)])
                 for s, v in zip(switches, self.node.outputs)]
        if self.token is not None:
            exits.append(self.lowering.add("Exit", [switches[-1].outputs[0]], self.here, [TOKEN_SPEC]))
        self.go_round(switches)
        self.frame.loop = LoopBoundary(self.node, [self.env[v] for v in self.node.inputs], exits,
                                       self.outer.order)
        self.env.update(zip(self.node.outputs, [e.outputs[0] for e in exits[:self.count]]))
        return exits

    # -- the parts ---------------------------------------------------------------------------
    def enter(self, value: Output, constant: bool, label: str) -> Output:
        attrs = {"frame_name": self.frame.name, "is_constant": constant,
                 "parallel_iterations": self.frame.parallel_iterations, "loop_var": label}
        node = self.lowering.add("Enter", [value], self.outer, [(value.dtype, value.shape)], attrs=attrs,
                                 control=self.control, frame=self.frame, name=f"{self.node.name}/Enter")
        return node.outputs[0]

    def invariant(self, outer_value) -> Output:
        """The loop-invariant Enter of a captured outer value (one per value, shared by cond and body)."""
        if outer_value not in self._invariants:
            self._invariants[outer_value] = self.enter(self.env[outer_value], True, outer_value.name)
        return self._invariants[outer_value]

    def merge(self, entered: Output, spec, label: str) -> Node:
        return self.lowering.add("Merge", [entered], self.here, [spec], attrs={"loop": True, "loop_var": label})

    def enter_state(self) -> None:
        """Enter and Merge for each loop variable, the counter and the effects token."""
        lowering, node, count = self.lowering, self.node, self.count
        labels = list(node.attrs.get("names") or [f"loop_vars[{k}]" for k in range(count)])
        specs = [(p.dtype, p.shape) for p in self.body.inputs[:count]]
        start = lowering.token(self.outer, self.control, name=f"{node.name}/effects_start") \
            if has_effects(node) else None
        self.merges = [self.merge(self.enter(self.env[v], False, label), spec, label)
                       for v, spec, label in zip(self.groups.loop_vars, specs, labels)]
        if self.limit is not None:
            zero = lowering.constant(np.zeros((), self.limit.dtype.as_numpy_dtype), self.outer, "iterations_start")
            self.counter = self.merge(self.enter(zero, False, "iterations"), (self.limit.dtype, _SCALAR),
                                      "iterations")
        if start is not None:
            self.token = self.merge(self.enter(start.outputs[0], False, "effects"), TOKEN_SPEC, "effects")

    def test(self) -> tuple[Output, Node | None]:
        """The condition, in every iteration (only below the limit, if there is one): the test, and the token after it."""
        cond, count = self.cond, self.count
        env = dict(zip(cond.inputs[:count], [m.outputs[0] for m in self.merges]))
        env.update({ph: self.invariant(outer) for outer, ph in zip(self.groups.cond_captures, cond.inputs[count:])})
        context = self.outer.inner(self.frame, self.merges[0], f"{self.here.prefix}cond/", 0)
        if self.limit is not None:
            test, after_cond = self._limited_test(context, env)
        else:
            ends = self.lowering.lower_graph(cond, context, env, [self.token] if self.token else ())
            test, after_cond = env[cond.outputs[0]], self.token
            if self.token is not None and ends:
                after_cond = self.lowering.token(self.here, ends, name="cond_done")
        loop_cond = self.lowering.add("LoopCond", [test], context, [(dtypes.bool_, _SCALAR)], name="LoopCond")
        return loop_cond.outputs[0], after_cond

    def _limited_test(self, cond_context: Context, cond_env: dict):
        """``counter < limit and cond(...)``, evaluating cond only below the limit (the interpreter's order)."""
        lowering, token = self.lowering, self.token
        within = lowering.add("Less", [self.counter.outputs[0], self.invariant(self.limit)], self.here,
                              [(dtypes.bool_, _SCALAR)], name="below_limit")
        gate = _Gate(lowering, within.outputs[0], self.here, (), "limit_")
        guarded = {ph: gate.side(value, True) for ph, value in cond_env.items()}
        context = Context(self.frame, gate.pivot[True], cond_context.prefix, cond_context.order)
        entry = [lowering.token(self.here, [token, gate.pivot[True]], name="cond_effects_in")] if token else []
        ends = lowering.lower_graph(self.cond, context, guarded, entry)
        stop = lowering.constant(np.False_, Context(self.frame, gate.pivot[False], self.here.prefix, self.here.order),
                                 "limit_reached")
        test = lowering.add("Merge", [guarded[self.cond.outputs[0]], stop], self.here, [(dtypes.bool_, _SCALAR)],
                            name="test")
        if token is not None:
            tokens = [lowering.token(self.here, ends or entry, name="cond_done").outputs[0],
                      lowering.token(self.here, [token, gate.pivot[False]], name="cond_skipped").outputs[0]]
            token = lowering.add("Merge", tokens, self.here, [TOKEN_SPEC], name="effects_after_cond")
        return test.outputs[0], token

    def route(self, test: Output, after_cond: Node | None) -> list[Node]:
        """A Switch on the test for every carried value: output 0 leaves, output 1 goes round."""
        routed = [m.outputs[0] for m in self.merges] + ([self.counter.outputs[0]] if self.counter else [])
        routed += [after_cond.outputs[0]] if self.token is not None else []
        return [self.lowering.add("Switch", [value, test], self.here, [(value.dtype, value.shape)] * 2)
                for value in routed]

    def go_round(self, switches: list[Node]) -> None:
        """The body, and NextIteration into each carried Merge."""
        lowering, body, count = self.lowering, self.body, self.count
        pivot = lowering.identity(switches[0].outputs[1], self.here, "pivot")
        env = dict(zip(body.inputs[:count], [s.outputs[1] for s in switches[:count]]))
        env.update({ph: self.invariant(outer) for outer, ph in zip(self.groups.body_captures, body.inputs[count:])})
        context = self.outer.inner(self.frame, pivot, f"{self.here.prefix}body/", 1)
        entry = [lowering.identity(switches[-1].outputs[1], self.here, "effects_in")] if self.token else []
        ends = lowering.lower_graph(body, context, env, entry)
        nexts = [env[v] for v in body.outputs]
        if self.counter is not None:
            one = lowering.constant(np.ones((), self.limit.dtype.as_numpy_dtype), context, "iterations_step")
            step = lowering.add("Add", [switches[count].outputs[1], one], context, [(self.limit.dtype, _SCALAR)],
                                name="iterations_next")
            nexts.append(step.outputs[0])
        if self.token is not None:
            nexts.append(lowering.token(context, ends or entry, name="body_done").outputs[0])
        carried = self.merges + [m for m in (self.counter, self.token) if m is not None]
        for merge, value in zip(carried, nexts):
            following = lowering.add("NextIteration", [value], context, [(value.dtype, value.shape)],
                                     name="NextIteration")
            merge.inputs.append(following.outputs[0])



# -- ops that run as one node -----------------------------------------------------------------------
def lower_as_one_node(lowering: Lowering, node, context: Context, env: dict, control) -> list[Node]:
    """The control-flow node unchanged: one node of the frame, run by its op's interpreter rule.

    For an op whose meaning is not (yet) written with the dataflow machinery
    (``Scan``: its frames, masks and run-time checks): it gives the
    reference interpreter's results, and its effects run in its place in
    program order, but its own iterations are not spread over frames.
    """
    lowered = lowering.add(node.op, [env[v] for v in node.inputs], context,
                           [(v.dtype, v.shape) for v in node.outputs], attrs=node.attrs, control=control,
                           source=node, name=node.name)
    env.update(zip(node.outputs, lowered.outputs))
    return [lowered]
