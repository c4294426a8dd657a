"""Graph loops for converted code: `staged_while` and `staged_for`.

A variable first bound inside the loop is carried as a value and a boolean
"defined" flag (`MaybeUndefined`); its dtype and shape are learned by tracing
the body once into a scratch graph. A Python list appended to in the loop
travels as a `TensorList`. ``for`` over a tensor, a `TensorRange` or a
TensorArray becomes a loop over an index.

Reference semantics of `staged_for` (a loop over an index)::

    index = start
    while index < stop and extra_test(*state):
        state = loop_body(item(index), *state)
        index += step
"""

from __future__ import annotations



from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.while_loop import staged_while as graph_while
from autoloop.ops import api
from autoloop.ops.dispatch import convert
from autoloop.runtime.lists import TensorList
from autoloop.runtime.locations import describe, raise_from_user
from autoloop.runtime.undefined import MaybeUndefined, TracedUnboundError, Undefined
from autoloop.runtime.values import is_graph_tensor
from autoloop.tensor import Tensor


from autoloop.runtime.staging import (
    LeafSpec, code_of, is_tensor_like, kind_name, raise_when_run, reject_unsupported,
    scratch_run, spec_of, to_bool, zeros_for)


class TensorRange:
    """``range(start, stop, step)`` with tensor bounds: a for loop over it is staged."""

    def __init__(self, *args):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
        self.start, self.stop, self.step = start, stop, step

    def __repr__(self):
        return f"TensorRange({self.start}, {self.stop}, {self.step})"


def is_staged_iterable(iterable) -> bool:
    return (isinstance(iterable, (TensorRange, TensorArray)) or is_graph_tensor(iterable)
            or (isinstance(iterable, TensorList) and not _is_eager_list(iterable)))


def _is_eager_list(tensor_list) -> bool:
    return not is_graph_tensor(tensor_list.array.flow)


def staged_while(loop_cond, loop_body, state, names, *, test=None, appended=(), options=None,
                 unsupported=None, location=None):
    """A graph loop for ``while loop_cond(*state): state = loop_body(*state)``."""
    from autoloop.runtime.control_flow import pack
    reject_unsupported(unsupported, "a while loop", location)

    def body(*values):
        return pack(loop_body(*values), names)
    body.statement_code = code_of(loop_body)  # what the learned cache is keyed by: this loop
    return _loop(loop_cond, body, state, names, appended, options, "while loop", location)


def staged_for(iterable, loop_body, state, names, *, extra_test=None, appended=(), options=None,
               unsupported=None, location=None):
    """A graph loop for ``for item in iterable: state = loop_body(item, *state)``."""
    from autoloop.runtime.control_flow import pack
    reject_unsupported(unsupported, "a for loop", location)
    start, in_range, item, step = _iteration(iterable)

    def cond(index, *values):
        test = in_range(index)
        if extra_test is not None:
            test = api.logical_and(test, to_bool(extra_test(*values)))
        return test

    def body(index, *values):
        return (index + step,) + pack(loop_body(item(index), *values), names)
    body.statement_code = code_of(loop_body)  # what the learned cache is keyed by: this loop
    final = _loop(cond, body, (start,) + tuple(state), ("for loop index",) + tuple(names),
                  appended, options, "for loop", location)
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
        return start, in_range, (lambda index: index), step
    if isinstance(iterable, TensorList):
        iterable = iterable.array
    if isinstance(iterable, TensorArray):
        size = iterable.size()
        return api.constant(0), (lambda index: index < size), iterable.read, 1
    length = api.shape(iterable)[0]
    return api.constant(0), (lambda index: index < length), (lambda index: iterable[index]), 1


class _Slots:
    """How each state entry travels through the graph loop.

    - ``value``: as it is (a tensor, number, TensorArray or nested structure);
    - ``maybe``: a (value, defined) pair, for a variable not bound on every path;
    - ``list``: a TensorList, as its TensorArray;
    - ``fixed``: not a loop variable (unbound throughout, or a Python object
      the loop leaves alone).
    """

    def __init__(self, names):
        self.names = names
        self.kinds = []
        self.fixed = {}

    def encode(self, values):
        flat = []
        for position, (kind, value) in enumerate(zip(self.kinds, values)):
            name = self.names[position]
            if kind == "value":
                flat.append(value.array if isinstance(value, TensorList) else value)
            elif kind == "maybe":
                flat.append(self._pair(value, position))
            elif kind == "list":
                if not isinstance(value, TensorList):
                    raise TypeError(f"'{name}' was a list appended to in the loop but became "
                                    f"{kind_name(value)}")
                flat.append(value.array)
        return tuple(flat)

    def _pair(self, value, position):
        if isinstance(value, MaybeUndefined):
            return (value.value, value.defined)
        if isinstance(value, Undefined):
            previous = self.current[position]
            return (previous.value, previous.defined)
        dtype = self.dtypes[position]
        if dtype is not None and not isinstance(value, Tensor):
            value = convert(value, dtype)
        return (value, api.constant(True))

    def decode(self, flat):
        values, flat = [], list(flat)
        for position, kind in enumerate(self.kinds):
            name = self.names[position]
            if kind == "fixed":
                values.append(self.fixed[position])
                continue
            item = flat.pop(0)
            if kind == "maybe":
                values.append(MaybeUndefined(name, item[0], item[1]))
            elif kind == "list":
                values.append(TensorList(item))
            else:
                values.append(item)
        return tuple(values)

    def labels(self):
        return tuple(n for n, kind in zip(self.names, self.kinds) if kind != "fixed")


def _needs_scratch(state, appended, names):
    for name, value in zip(names, state):
        if isinstance(value, Undefined) or value is None:
            return True
        if name in appended and isinstance(value, list) and not value:
            return True
    return False






def _loop(cond, body, state, names, appended, options, what, location):
    options = dict(options or {})
    slots = _Slots(tuple(names))
    learned = None
    if _needs_scratch(state, appended, names):
        key = (body.statement_code, tuple(names), tuple(type(v).__name__ for v in state))
        learned = _LEARNED.get(key)
        if learned is None:
            learned = _summaries(scratch_run(_body_or_raise(body), state, as_loop_variables=True))
            _LEARNED[key] = learned  # once per loop, not once per trace of enclosing code
    start_values, learned_shapes = [], {}
    slots.dtypes, slots.current = {}, {}
    for position, (name, value) in enumerate(zip(names, state)):
        after = learned[position] if learned is not None else None
        kind, start = _slot_for(name, value, after, name in appended, what, location)
        slots.kinds.append(kind)
        if kind == "fixed":
            slots.fixed[position] = value
        if kind == "maybe":
            slots.dtypes[position] = getattr(start.value, "dtype", None)
            if not isinstance(value, MaybeUndefined) and isinstance(after.spec, LeafSpec):
                learned_shapes[position] = after.spec.shape
        start_values.append(start)
    flat_initial = slots.encode(start_values)
    counter = not flat_initial  # a loop with no state still needs one loop variable
    if counter:
        flat_initial = (api.constant(0),)
    invariants = _invariants(options.pop("shape_invariants", None), state, slots, learned_shapes,
                             len(flat_initial))

    def state_of(flat):
        return slots.decode(flat[:-1] if counter else flat)

    def graph_cond(*flat):
        return to_bool(cond(*state_of(flat)))

    def graph_body(*flat):
        values = state_of(flat)
        slots.current = {p: v for p, v in enumerate(values) if isinstance(v, MaybeUndefined)}
        result = slots.encode(_body_or_raise(body)(*values))
        return result + (flat[-1] + 1,) if counter else result

    labels = slots.labels() + (("loop counter",) if counter else ())
    result = graph_while(graph_cond, graph_body, tuple(flat_initial), names=labels,
                         shape_invariants=invariants, **_loop_options(options))
    return state_of(tuple(result))


_LEARNED: dict = {}


def _body_or_raise(body):
    """`body`; if every run of it reads an unbound variable, a graph error when it runs.

    The loop may run zero times, so the error must not be raised while tracing.
    """
    def run(*values):
        try:
            return body(*values)
        except TracedUnboundError as error:
            raise_when_run(error)
            return values
    return run


class _Learned:
    """What one scratch iteration left in a loop variable: its kind and spec."""

    def __init__(self, value):
        self.kind = kind_name(value)
        self.is_undefined = isinstance(value, Undefined)
        self.is_none = value is None
        self.tensor_like = is_tensor_like(value) or isinstance(value, MaybeUndefined)
        self.spec = spec_of(value) if self.tensor_like and not isinstance(value, TensorList) else None
        self.grown = None
        if isinstance(value, list):
            self.grown = [spec_of(v) for v in value]
        if isinstance(value, TensorList):  # appended to in an inner graph loop
            self.grown = [(value.array.dtype, value.array.element_shape)]


def _summaries(values):
    return tuple(_Learned(v) for v in values)


def _slot_for(name, value, after, appended, what, location):
    """``(kind, start value)`` of one loop state entry."""
    if isinstance(value, MaybeUndefined):
        return "maybe", value
    if isinstance(value, TensorList):
        return "list", value
    if appended and isinstance(value, list):
        grown = after.grown[-1:] if after is not None and after.grown else []
        spec = spec_of(value[0]) if value else (grown[0] if grown else None)
        if spec is None:
            return "fixed", value
        return "list", TensorList.from_values(value, *spec)
    if isinstance(value, Undefined) or value is None:
        if after.is_undefined or (after.is_none and value is None):
            return "fixed", value
        if after.is_none or not after.tensor_like or after.spec is None:
            raise_from_user(ValueError(
                f"'{name}' is {after.kind} after an iteration of the {what} at "
                f"{describe(location)} and {'not assigned' if value is not None else 'None'} before "
                f"it, so the graph loop cannot learn its dtype; assign '{name}' a tensor before the "
                f"loop"), location)
        if value is None:
            raise_from_user(ValueError(
                f"'{name}' is None before the {what} at {describe(location)} and "
                f"{after.kind} after an iteration; a graph loop variable keeps one dtype, so "
                f"initialize '{name}' with a tensor of that dtype before the loop"), location)
        return "maybe", MaybeUndefined(name, zeros_for(after.spec), api.constant(False))
    return "value", value


def _invariants(shape_invariants, state, slots, learned_shapes, count):
    """Shape invariants per loop variable: the user's, and learned shapes of first assignments."""
    by_position = dict(learned_shapes)
    for variable, shape in shape_invariants or ():
        for position, value in enumerate(state):
            if value is variable:
                by_position[position] = shape
                break
        else:
            raise ValueError("set_loop_options(shape_invariants=...) names a value that is not a "
                             "variable of this loop")
    if not by_position:
        return None
    result = []
    for position, kind in enumerate(slots.kinds):
        if kind == "fixed":
            continue
        shape = by_position.get(position)
        result.append((shape, None) if kind == "maybe" else shape)
    result.extend([None] * (count - len(result)))
    return tuple(result)


def _loop_options(options):
    known = {}
    for key in ("maximum_iterations", "parallel_iterations", "swap_memory"):
        if options.get(key) is not None:
            known[key] = options[key]
    unknown = set(options) - {"maximum_iterations", "parallel_iterations", "swap_memory"}
    if unknown:
        raise TypeError(f"set_loop_options got unknown options: {', '.join(sorted(unknown))}")
    return known
