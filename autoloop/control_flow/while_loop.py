"""`while_loop`: repeat `body` while `cond` holds, eagerly or as one graph node.

Reference semantics (what every mode computes)::

    def while_loop(cond, body, loop_vars, maximum_iterations=None, capacity=None):
        iterations = 0
        while (maximum_iterations is None or iterations < maximum_iterations) and cond(*loop_vars):
            if capacity is not None and iterations == capacity:
                raise LoopCapacityError(...)   # never a shorter loop
            loop_vars = body(*loop_vars)
            iterations += 1
        return loop_vars

Outside a trace the loop runs at once, as a Python loop over eager tensors.
Inside one, `cond` and `body` are each called exactly once, to trace them
into sub-graphs of a single ``While`` node whose inputs are the initial loop
values and every outer value the sub-graphs read (captures).

Either way the shape invariants of TensorFlow's `tf.while_loop` are enforced: each
loop variable's shape after an iteration must be at least as specific as
its invariant (by default its initial shape), its dtype and nested
structure must not change.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from autoloop import dtypes, nest
from autoloop.control_flow.loop_vars import (
    LoopVars, as_code, check_entry_shapes, check_iteration, component_invariants)
from autoloop.errors import LoopCapacityError
from autoloop.ir import context, control_flow
from autoloop.ir.graph import Graph
from autoloop.ops import recording
from autoloop.ops.dispatch import apply, convert, graph_value
from autoloop.ops.location import format_location, user_location
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor

_API_HINT = ("pass a less specific shape for it in shape_invariants (for {label}: {shape}), "
             "or use Tensor.set_shape in the body.")
_CONVERTED_HINT = ("declare it with autoloop.set_loop_options(shape_invariants=[({variable}, {shape})]) "
                   "as the first statement of the loop body.")


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: str | None = None, checkpoint: Any = None,
               capacity: int | None = None) -> Any:
    """Repeat `body` while `cond` is true; see the module docstring.

    `loop_vars` is a (possibly nested) tuple, list, namedtuple or dict of
    tensors, TensorArrays, SparseTensors, IndexedSlices, numbers or numpy
    arrays; the result has the same structure. With a single loop variable,
    `body` may return the bare value.

    Raises TypeError if `cond` or `body` is not callable, ValueError if
    `loop_vars` is empty or `parallel_iterations` is not a positive int.

    `back_prop=False` makes a gradient that must pass through the loop an
    error. `checkpoint` (autoloop's own) bounds the memory a gradient
    through the loop takes: True (or ``"sqrt"``) keeps the loop state at
    iterations 0, 1, 4, 9, ... and recomputes the others (memory ~ √T for T
    iterations), an int n keeps it every n iterations; see
    `autoloop.autodiff.checkpoint`.

    `capacity` (autoloop's own) is the most iterations the loop may run: the
    bound that ``backend="jax"`` needs for what the loop appends to or saves
    for a gradient (XLA preallocates it), where no bound can be read off the
    loop. Running more iterations raises `LoopCapacityError` naming the loop
    and the capacity, on every backend; unlike ``maximum_iterations``, it
    never stops the loop early.

        >>> while_loop(lambda i: i < 10, lambda i: i + 1, [constant(0)])[0].numpy()
        np.int32(10)
    """
    return staged_while(cond, body, loop_vars, names=None, shape_invariants=shape_invariants,
                        parallel_iterations=parallel_iterations, back_prop=back_prop,
                        swap_memory=swap_memory, maximum_iterations=maximum_iterations, name=name,
                        checkpoint=checkpoint, capacity=capacity)


def staged_while(cond, body, loop_vars, *, names, shape_invariants=None, parallel_iterations=10,
                 back_prop=True, swap_memory=False, maximum_iterations=None, name=None, checkpoint=None,
                 capacity=None, described=None):
    """`while_loop` for converted code: `names` are the user's variable names.

    `loop_vars` is then a tuple with one entry per name, and `cond`/`body`
    take the entries as positional arguments, exactly as for `while_loop`.
    `described` (`autoloop.runtime.layout.Statement.described`), kept as the
    node's ``described``, says how a backend's messages name the loop's variables.
    """
    _validate(cond, body, loop_vars, parallel_iterations)
    before = LoopVars(loop_vars, names)
    invariants, given = component_invariants(before, shape_invariants)
    hint = _CONVERTED_HINT if names is not None else _API_HINT
    check_entry_shapes(before, invariants, "Give a shape invariant that the initial value satisfies.")
    if maximum_iterations is not None:
        maximum_iterations = convert(maximum_iterations, dtypes.int32 if isinstance(maximum_iterations, int) else None)
        if maximum_iterations.dtype not in (dtypes.int32, dtypes.int64) or maximum_iterations.shape.rank not in (0, None):
            raise TypeError(f"maximum_iterations must be a scalar integer, got {maximum_iterations!r}")
    graph = context.current_graph()
    run = _run_eagerly if graph is None else _build_graph
    return run(cond, body, before, invariants, hint, names, maximum_iterations,
               dict(parallel_iterations=parallel_iterations, back_prop=back_prop,
                    swap_memory=swap_memory, name=name or "while", checkpoint=checkpoint_option(checkpoint),
                    capacity=capacity_option(capacity), given=given, described=described))


def checkpoint_option(value):
    """`while_loop`'s ``checkpoint`` argument as a node attribute: None (off), ``"sqrt"`` or a stride."""
    if value is None or value is False:
        return None
    if value is True or value == "sqrt":
        return "sqrt"
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise ValueError(f"checkpoint must be True or 'sqrt' (checkpoints at iterations 0, 1, 4, 9, ...), a "
                     f"positive int n (a checkpoint every n iterations), or False/None; got {value!r}")


def capacity_option(value):
    """`while_loop`'s ``capacity`` argument, checked: None or a positive int."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return value
    raise ValueError(f"capacity must be a positive int (the most iterations the loop may run, the size of "
                     f"what backend='jax' preallocates for what it appends or saves), or None; got {value!r}")


def capacity_error(capacity: int, location) -> LoopCapacityError:
    """The error of a loop (at the user's `location`) that would run iteration ``capacity + 1``."""
    return LoopCapacityError(
        f"the loop at {format_location(location)} would run more than its capacity of {capacity} iterations "
        f"(capacity={capacity}, the size of what it appends or saves for a gradient on backend='jax'); the "
        f"loop is never cut short. Give it a larger capacity (while_loop(..., capacity=N), or "
        f"autoloop.set_loop_options(capacity=N) as the first statement of its body)")


def _validate(cond, body, loop_vars, parallel_iterations):
    if not callable(cond):
        raise TypeError(f"cond must be callable, got {type(cond).__name__} {cond!r}")
    if not callable(body):
        raise TypeError(f"body must be callable, got {type(body).__name__} {body!r}")
    if (isinstance(loop_vars, list | tuple | dict) and not nest.flatten(loop_vars)) or loop_vars is None:
        raise ValueError("No loop variables provided: loop_vars is empty; pass at least one tensor")
    if isinstance(parallel_iterations, bool) or not isinstance(parallel_iterations, int) or parallel_iterations <= 0:
        raise ValueError(f"parallel_iterations must be a positive integer, got {parallel_iterations!r}")


def _call_body(body, before: LoopVars, args):
    """The body's result, with a bare value accepted for a single loop variable."""
    result = body(*args)
    structure = before.structure
    single = isinstance(structure, list | tuple) and len(structure) == 1
    if single and not (isinstance(result, list | tuple) and len(result) == 1):
        result = type(structure)(result) if nest.is_namedtuple(structure) else type(structure)([result])
    return result


def _arguments(structure):
    """How loop values are passed to cond and body: one argument per entry, as in TensorFlow
    (a namedtuple's fields too: ``cond(step, value)`` for ``State(step, value)``)."""
    if isinstance(structure, dict) or not isinstance(structure, list | tuple):
        return (structure,)
    return tuple(structure)


def _test_value(result, where: str) -> Tensor:
    test = convert(result) if not isinstance(result, Tensor) else result
    if test.dtype is not dtypes.bool_ or test.shape.rank not in (0, None):
        hint = (f"; to stop each entry on its own, use autoloop.scan with cond_dims={test.shape.as_list()}"
                if test.shape.rank else "")
        raise TypeError(f"{where} must return a boolean scalar, got {test.dtype.name} tensor of shape "
                        f"{test.shape}{hint}")
    return test


def _run_eagerly(cond, body, before, invariants, hint, names, maximum_iterations, options):
    limit = None if maximum_iterations is None else int(maximum_iterations.numpy())

    def test(current):
        return bool(_test_value(cond(*_arguments(current.structure)), "cond"))

    capacity, location, iterations = options["capacity"], user_location(), [0]

    def step(current):
        if capacity is not None:
            if iterations[0] == capacity:
                raise capacity_error(capacity, location)
            iterations[0] += 1
        result = _call_body(body, current, _arguments(current.structure))
        after = check_iteration(before, result, invariants, hint, names, options["given"])
        # The body's own leaves (not rebuilt components) keep what it learned,
        # such as a TensorArray's element shape, as a traced loop's results do.
        return LoopVars(nest.pack_sequence_as(before.structure, after.leaves), names)

    if not (recording.anywhere() and recording.active()):
        return recording.plain_loop(test, step, before, limit).structure
    # A GradientTape is recording: it may run the loop its own way (back_prop, checkpoint).
    loop = recording.EagerLoop(options["name"], user_location(), options["back_prop"], options["checkpoint"],
                               lambda current: current.components())
    return recording.run_loop(loop, test, step, before, limit).structure


def _build_graph(cond, body, before, invariants, hint, names, maximum_iterations, options):
    outer = context.current_graph()
    initial = [graph_value(outer, c) for c in before.components()]
    cond_graph, body_graph = Graph(f"{options['name']}_cond", outer), Graph(f"{options['name']}_body", outer)

    # A capacity is checked at each iteration's start against a counter, one more loop variable (the last).
    capacity, location = options["capacity"], user_location()
    inside = _parameters(cond_graph, before, initial, invariants)
    if capacity is not None:
        cond_graph.add_input(dtypes.int32, TensorShape([]), name="iterations")
    with context.building(cond_graph):
        test = _test_value(cond(*_arguments(inside.structure)), "cond")
        cond_graph.outputs = [graph_value(cond_graph, test)]

    inside = _parameters(body_graph, before, initial, invariants)
    if capacity is not None:
        iterations = Tensor(value=body_graph.add_input(dtypes.int32, TensorShape([]), name="iterations"))
    with context.building(body_graph):
        if capacity is not None:
            apply("AssertTrue", [iterations < capacity],
                  {"message": None, "exception": capacity_error(capacity, location)})
        result = _call_body(body, inside, _arguments(inside.structure))
        after = check_iteration(before, result, invariants, hint, names, options["given"])
        body_graph.outputs = [graph_value(body_graph, c) for c in after.components()]
        if capacity is not None:
            body_graph.outputs.append(graph_value(body_graph, iterations + 1))
    labels = tuple(as_code(l) for l in before.component_labels())
    specs = [(v.dtype, invariant) for v, invariant in zip(initial, invariants)]
    loop_outputs = len(initial)
    if capacity is not None:
        initial = initial + [graph_value(outer, convert(np.int32(0)))]
        labels, specs = labels + ("iterations",), specs + [(dtypes.int32, TensorShape([]))]

    limit = [] if maximum_iterations is None else [graph_value(outer, maximum_iterations)]
    inputs, sizes = control_flow.join("While", loop_vars=initial, cond_captures=cond_graph.captures,
                                      body_captures=body_graph.captures, maximum_iterations=limit)
    attrs = dict(cond=cond_graph, body=body_graph, **sizes,
                 parallel_iterations=options["parallel_iterations"], back_prop=options["back_prop"],
                 swap_memory=options["swap_memory"], names=labels, checkpoint=options["checkpoint"])
    if capacity is not None:
        attrs["capacity"] = capacity  # a bound on the iterations (`autoloop.ir.trips`), checked in the body
    if options.get("described") is not None:
        attrs["described"] = options["described"]
    node = outer.add_node("While", inputs, attrs, specs, location=location, name=options["name"])
    outputs = [Tensor(value=v) for v in node.outputs[:loop_outputs]]
    return _carry_static_info(before.pack(outputs), after)


def _parameters(graph: Graph, before: LoopVars, initial, invariants) -> LoopVars:
    """Placeholders for the loop values inside a sub-graph, at their invariant shapes."""
    params = [Tensor(value=graph.add_input(v.dtype, invariant, name="loop_var"))
              for v, invariant in zip(initial, invariants)]
    return LoopVars(before.pack(params), None)


def _carry_static_info(structure, after: LoopVars):
    """Static facts the body learned (a TensorArray's element shape) flow to the results."""
    leaves = nest.flatten(structure)
    for leaf, learned in zip(leaves, after.leaves):
        if hasattr(leaf, "learn_from"):
            leaf.learn_from(learned)
    return structure
