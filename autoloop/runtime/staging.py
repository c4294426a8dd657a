"""Graph control flow for converted code: loops and branches whose test is a tensor.

Builds on `control_flow.while_loop.staged_while` and `control_flow.cond.staged_cond`
and adds what Python semantics need on top of them:

- a variable not bound before a loop, or bound in one branch only, is
  carried as a value and a boolean "defined" flag (`MaybeUndefined`); its
  dtype and shape come from the path that assigns it (for a loop, learned by
  tracing the body once into a scratch graph);
- a Python list appended to in the loop travels as a `TensorList`;
- ``for`` over a tensor, a `TensorRange` or a TensorArray becomes a loop
  over an index;
- Python values that both branches leave identical are not graph outputs.

Reference semantics of `staged_for` (a loop over an index)::

    index = start
    while index < stop and extra_test(*state):
        state = loop_body(item(index), *state)
        index += step
"""

from __future__ import annotations

import numbers

import numpy as np

from autoloop import dtypes, nest
from autoloop.control_flow.cond import staged_cond
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.while_loop import staged_while as graph_while
from autoloop.ir import context
from autoloop.ir.graph import Graph
from autoloop.ops import api
from autoloop.ops import runtime_checks  # noqa: F401  (registers CheckDefined, AssertTrue)
from autoloop.ops.dispatch import apply, convert
from autoloop.runtime.lists import TensorList
from autoloop.runtime.locations import describe, raise_from_user
from autoloop.runtime.undefined import MaybeUndefined, TracedUnboundError, Undefined
from autoloop.runtime.values import is_graph_tensor
from autoloop.tensor import Tensor


# -- kinds of values ---------------------------------------------------------------------------

def _is_number(value) -> bool:
    return isinstance(value, (numbers.Number, np.number, np.bool_, np.ndarray)) and not isinstance(value, Tensor)


def _is_tensor_like(value) -> bool:
    """A value graph control flow can carry (possibly nested; a TensorList as its array)."""
    if isinstance(value, (Undefined, MaybeUndefined)) or value is None:
        return False
    if isinstance(value, (Tensor, TensorArray, TensorList)) or _is_number(value):
        return True
    if hasattr(value, "components") and hasattr(value, "from_components"):
        return True  # SparseTensor, IndexedSlices
    if isinstance(value, (list, tuple, dict)):
        leaves = nest.flatten(value)
        return bool(leaves) and all(_is_tensor_like(leaf) for leaf in leaves)
    return False


def _kind_name(value) -> str:
    if isinstance(value, Undefined):
        return "not assigned"
    if value is None:
        return "None"
    if isinstance(value, Tensor):
        return f"a {value.dtype.name} Tensor"
    return f"a Python {type(value).__name__}"


class _LeafSpec:
    """dtype and shape of one tensor (a leaf of a possibly nested value)."""

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape

    def __iter__(self):  # unpacks as (dtype, shape)
        return iter((self.dtype, self.shape))

    def __getitem__(self, index):
        return (self.dtype, self.shape)[index]


def _leaf_spec(value):
    tensor = convert(value) if not isinstance(value, Tensor) else value
    return _LeafSpec(tensor.dtype, tensor.shape)


def _spec(value):
    """The `_LeafSpec` of a tensor-like value, or the same structure of them for a nested one."""
    if isinstance(value, MaybeUndefined):
        value = value.value
    if isinstance(value, (list, tuple, dict)):
        return nest.map_structure(_leaf_spec, value)
    return _leaf_spec(value)


def _zeros(spec):
    if not isinstance(spec, _LeafSpec):
        return nest.map_structure(_zeros, spec)
    dtype, shape = spec
    dims = [0 if d is None else d for d in (shape.as_list() if shape.rank is not None else [])]
    return api.zeros(dims, dtype=dtype)


def to_bool(value):
    """`value` as a boolean scalar tensor."""
    if is_graph_tensor(value) or isinstance(value, Tensor):
        if value.dtype is dtypes.bool_:
            return value
        return api.not_equal(value, api.zeros_like(value))
    return api.constant(bool(value))


def _unsupported(unsupported, what, location):
    enclosing = "enclosed by: "  # compiler/passes/unsupported.py ENCLOSING_TRY
    if unsupported and unsupported.startswith(enclosing):
        raise_from_user(NotImplementedError(
            f"{what} whose condition is a Tensor ({describe(location)}) inside "
            f"{unsupported[len(enclosing):]} cannot be converted to graph control flow: the try "
            f"statement's handlers would never see errors raised when the graph runs; move the "
            f"try statement out of the converted function"), location)
    if unsupported:
        raise_from_user(NotImplementedError(
            f"{unsupported} inside {what} whose condition is a Tensor ({describe(location)}) "
            f"cannot be converted to graph control flow; move it out of the {what.split()[-1]}"),
            location)


# -- loops ---------------------------------------------------------------------------------------

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
    _unsupported(unsupported, "a while loop", location)

    def body(*values):
        return pack(loop_body(*values), names)
    return _loop(loop_cond, body, state, names, appended, options, "while loop", location)


def staged_for(iterable, loop_body, state, names, *, extra_test=None, appended=(), options=None,
               unsupported=None, location=None):
    """A graph loop for ``for item in iterable: state = loop_body(item, *state)``."""
    from autoloop.runtime.control_flow import pack
    _unsupported(unsupported, "a for loop", location)
    start, in_range, item, step = _iteration(iterable)

    def cond(index, *values):
        test = in_range(index)
        if extra_test is not None:
            test = api.logical_and(test, to_bool(extra_test(*values)))
        return test

    def body(index, *values):
        return (index + step,) + pack(loop_body(item(index), *values), names)
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
                                    f"{_kind_name(value)}")
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


def _scratch_run(function, values, as_loop_variables=False):
    """`function(*values)` traced into a throwaway graph, to learn what it returns.

    With `as_loop_variables`, tensors and numbers are passed as placeholders
    (as the real loop body receives them, so the same branches are staged)
    and lists as copies.
    """
    scratch = Graph("scratch", context.current_graph())
    with context.building(scratch):
        if as_loop_variables:
            values = tuple(_placeholder_like(scratch, v) for v in values)
        return function(*values)


def _placeholder_like(graph, value):
    if isinstance(value, list):
        return list(value)
    if isinstance(value, MaybeUndefined):
        return MaybeUndefined(value.name, _placeholder_like(graph, value.value),
                              _placeholder_like(graph, value.defined))
    if isinstance(value, Tensor) or (_is_number(value) and not isinstance(value, np.ndarray)):
        tensor = convert(value) if not isinstance(value, Tensor) else value
        return Tensor(value=graph.add_input(tensor.dtype, tensor.shape, name="scratch"))
    return value


def _loop(cond, body, state, names, appended, options, what, location):
    options = dict(options or {})
    slots = _Slots(tuple(names))
    learned = None
    if _needs_scratch(state, appended, names):
        key = (_code_of(body), tuple(names), tuple(type(v).__name__ for v in state))
        learned = _LEARNED.get(key)
        if learned is None:
            learned = _summaries(_scratch_run(_body_or_raise(body), state, as_loop_variables=True))
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
            if not isinstance(value, MaybeUndefined) and isinstance(after.spec, _LeafSpec):
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
            _raise_when_run(error)
            return values
    return run


class _Learned:
    """What one scratch iteration left in a loop variable: its kind and spec."""

    def __init__(self, value):
        self.kind = _kind_name(value)
        self.is_undefined = isinstance(value, Undefined)
        self.is_none = value is None
        self.tensor_like = _is_tensor_like(value) or isinstance(value, MaybeUndefined)
        self.spec = _spec(value) if self.tensor_like and not isinstance(value, TensorList) else None
        self.grown = None
        if isinstance(value, list):
            self.grown = [_spec(v) for v in value]
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
        spec = _spec(value[0]) if value else (grown[0] if grown else None)
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
        return "maybe", MaybeUndefined(name, _zeros(after.spec), api.constant(False))
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


# -- branches ------------------------------------------------------------------------------------

class _NeedsPlan(Exception):
    """A branch gave a value that is not a tensor: plan each output first."""


def staged_if(test, if_true, if_false, names, inputs, *, location=None, unsupported=None,
              packed=False):
    """A graph cond for ``if test: if_true(*inputs) else: if_false(*inputs)``.

    With `packed`, the branches return state tuples already.
    """
    from autoloop.runtime.control_flow import pack
    _unsupported(unsupported, "an if statement", location)

    def run(branch):
        if branch is None:
            return ()
        try:
            result = branch(*inputs)
        except TracedUnboundError as error:  # this branch raises whenever it runs
            return _Raises(error)
        return tuple(result) if packed else pack(result, names)

    key = (_code_of(if_true), _code_of(if_false), tuple(names))
    try:
        return _cond(test, lambda: run(if_true), lambda: run(if_false), names, _PLANS.get(key), location)
    except _NeedsPlan:
        pass
    true_values = _scratch_run(run, (if_true,))
    false_values = _scratch_run(run, (if_false,))
    if isinstance(true_values, _Raises) and isinstance(false_values, _Raises):
        raise UnboundLocalError(str(true_values.error))
    if isinstance(true_values, _Raises):  # outputs as the other branch gives them
        true_values = false_values
    if isinstance(false_values, _Raises):
        false_values = true_values
    plan = [_plan_output(name, t, f, location) for name, t, f in zip(names, true_values, false_values)]
    # Remembered per statement: a nested statement is then planned once, not
    # once per trace of every enclosing branch (which would be exponential).
    _PLANS[key] = plan
    return _cond(test, lambda: run(if_true), lambda: run(if_false), names, plan, location)


_PLANS: dict = {}


def _code_of(function):
    return getattr(function, "__code__", function)


class _Raises:
    """What a branch gives when tracing it read an unbound variable."""

    def __init__(self, error):
        self.error = error


def _raise_when_run(error):
    """A graph op, in the branch being traced, that raises `error` when the branch runs."""
    apply("AssertTrue", [api.constant(False)], {"message": str(error), "error": "UnboundLocalError"})


def _plan_output(name, true_value, false_value, location):
    """How output `name` leaves the cond, given what each branch gives it."""
    values = (true_value, false_value)
    if all(_is_tensor_like(v) for v in values):
        plain = not isinstance(true_value, (TensorList, TensorArray))
        return ("value", _spec(true_value) if plain else None)
    if all(isinstance(v, Undefined) for v in values):
        return ("fixed", true_value)
    defined = [v for v in values if _is_tensor_like(v) or isinstance(v, MaybeUndefined)]
    others = [v for v in values if not (_is_tensor_like(v) or isinstance(v, (MaybeUndefined, Undefined)))]
    if defined and not others:
        return ("maybe", _spec(defined[0]))
    if not defined and not any(isinstance(v, Undefined) for v in values) and (
            true_value is false_value or _same_python_value(true_value, false_value)):
        return ("fixed", true_value)
    sides = ("if", "else")
    odd = next(i for i, v in enumerate(values) if any(v is o for o in others))
    other_side = 1 - odd
    message = (f"'{name}' is {_kind_name(values[odd])} in the {sides[odd]} branch and "
               f"{_kind_name(values[other_side])} in the {sides[other_side]} branch of the if at "
               f"{describe(location)}; a graph cond needs a tensor of one dtype from both branches")
    raise_from_user(ValueError(message), location)


def _same_python_value(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _cond(test, true_fn, false_fn, names, plan, location):
    lists = set()  # positions holding a TensorList, passed through the cond as its TensorArray

    def as_array(position, value):
        if isinstance(value, TensorList):
            lists.add(position)
            return value.array
        return value

    def branch(function):
        values = function()
        if isinstance(values, _Raises):
            if plan is None or any(kind == "value" and detail is None for kind, detail in plan):
                raise _NeedsPlan()
            _raise_when_run(values.error)
            return tuple(_zeros(detail) if kind == "value" else (_zeros(detail), api.constant(False))
                         for kind, detail in plan if kind != "fixed")
        values = [as_array(position, v) for position, v in enumerate(values)]
        if plan is None:
            if not all(_is_tensor_like(v) for v in values):
                raise _NeedsPlan()
            return tuple(values)
        outputs = []
        for (kind, detail), value in zip(plan, values):
            if kind == "value":
                if not _is_tensor_like(value):
                    raise _NeedsPlan()  # a remembered plan that no longer fits
                outputs.append(value)
            elif kind == "fixed":
                both_undefined = isinstance(value, Undefined) and isinstance(detail, Undefined)
                if not both_undefined and value is not detail and not _same_python_value(value, detail):
                    raise _NeedsPlan()
            elif kind == "maybe":
                if isinstance(value, MaybeUndefined):
                    outputs.append((value.value, value.defined))
                elif isinstance(value, Undefined):
                    outputs.append((_zeros(detail), api.constant(False)))
                elif _is_tensor_like(value):
                    if isinstance(detail, _LeafSpec) and not isinstance(value, Tensor):
                        value = convert(value, detail.dtype)
                    outputs.append((value, api.constant(True)))
                else:
                    raise _NeedsPlan()
        return tuple(outputs)

    labels = names if plan is None else tuple(n for n, (kind, _) in zip(names, plan) if kind != "fixed")
    result = staged_cond(to_bool(test), lambda: branch(true_fn), lambda: branch(false_fn), names=labels)
    if plan is None:
        return tuple(TensorList(v) if p in lists else v for p, v in enumerate(result))
    values, result = [], list(result)
    for name, (kind, detail) in zip(names, plan):
        if kind == "fixed":
            values.append(detail)
        elif kind == "maybe":
            value, defined = result.pop(0)
            values.append(MaybeUndefined(name, value, defined))
        else:
            value = result.pop(0)
            values.append(TensorList(value) if len(values) in lists else value)
    return tuple(values)


def staged_if_exp(test, if_true, if_false, location=None):
    seen = []

    def arm(thunk, other):
        try:
            value = thunk()
        except TracedUnboundError as error:  # this arm raises whenever it is chosen
            spec = _spec(seen[0]) if seen else _spec(_scratch_run(other, ()))
            _raise_when_run(error)
            return _zeros(spec)
        seen.append(value)
        return value
    return staged_cond(to_bool(test), lambda: arm(if_true, if_false), lambda: arm(if_false, if_true),
                       names=None)


def _or_raise(thunk):
    """`thunk()`; if it reads an unbound variable, a graph error when run (and False)."""
    try:
        return thunk()
    except TracedUnboundError as error:
        _raise_when_run(error)
        return api.constant(False)


def staged_and(value, thunks):
    from autoloop.runtime.operators import and_
    if value.dtype is dtypes.bool_:
        return staged_cond(value, lambda: to_bool(_or_raise(lambda: and_(thunks[0](), *thunks[1:]))),
                           lambda: api.constant(False), names=None)
    return _deciding_operand(value, to_bool(value),
                             lambda: _or_raise(lambda: and_(thunks[0](), *thunks[1:])))


def staged_or(value, thunks):
    from autoloop.runtime.operators import or_
    if value.dtype is dtypes.bool_:
        return staged_cond(value, lambda: api.constant(True),
                           lambda: to_bool(_or_raise(lambda: or_(thunks[0](), *thunks[1:]))), names=None)
    return _deciding_operand(value, api.logical_not(to_bool(value)),
                             lambda: _or_raise(lambda: or_(thunks[0](), *thunks[1:])))


def _deciding_operand(value, evaluate_rest, rest):
    """Like Python, the deciding operand of a non-bool tensor ``and``/``or``.

    When `evaluate_rest` holds, the result is ``rest()``, otherwise `value`;
    if the two do not share a dtype both become bools (``to_bool``). The
    ``rest`` branch is traced first, so the other branch knows its dtype.
    """
    same_dtype = []

    def rest_branch():
        result = rest()
        if isinstance(result, numbers.Number) and not isinstance(result, bool):
            result = api.constant(result)
        if (is_graph_tensor(result) or isinstance(result, Tensor)) and result.dtype == value.dtype:
            same_dtype.append(True)
            return result
        return to_bool(result)

    return staged_cond(evaluate_rest, rest_branch,
                       lambda: value if same_dtype else to_bool(value), names=None)


def logical_not(value):
    return api.logical_not(to_bool(value))


# -- statements ----------------------------------------------------------------------------------

def staged_assert(test, message, location):
    text = None if message is None else str(message)
    apply("AssertTrue", [to_bool(test)], {"message": text})


def tracing() -> bool:
    """Whether a graph is being built (ops become nodes, not values)."""
    return context.current_graph() is not None


def staged_print(values, options):
    from autoloop.ops.logging_ops import print_
    print_(*values, **options)


def length(value):
    if isinstance(value, TensorList):
        return value.array.size()
    if isinstance(value, TensorArray):
        return value.size()
    if is_graph_tensor(value):
        return api.shape(value)[0]
    return len(value)


def checked_read(value: MaybeUndefined, location):
    message = (f"local variable '{value.name}' is read at {describe(location)} but no path that ran "
               f"before assigned it")
    return _check_leaves(value, message, "UnboundLocalError")


def _check_leaves(value: MaybeUndefined, message, error):
    def check(leaf):
        if not isinstance(leaf, Tensor):
            return leaf
        return apply("CheckDefined", [value.defined, leaf], {"message": message, "error": error})
    return nest.map_structure(check, value.value)


def checked_return(value: MaybeUndefined, location):
    message = (f"the function reached its end at {describe(location)} without a return statement on "
               f"the path that ran; in a graph every path must return a value")
    return _check_leaves(value, message, "MissingReturnError")
