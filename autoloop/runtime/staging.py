"""What graph loops and branches of converted code share: kinds of values, scratch traces, statements.

`staged_loops` and `staged_branches` build on these: a value is *tensor-like*
when graph control flow can carry it; a *scratch* trace runs a loop body or
branch once into a throwaway graph to learn the dtypes and shapes of what it
assigns; errors that Python would raise only if a path runs are deferred to
graph run time (`raise_when_run`). Also the staged forms of `assert`,
`print` and `len`.
"""

from __future__ import annotations

import numbers

import numpy as np

from autoloop import dtypes, nest
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.errors import UnsupportedError
from autoloop.ir import context
from autoloop.ir.graph import Graph
from autoloop.ops import api
from autoloop.ops import runtime_checks  # noqa: F401  (registers CheckDefined, AssertTrue)
from autoloop.ops.dispatch import apply, convert
from autoloop.runtime.lists import TensorList
from autoloop.runtime.locations import describe, raise_from_user
from autoloop.runtime.undefined import MaybeUndefined, Undefined
from autoloop.runtime.values import is_graph_tensor
from autoloop.tensor import Tensor



# -- kinds of values ---------------------------------------------------------------------------

def is_number(value) -> bool:
    return isinstance(value, (numbers.Number, np.number, np.bool_, np.ndarray)) and not isinstance(value, Tensor)


def is_tensor_like(value) -> bool:
    """A value graph control flow can carry (possibly nested; a TensorList as its array)."""
    if isinstance(value, (Undefined, MaybeUndefined)) or value is None:
        return False
    if isinstance(value, (Tensor, TensorArray, TensorList)) or is_number(value):
        return True
    if hasattr(value, "components") and hasattr(value, "from_components"):
        return True  # SparseTensor, IndexedSlices
    if isinstance(value, (list, tuple, dict)):
        leaves = nest.flatten(value)
        return bool(leaves) and all(is_tensor_like(leaf) for leaf in leaves)
    return False


def kind_name(value) -> str:
    if isinstance(value, Undefined):
        return "not assigned"
    if value is None:
        return "None"
    if isinstance(value, Tensor):
        return f"a {value.dtype.name} Tensor"
    return f"a Python {type(value).__name__}"


class LeafSpec:
    """dtype and shape of one tensor (a leaf of a possibly nested value)."""

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape

    def __iter__(self):  # unpacks as (dtype, shape)
        return iter((self.dtype, self.shape))

    def __getitem__(self, index):
        return (self.dtype, self.shape)[index]


def leaf_spec(value):
    tensor = convert(value) if not isinstance(value, Tensor) else value
    return LeafSpec(tensor.dtype, tensor.shape)


def spec_of(value):
    """The `LeafSpec` of a tensor-like value, or the same structure of them for a nested one."""
    if isinstance(value, MaybeUndefined):
        value = value.value
    if isinstance(value, (list, tuple, dict)):
        return nest.map_structure(leaf_spec, value)
    return leaf_spec(value)


def zeros_for(spec):
    if not isinstance(spec, LeafSpec):
        return nest.map_structure(zeros_for, spec)
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


def reject_unsupported(unsupported, what, location):
    enclosing = "enclosed by: "  # compiler/passes/unsupported.py ENCLOSING_TRY
    if unsupported and unsupported.startswith(enclosing):
        raise_from_user(UnsupportedError(
            f"{what} whose condition is a Tensor ({describe(location)}) inside "
            f"{unsupported[len(enclosing):]} cannot be converted to graph control flow: the try "
            f"statement's handlers would never see errors raised when the graph runs; move the "
            f"try statement out of the converted function"), location)
    if unsupported:
        raise_from_user(UnsupportedError(
            f"{unsupported} inside {what} whose condition is a Tensor ({describe(location)}) "
            f"cannot be converted to graph control flow; move it out of the {what.split()[-1]}"),
            location)


# -- scratch traces and deferred errors ---------------------------------------------------------
def scratch_run(function, values, as_loop_variables=False):
    """`function(*values)` traced into a throwaway graph, to learn what it returns.

    With `as_loop_variables`, tensors and numbers are passed as placeholders
    (as the real loop body receives them, so the same branches are staged)
    and lists as copies.
    """
    scratch = Graph("scratch", context.current_graph())
    with context.building(scratch):
        if as_loop_variables:
            values = tuple(placeholder_like(scratch, v) for v in values)
        return function(*values)


def placeholder_like(graph, value):
    if isinstance(value, list):
        return list(value)
    if isinstance(value, MaybeUndefined):
        return MaybeUndefined(value.name, placeholder_like(graph, value.value),
                              placeholder_like(graph, value.defined))
    if isinstance(value, Tensor) or (is_number(value) and not isinstance(value, np.ndarray)):
        tensor = convert(value) if not isinstance(value, Tensor) else value
        return Tensor(value=graph.add_input(tensor.dtype, tensor.shape, name="scratch"))
    return value


def code_of(function):
    return getattr(function, "__code__", function)


class Raises:
    """What a branch gives when tracing it read an unbound variable."""

    def __init__(self, error):
        self.error = error


def raise_when_run(error):
    """A graph op, in the branch being traced, that raises `error` when the branch runs."""
    if getattr(error, "already_staged", False):
        return  # the graph being built raises it already (every path of a cond raises)
    exception = getattr(error, "exception", None)  # a deferred raise or assert: the user's exception
    attrs = {"message": str(error), "error": "UnboundLocalError"} if exception is None else {
        "message": None, "exception": exception}
    apply("AssertTrue", [api.constant(False)], attrs)
    if getattr(error, "location", None) is not None:  # shown at the raise, not at the branch's if
        context.current_graph().nodes[-1].location = error.location


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
