"""Lowering: functional ``While``/``Cond`` nodes become the dataflow form.

    lowered = lower(graph)                          # a DataflowGraph (see form.py)
    lowered = lower(graph, parallel_iterations=1)   # every loop: one iteration at a time

The walk is generic: ordinary nodes are copied into the frame being built,
and a control-flow node is lowered by the ``lower`` rule its registration in
`autoloop.ir.control_flow` names, ``rule(lowering, node, context, env,
control) -> completion nodes``. This module holds the rules of ``While``
and ``Cond``. Sub-graphs are inlined: node names get their loop's or
branch's prefix (``while/body/Add``).

``While`` (seed 001's construction): every loop variable goes
``Enter -> Merge -> Switch``; the Switch sends it to ``Exit`` when the
``LoopCond`` is false, into the body when it is true, and the body's result
goes round through ``NextIteration`` into the Merge. Captured values enter
once through ``Enter(is_constant=True)``. ``maximum_iterations`` adds a
counter loop variable, and the condition is then evaluated only while the
counter is below the limit (as the reference interpreter does). A loop
with effects carries a *token* loop variable: the first effects of an
iteration come after it, and it goes round after the last ones, so effects
keep program order across iterations for any ``parallel_iterations``.

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
from autoloop.execute.dataflow.form import DataflowGraph, Frame, Node, Output
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
    """The nodes of one loop, built in the order of seed 001's description."""

    def __init__(self, lowering: Lowering, node, context: Context, env: dict, control):
        self.lowering, self.node, self.outer, self.env, self.control = lowering, node, context, env, control
        self.groups = control_flow.operands(node)
        self.count = node.attrs["num_loop_vars"]
        name = f"{context.prefix}{node.name}"
        parallel = lowering.parallel_iterations or node.attrs.get("parallel_iterations", 10)
        self.frame = lowering.out.add_frame(name, context.frame, parallel)
        self.here = context.inner(self.frame, None, f"{name}/", -1)  # the loop's own nodes
        self._invariants: dict = {}

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

    def build(self) -> list[Node]:
        lowering, node, groups, count = self.lowering, self.node, self.groups, self.count
        cond, body = node.attrs["cond"], node.attrs["body"]
        labels = list(node.attrs.get("names") or [f"loop_vars[{k}]" for k in range(count)])
        specs = [(p.dtype, p.shape) for p in body.inputs[:count]]
        start = lowering.token(self.outer, self.control, name=f"{node.name}/effects_start") \
            if has_effects(node) else None
        merges = [self.merge(self.enter(self.env[v], False, label), spec, label)
                  for v, spec, label in zip(groups.loop_vars, specs, labels)]
        limit = groups.maximum_iterations[0] if groups.maximum_iterations else None
        counter = None
        if limit is not None:
            zero = lowering.constant(np.zeros((), limit.dtype.as_numpy_dtype), self.outer, "iterations_start")
            counter = self.merge(self.enter(zero, False, "iterations"), (limit.dtype, _SCALAR), "iterations")
        token = None  # the effects token's Merge
        if start is not None:
            token = self.merge(self.enter(start.outputs[0], False, "effects"), TOKEN_SPEC, "effects")

        # The condition, in every iteration (only below the limit, if there is one).
        cond_env = dict(zip(cond.inputs[:count], [m.outputs[0] for m in merges]))
        cond_env.update({ph: self.invariant(outer) for outer, ph in zip(groups.cond_captures, cond.inputs[count:])})
        cond_context = self.outer.inner(self.frame, merges[0], f"{self.here.prefix}cond/", 0)
        after_cond = token  # the token once the condition's effects have run
        if limit is None:
            ends = lowering.lower_graph(cond, cond_context, cond_env, [token] if token else ())
            test = cond_env[cond.outputs[0]]
            if token is not None and ends:
                after_cond = lowering.token(self.here, ends, name="cond_done")
        else:
            test, after_cond = self._limited_test(cond, cond_context, cond_env, counter, self.invariant(limit), token)
        loop_cond = lowering.add("LoopCond", [test], cond_context, [(dtypes.bool_, _SCALAR)], name="LoopCond")

        # Route every loop variable to Exit or into the body.
        carried = merges + ([counter] if counter is not None else []) + ([token] if token is not None else [])
        routed = [m.outputs[0] for m in merges + ([counter] if counter is not None else [])]
        routed += [after_cond.outputs[0]] if token is not None else []
        switches = [lowering.add("Switch", [value, loop_cond.outputs[0]], self.here, [(value.dtype, value.shape)] * 2)
                    for value in routed]
        exits = [lowering.add("Exit", [s.outputs[0]], self.here, [(v.dtype, v.shape)])
                 for s, v in zip(switches, node.outputs)]
        pivot = lowering.identity(switches[0].outputs[1], self.here, "pivot")

        # The body, and the next iteration.
        body_env = dict(zip(body.inputs[:count], [s.outputs[1] for s in switches[:count]]))
        body_env.update({ph: self.invariant(outer) for outer, ph in zip(groups.body_captures, body.inputs[count:])})
        body_context = self.outer.inner(self.frame, pivot, f"{self.here.prefix}body/", 1)
        entry = [lowering.identity(switches[-1].outputs[1], self.here, "effects_in")] if token is not None else []
        ends = lowering.lower_graph(body, body_context, body_env, entry)
        nexts = [body_env[v] for v in body.outputs]
        if counter is not None:
            one = lowering.constant(np.ones((), limit.dtype.as_numpy_dtype), body_context, "iterations_step")
            step = lowering.add("Add", [switches[count].outputs[1], one], body_context, [(limit.dtype, _SCALAR)],
                                name="iterations_next")
            nexts.append(step.outputs[0])
        if token is not None:
            nexts.append(lowering.token(body_context, ends or entry, name="body_done").outputs[0])
            exits.append(lowering.add("Exit", [switches[-1].outputs[0]], self.here, [TOKEN_SPEC]))
        for merge, value in zip(carried, nexts):
            following = lowering.add("NextIteration", [value], body_context, [(value.dtype, value.shape)],
                                     name="NextIteration")
            merge.inputs.append(following.outputs[0])
        self.env.update(zip(node.outputs, [e.outputs[0] for e in exits[:count]]))
        return exits

    def _limited_test(self, cond, cond_context: Context, cond_env: dict, counter: Node, limit: Output, token):
        """The loop test ``counter < limit and cond(...)``, evaluating cond only below the limit."""
        lowering = self.lowering
        within = lowering.add("Less", [counter.outputs[0], limit], self.here, [(dtypes.bool_, _SCALAR)],
                              name="below_limit")
        gate = _Gate(lowering, within.outputs[0], self.here, (), "limit_")
        guarded = {ph: gate.side(value, True) for ph, value in cond_env.items()}
        context = Context(self.frame, gate.pivot[True], cond_context.prefix, cond_context.order)
        entry = [lowering.token(self.here, [token, gate.pivot[True]], name="cond_effects_in")] if token else []
        ends = lowering.lower_graph(cond, context, guarded, entry)
        stop = lowering.constant(np.False_, Context(self.frame, gate.pivot[False], self.here.prefix, self.here.order),
                                 "limit_reached")
        test = lowering.add("Merge", [guarded[cond.outputs[0]], stop], self.here, [(dtypes.bool_, _SCALAR)],
                            name="test")
        if token is not None:
            tokens = [lowering.token(self.here, ends or entry, name="cond_done").outputs[0],
                      lowering.token(self.here, [token, gate.pivot[False]], name="cond_skipped").outputs[0]]
            token = lowering.add("Merge", tokens, self.here, [TOKEN_SPEC], name="effects_after_cond")
        return test.outputs[0], token

