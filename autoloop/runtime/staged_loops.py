"""Graph loops for converted code: `staged_while` and `staged_for`.

The loop's state is planned as a `Layout` (`layout.py`): tensors travel as
they are, a variable first bound inside the loop as a value and a "defined"
flag, a Python list the loop appends to as a TensorArray, and Python values
the loop leaves alone not at all. The layout is found by tracing: the first
attempt starts from the values before the loop; when the body leaves a
variable in a form its slot cannot carry (a Python ``0`` that became a
float, a variable first assigned in the loop, a list it appended to), the
attempt is abandoned and the loop traced again with a wider layout. What
fitted is remembered on the trace (`trace.py`), so a loop met again in the
same trace (inside an enclosing loop traced twice) is traced once.

Reference semantics of `staged_for` (a loop over an index)::

    index = start
    while index < stop and extra_test(*state):
        state = loop_body(item(index), *state)
        index += step
"""

from __future__ import annotations

from autoloop import nest
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.while_loop import staged_while as graph_while
from autoloop.errors import ShapeInvariantError, stopping_conversion
from autoloop.loop_options import LOOP_OPTION_NAMES
from autoloop.ops import api
from autoloop.ops.dispatch import constant_value, convert
from autoloop.runtime import trace as traces
from autoloop.runtime.guards import ContainerGuard
from autoloop.runtime.layout import FIXED, LIST, MAYBE, Copies, DoesNotFit, Layout, Slot
from autoloop.runtime.layout_planning import initial_slot, plan
from autoloop.runtime.layout_rejections import no_fit
from autoloop.runtime.statement import Statement
from autoloop.runtime.lists import TensorList
from autoloop.runtime.locations import caller_names
from autoloop.runtime.specs import LeafSpec, to_bool, weak
from autoloop.runtime.staging import carried_roots, pack, reject_unsupported
from autoloop.runtime.undefined import HeldBack, MaybeUndefined, TracedUnboundError, raise_when_run
from autoloop.runtime.values import is_graph_tensor
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor

_MAX_ATTEMPTS = 6  # each attempt widens at least one slot; a few suffice in practice


class TensorRange:
    """``range(start, stop, step)`` with tensor bounds: a for loop over it is staged."""

    def __init__(self, *args):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
        self.start, self.stop, self.step = start, stop, step

    def __iter__(self):
        """Python iteration (``list(range(n))``, ``zip``, a comprehension): the elements of
        ``autoloop.range(start, stop, step)``, which needs a length known while tracing."""
        elements = api.range(self.start, self.stop, self.step)
        if elements.shape[0] is None:
            raise stopping_conversion(TypeError(
                f"Python iteration over {self!r} (list(), tuple(), zip(), a comprehension) needs its length "
                f"while the function is traced, but its bounds are graph tensors whose values are known only "
                f"when the graph runs. Use a for statement (`for i in range(n):` becomes a graph loop), or "
                f"autoloop.range(n) as a tensor"))
        return iter(elements)

    def __repr__(self):
        return f"TensorRange({self.start}, {self.stop}, {self.step})"


def is_staged_iterable(iterable) -> bool:
    return (isinstance(iterable, (TensorRange, TensorArray)) or is_graph_tensor(iterable)
            or (isinstance(iterable, TensorList) and is_graph_tensor(iterable.array.flow)))


def staged_while(loop_cond, loop_body, state, names, *, appended=(), options=None, unsupported=None,
                 location=None):
    """A graph loop for ``while loop_cond(*state): state = loop_body(*state)``."""
    statement = Statement("while loop", location, generated=caller_names())
    reject_unsupported(unsupported, statement)

    def body(*values):
        return pack(loop_body(*values), names)
    key = traces.statement_key("while", (loop_cond, loop_body), state, names, numbers_by_dtype=True)
    return _loop(loop_cond, body, tuple(state), tuple(names), key, (loop_cond, loop_body), appended,
                 options, statement)


def staged_for(iterable, loop_body, state, names, *, extra_test=None, appended=(), options=None,
               unsupported=None, location=None):
    """A graph loop for ``for item in iterable: state = loop_body(item, *state)``."""
    statement = Statement("for loop", location, generated=caller_names())
    reject_unsupported(unsupported, statement)
    start, in_range, item, step = _iteration(iterable)

    def cond(index, *values):
        test = in_range(index)
        if extra_test is not None:
            test = api.logical_and(test, to_bool(extra_test(*values)))
        return test

    def body(index, *values):
        results = pack(loop_body(item(index), *values), names)
        return (index + step,) + results  # the step last: generated code then binds it to the index at once
    functions = (loop_body, extra_test)
    key = traces.statement_key("for", functions, (_item_kind(iterable),) + tuple(state), names,
                               numbers_by_dtype=True)
    final = _loop(cond, body, (start,) + tuple(state), ("for loop index",) + tuple(names), key, functions,
                  appended, options, statement)
    return final[1:]


def _iteration(iterable):
    """``(start, in_range(index), item(index), step)`` for a staged for loop."""
    if isinstance(iterable, TensorRange):
        start, stop, step = (convert(v) if not isinstance(v, Tensor) else v
                             for v in (iterable.start, iterable.stop, iterable.step))
        dtype = stop.dtype
        start, step = api.cast(start, dtype), api.cast(step, dtype)
        sign = iterable.step if isinstance(iterable.step, int) else None
        if sign is not None:
            def in_range(index):
                return index < stop if sign > 0 else index > stop
        else:
            def in_range(index):
                return api.logical_or(api.logical_and(step > 0, index < stop),
                                      api.logical_and(step < 0, index > stop))
        return start, in_range, weak, step  # range() gives Python ints: the index is weak
    if isinstance(iterable, TensorList):
        iterable = iterable.array
    if isinstance(iterable, TensorArray):
        size = iterable.size()
        return api.constant(0), (lambda index: index < size), iterable.read, 1
    length = api.shape(iterable)[0]
    return api.constant(0), (lambda index: index < length), _element_reader(iterable), 1


def _element_reader(tensor):
    """``item(index)``: element `index` of `tensor`, computed without reading it for an ``autoloop.range``.

    Range's element ``i`` is ``i * delta + start`` in its dtype (its kernel
    computes exactly that), so a loop over ``autoloop.range(n)`` uses its
    index itself instead of reading a range array on every step (0.3 µs of
    a 1.9 µs RNN step). The range's length still comes from the tensor, so
    a range its op rejects still fails where it did.
    """
    node = tensor._value.node if is_graph_tensor(tensor) else None
    if node is None or node.op != "Range":
        return lambda index: tensor[index]
    start, _, delta = (Tensor(value=value) for value in node.inputs)

    def element(index):
        if tensor.dtype is not index.dtype:
            index = api.cast(index, tensor.dtype)
        if constant_value(delta) != 1:
            index = index * delta
        if tensor.dtype.is_integer and constant_value(start) == 0:
            return index  # (a float 0.0 still turns -0.0 into 0.0)
        return index + start
    return element


def _item_kind(iterable):
    """What the loop's items are, for the statement key: their dtype and shape."""
    if isinstance(iterable, TensorRange):
        return ("range",) + tuple(traces.fingerprint(v, numbers_by_dtype=True)
                                  for v in (iterable.start, iterable.stop, iterable.step))
    if isinstance(iterable, TensorList):
        iterable = iterable.array
    if isinstance(iterable, TensorArray):
        return ("array", iterable.dtype, iterable.element_shape)
    return ("tensor", iterable.dtype, iterable.shape[1:] if iterable.shape.rank else None)


class _Misfit(Exception):
    """An iteration left the state in a form the layout cannot carry."""

    def __init__(self, values, reason: DoesNotFit):
        super().__init__()
        self.values, self.reason = values, reason


def _loop(cond, body, state, names, key, functions, appended, options, statement):
    """Stage the loop, widening its layout until one iteration's state fits (see the module docstring)."""
    guard = ContainerGuard([f for f in functions if f is not None], carried_roots(names))
    try:
        return _staged(cond, body, state, names, key, appended, options, statement, guard)
    except BaseException:
        guard.restore_cells()  # no shared variable keeps a value of a graph that was not built
        raise


def _staged(cond, body, state, names, key, appended, options, statement, guard):
    trace = traces.current()
    options = dict(options or {})
    user_invariants = options.pop("shape_invariants", None)
    loop_options = _loop_options(options)
    layout = trace.layouts.get(key) or Layout(
        initial_slot(name, value, name in appended) for name, value in zip(names, state))
    outcomes = [[("before the loop", value)] for value in state]
    copies = Copies()
    first_error = None
    relaxed = False  # whether variables first assigned in the loop may change shape across iterations
    for _ in range(_MAX_ATTEMPTS):
        try:
            result = _build(cond, body, state, layout, user_invariants, loop_options, copies, relaxed, statement)
        except _Misfit as misfit:
            for position, value in enumerate(misfit.values):
                outcomes[position].append(("after an iteration", value))
            wider = Layout(plan(name, entry, outcome, statement, copies)
                           for name, entry, outcome in zip(names, state, outcomes))
            if wider.same_as(layout):
                no_fit(statement, layout, misfit.reason)
            layout = wider
            continue
        except ShapeInvariantError:
            # A variable first assigned in the loop has no shape before it, so nothing the user
            # could declare: let its shape vary (once); any other variable's error is the user's.
            if relaxed or not any(slot.kind == MAYBE for slot in layout.slots):
                raise
            relaxed = True
            continue
        except DoesNotFit:  # a remembered layout does not fit these values: start over
            layout = Layout(initial_slot(name, value, name in appended) for name, value in zip(names, state))
            continue
        except Exception as error:
            tentative = [i for i, slot in enumerate(layout.slots) if slot.tentative]
            if first_error is not None or not tentative:
                raise (first_error or error).with_traceback((first_error or error).__traceback__)
            # A Python number traced as a tensor of its default dtype broke the body (``s = 0``
            # then ``s += x`` with a float x): trace once with the Python values to learn dtypes.
            first_error = error
            layout = Layout(_as_python_value(slot, value) if slot.tentative else slot
                            for slot, value in zip(layout.slots, state))
            continue
        finally:  # every attempt: a container changed while tracing is an error, not an effect
            guard.check(statement)
        trace.layouts[key] = layout
        return result
    raise AssertionError(f"internal error: {statement} needed more than {_MAX_ATTEMPTS} layouts")


def _as_python_value(slot, value):
    return Slot(FIXED, slot.name, fixed=value)


def _build(cond, body, state, layout, user_invariants, loop_options, copies, relaxed, statement):
    flat_initial = layout.encode(state)
    counter = not flat_initial  # a loop with no state still needs one loop variable
    if counter:
        flat_initial = (api.constant(0),)

    def state_of(flat):
        return layout.decode(flat[:-1] if counter else flat, copies)

    def graph_cond(*flat):
        return to_bool(cond(*state_of(flat)))

    def graph_body(*flat):
        values = state_of(flat)
        results = _body_or_raise(body, values)
        try:
            encoded = layout.encode(results, incoming=values)
        except DoesNotFit as reason:
            raise _Misfit(results, reason) from None
        return encoded + (flat[-1] + 1,) if counter else encoded

    invariants = _invariants(user_invariants, state, layout, flat_initial, counter, relaxed)
    result = graph_while(graph_cond, graph_body, tuple(flat_initial), names=layout.labels()
                         + (("loop counter",) if counter else ()), shape_invariants=invariants,
                         described=statement.described(layout), **loop_options)
    return layout.decode(tuple(result)[:-1] if counter else tuple(result))


def _body_or_raise(body, values):
    """`body(*values)`; if every run of it reads an unbound variable (or raises a Python error,
    `HeldBack`), a graph error when it runs.

    The loop may run zero times, so the error must not be raised while tracing.
    """
    try:
        return body(*values)
    except Exception as error:  # noqa: BLE001 - an unbound read, or held back if Python code raised it
        held = error if isinstance(error, TracedUnboundError) else HeldBack.of(error)
        if held is None:
            raise
        raise_when_run(held)
        return values


def _invariants(user_invariants, state, layout, flat_initial, counter, relaxed):
    """Shape invariants in the structure of the carried values: the user's, and learned shapes.

    A variable first assigned in the loop starts as zeros of the shape one
    iteration gave it; its invariant is that (possibly partial) shape, or
    when `relaxed` (for every variable not bound on all paths) that rank with
    every dimension unknown.
    """
    def learned(spec):
        if not isinstance(spec, LeafSpec):
            return None
        if relaxed:
            return TensorShape(None if spec.shape.rank is None else [None] * spec.shape.rank)
        return spec.shape

    by_position = {}
    for position, (slot, value) in enumerate(zip(layout.slots, state)):
        if slot.kind == MAYBE and (relaxed or not isinstance(value, MaybeUndefined)):
            by_position[position] = nest.map_structure(learned, slot.spec)
    for variable, shape in user_invariants or ():
        for position, value in enumerate(state):
            if value is variable:
                by_position[position] = shape
                break
        else:
            raise ValueError("set_loop_options(shape_invariants=...) names a value that is not a "
                             "variable of this loop")
    if not by_position:
        return None
    carried = iter(flat_initial)
    result = []
    for position, slot in enumerate(layout.slots):
        if slot.kind == FIXED:
            continue
        encoded = next(carried)
        value = encoded[0] if slot.kind == MAYBE else encoded
        shape = by_position.get(position)
        if shape is None or slot.kind == LIST or nest.is_nested(value) != nest.is_nested(shape):
            shape = nest.map_structure(lambda _: None, value)
        result.append((shape, None) if slot.kind == MAYBE else shape)
    if counter:
        result.append(None)
    return tuple(result)


def _loop_options(options):
    known = {}
    for key in LOOP_OPTION_NAMES:
        if options.get(key) is not None:
            known[key] = options[key]
    unknown = set(options) - set(LOOP_OPTION_NAMES)
    if unknown:
        raise TypeError(f"set_loop_options got unknown options: {', '.join(sorted(unknown))}")
    return known

