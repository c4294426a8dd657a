"""The ``"jax"`` rules of ``While`` and ``Cond`` (`autoloop.ir.control_flow`): ``lax.while_loop`` and ``lax.cond``.

``While``: the loop state is the loop variables, the error state of the
run-time checks (`autoloop.backends.jax.checks`) when the program has
checks, and an iteration counter when the loop has ``maximum_iterations``,
folded into the condition::

    while (counter < maximum_iterations) and cond(*loop_vars) and nothing_failed:
        loop_vars = body(*loop_vars); counter += 1

Variables (`autoloop.Variable`) are state of every loop and outputs of
every branch (`autoloop.backends.jax.variables`): their current values
travel in the carry and in the branches' results.

``Cond``: a predicate known while compiling picks its branch now (its
values stay static); otherwise ``lax.cond`` with both branches, which must
give each output one shape. A branch's output with no elements stands in
for a value the other branch computes (a gradient's placeholder: zeros
with unknown dimensions set to 0), so it becomes zeros of the other
branch's shape.

XLA keeps every value's shape fixed across a loop's iterations and across
a conditional's branches; a loop variable whose shape changes, or an
output the branches give different shapes, is a `BackendError` naming the
user's variable and line. Each sub-graph is walked once: its function is
``jax.jit``-wrapped, so checking its result types (``jax.eval_shape``) and
lowering it hit the same trace.
"""

from __future__ import annotations

import re

import numpy as np

from autoloop.backends.jax import interrupts
from autoloop.backends.jax.marks import is_static, unsupported
from autoloop.control_flow.loop_vars import as_code
from autoloop.ir import control_flow
from autoloop.ops.v1_ops import UPDATE_OPS


def lower_while(lowering, node, args) -> list:
    import jax
    import jax.numpy as jnp
    cond_graph, body_graph = node.attrs["cond"], node.attrs["body"]
    groups = control_flow.split(node, args)
    count = len(groups.loop_vars)
    limit = groups.maximum_iterations[0] if groups.maximum_iterations else None
    if limit is not None and is_static(limit) and int(limit) <= 0:
        return list(groups.loop_vars)
    # A provisional capacity (`growth`): an iteration past it fails the loop's check, and the program grows it.
    capacity = (lowering.facts.capacities or {}).get(node)
    params = body_graph.inputs[:count]
    carry_value = lowering.facts.carry_value

    refuse_variable_writes([cond_graph], "a while loop's condition")

    def test(values, errors):
        (result,), errors = run_subgraph(lowering, cond_graph, list(values) + list(groups.cond_captures), errors)
        return jnp.asarray(result), errors

    # The carry: (loop variables, error state, counter or None, the condition's result or None). A
    # condition with checks is evaluated at the end of each iteration (and once before the loop), so
    # that its checks can fail the loop: a while_loop's cond returns a boolean only.
    rotated = has_checks(lowering, cond_graph)
    initial = tuple(carry_value(value, param) for value, param in zip(groups.loop_vars, params))
    counter = jnp.asarray(0, limit.dtype if limit is not None else np.int32) \
        if limit is not None or capacity is not None else None
    first, errors = test(initial, lowering.errors) if rotated else (None, lowering.errors)

    def cond_fn(carry):
        values, errors, iterations, result, variables = carry
        if result is None:
            with lowering.variables_set(variables):
                result, _ = test(values, errors)  # no checks in cond: nothing to report
        if limit is not None:
            result = result & (iterations < limit)
        return result & errors.ok if errors is not None else result

    def body_fn(carry):
        values, errors, iterations, _, variables = carry
        if capacity is not None:
            errors = errors.fail(lowering.facts.capacity_sites[node], iterations >= capacity)
        with lowering.variables_set(variables) as state:  # the variables are loop state too
            results, errors = run_subgraph(lowering, body_graph, list(values) + list(groups.body_captures), errors)
            values = tuple(carry_value(r, p) for r, p in zip(results, params))
            iterations = None if iterations is None else iterations + 1
            result = None
            if rotated:
                if limit is None:
                    result, errors = test(values, errors)
                else:  # the numpy executor stops at the limit before testing: so does this
                    result, errors = jax.lax.cond(iterations < limit, test, lambda v, e: (jnp.asarray(False), e),
                                                  values, errors)
            variables = state.values()
        return values, errors, iterations, result, variables

    carry = (initial, errors, counter, first, lowering.variables.values())
    body_jit = jax.jit(body_fn)
    after = jax.eval_shape(body_jit, carry)
    check_shapes_kept(node, carry[0], after[0], "while loop's variable")
    _check_variables_kept(node, lowering.variables.cells, carry[4], after[4])
    if node in lowering.facts.sites.by_node:  # a loop that may run long: Ctrl-C can stop it
        values, lowering.errors, _, _, variables = interrupts.watched_loop(lowering, node, cond_fn, body_jit, carry)
    else:
        values, lowering.errors, _, _, variables = jax.lax.while_loop(cond_fn, body_jit, carry)
    lowering.variables.update(variables)
    return list(values)


lower_while.site = interrupts.interrupt_site  # the check an interruptible loop has (`interrupts`)


def _check_variables_kept(node, cells, before, after) -> None:
    """A `BackendError` naming the variable (`autoloop.Variable`) whose shape the loop's body changes."""
    for cell, old, new in zip(cells, before, after):
        if np.shape(old) != np.shape(new):
            raise unsupported(node, f"the variable {cell.name!r} has shape {np.shape(old)} before an iteration and "
                                    f"{np.shape(new)} after it, so the loop",
                              "XLA compiles loops whose state keeps one shape. Keep the variable's shape, or run "
                              "on backend='numpy'")


def run_subgraph(lowering, graph, inputs, errors):
    """`graph`'s outputs and the error state after it, from the error state before (a loop's or branch's)."""
    saved, lowering.errors = lowering.errors, errors
    try:
        return lowering.run_graph(graph, inputs), lowering.errors
    finally:
        lowering.errors = saved


def refuse_variable_writes(graphs, what: str) -> None:
    """A `BackendError` for a variable update in `graphs` (a loop's condition, a scan's sub-graphs): variables
    are not carried there."""
    node = next((n for graph in graphs for n in graph.walk() if n.op in UPDATE_OPS), None)
    if node is not None:
        raise unsupported(node, f"a variable update in {what}", "the backend carries variables through loop "
                                "bodies and branches only. Update the variable in the loop body, or run on "
                                "backend='numpy'")


def has_checks(lowering, graph) -> bool:
    """Whether `graph` (a loop's condition) has run-time checks: then it is evaluated where they can fail."""
    return lowering.errors is not None and any(n in lowering.facts.sites.by_node for n in graph.walk())


def check_shapes_kept(node, before, after, what: str) -> None:
    """A `BackendError` naming the loop variable whose shape an iteration changes (XLA keeps them)."""
    import jax
    names = node.attrs.get("names") or ()
    for position, (old, new) in enumerate(zip(before, after)):
        old_leaves, new_leaves = jax.tree.leaves(old), jax.tree.leaves(new)
        changed = [(np.shape(a), np.shape(b)) for a, b in zip(old_leaves, new_leaves) if np.shape(a) != np.shape(b)]
        if changed:
            label = names[position] if position < len(names) else f"number {position}"
            subject = user_subject(node, label)
            if subject is None or subject.startswith("'"):  # the user's own variable
                subject = f"the {what} {as_code(label)}"
            was, became = changed[0]
            raise unsupported(node, f"{subject} has shape {was} before an iteration and {became} after "
                                    f"it, so the loop",
                              "XLA compiles loops whose variables keep one shape (a shape invariant with None "
                              "allows the change on backend='numpy' only). Preallocate the final size and write "
                              "into it (a TensorArray of fixed size, or padding with a length), or run on "
                              "backend='numpy'")


def lower_cond(lowering, node, args) -> list:
    import jax
    import jax.numpy as jnp
    groups = control_flow.split(node, args)
    (pred,) = groups.pred
    graphs = {True: (node.attrs["true_graph"], list(groups.true_captures)),
              False: (node.attrs["false_graph"], list(groups.false_captures))}
    if is_static(pred):
        graph, captures = graphs[bool(pred)]
        return lowering.run_graph(graph, captures)

    variables = lowering.variables.values()

    def branch(key):
        graph, captures = graphs[key]

        def run(errors):
            saved, lowering.errors = lowering.errors, errors
            try:
                with lowering.variables_set(variables) as state:  # the variables are branch outputs too
                    outputs = lowering.run_graph(graph, captures)
                    written = state.values()
                for value in outputs:
                    if hasattr(value, "refuse"):  # a stacked list of run-time length (buffers.Padded)
                        raise value.refuse(node)
                outputs = list(outputs) + list(written)
                return [jnp.asarray(v) if is_static(v) else v for v in outputs], lowering.errors
            finally:
                lowering.errors = saved
        return jax.jit(run)

    true_fn, false_fn = branch(True), branch(False)
    errors = lowering.errors
    true_fn, false_fn = _same_shapes(node, true_fn, false_fn, errors)
    outputs, lowering.errors = jax.lax.cond(jnp.asarray(pred), true_fn, false_fn, errors)
    count = len(outputs) - len(variables)
    lowering.variables.update(outputs[count:])
    return list(outputs[:count])


def _branch_output(node, position):
    """``(subject, (taken, not taken))``: how a message names the ``Cond``'s output `position` and its two
    paths, in the user's words where the converted code said them (the node's ``described``)."""
    names = node.attrs.get("names") or ()
    label = names[position] if position < len(names) else f"output {position}"
    described = node.attrs.get("described")
    if described is None:
        return f"the cond's {as_code(label)}", ("in the true branch", "in the false branch")
    statement, sides, _ = described
    return user_subject(node, label) or f"{as_code(label)} of {statement}", sides


def user_subject(node, label: str):
    """How a message names the value `label` (``'y'[1]``, ``y[1]``) that a ``While`` or ``Cond`` from
    converted code carries: ``'y'[1]``, or in the user's words what a name the compiler made stands for
    (``item [1] of the return value (of the return at line 4)``; the node's ``described``, see
    `autoloop.runtime.layout.Statement.described`). None for a label the converted code did not name."""
    described = node.attrs.get("described")
    found = re.match(r"'?([^'\[]*)'?(.*)$", label)
    if described is None or found.group(1) not in described[2]:
        return None
    (subject, maybe), rest = described[2][found.group(1)], found.group(2)
    if maybe:  # carried as (value, defined): its value is [0]
        rest = rest[len("[0]"):]
    if subject.startswith("'"):
        return f"{subject}{rest}"
    return f"item {rest} of {subject}" if rest else subject


def _same_shapes(node, true_fn, false_fn, errors):
    """The branch functions, an empty output of one replaced by zeros of the other's shape."""
    import jax
    import jax.numpy as jnp
    true_out, _ = jax.eval_shape(true_fn, errors)
    false_out, _ = jax.eval_shape(false_fn, errors)
    fixes = {True: {}, False: {}}
    names = node.attrs.get("names") or ()
    for position, (t, f) in enumerate(zip(true_out, false_out)):
        t_leaves, f_leaves = jax.tree.leaves(t), jax.tree.leaves(f)
        if all(a.shape == b.shape for a, b in zip(t_leaves, f_leaves)):
            continue
        if len(t_leaves) == 1 and np.prod(t.shape) == 0:
            fixes[True][position] = f
        elif len(f_leaves) == 1 and np.prod(f.shape) == 0:
            fixes[False][position] = t
        else:
            subject, (taken, not_taken) = _branch_output(node, position)
            raise unsupported(node, f"{subject} has shape {t_leaves[0].shape} {taken} and {f_leaves[0].shape} "
                                    f"{not_taken}, so it",
                              "XLA compiles conditionals whose branches give each value one shape. Pad the "
                              "smaller value to the larger shape, or run on backend='numpy'")

    def fixed(fn, replace):
        if not replace:
            return fn

        def run(errors):
            outputs, errors = fn(errors)
            outputs = [jnp.zeros(replace[i].shape, replace[i].dtype) if i in replace else v
                       for i, v in enumerate(outputs)]
            return outputs, errors
        return run
    return fixed(true_fn, fixes[True]), fixed(false_fn, fixes[False])
