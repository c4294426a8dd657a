"""Expressions converted code calls: ``and``/``or``/``not``, ``assert``, ``print``,
``len``, ``range`` and ``match`` subjects.

Python values keep Python's exact semantics (short-circuiting, returning the
deciding operand); symbolic tensors become graph ops.
"""

from __future__ import annotations

import ast
import builtins
import operator
import sys

from autoloop.compiler.passes.calls import as_written
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.errors import stopping_conversion
from autoloop.ir import context
from autoloop.ops import api
from autoloop.ops.dispatch import apply
from autoloop.ops.logging_ops import print_ as graph_print
from autoloop.runtime import exceptions, staged_branches, staged_loops
from autoloop.runtime.lists import TensorList
from autoloop.runtime.locations import caller_location, describe, raise_from_user
from autoloop.runtime.specs import to_bool, weak
from autoloop.runtime.values import is_graph_tensor
from autoloop.source_map import expression_at, format_location, location_of, user_frame


def and_(first, *rest):
    """``first and rest[0]() and rest[1]() ...``; lazy, staged for tensors."""
    value = first
    for position, thunk in enumerate(rest):
        if is_graph_tensor(value):
            return staged_branches.staged_and(value, lambda: and_(rest[position](), *rest[position + 1:]))
        if not value:
            return value
        value = thunk()
    return value


def or_(first, *rest):
    """``first or rest[0]() or rest[1]() ...``; lazy, staged for tensors."""
    value = first
    for position, thunk in enumerate(rest):
        if is_graph_tensor(value):
            return staged_branches.staged_or(value, lambda: or_(rest[position](), *rest[position + 1:]))
        if value:
            return value
        value = thunk()
    return value


def bind_(value, function):
    """``function(value)``: evaluates a chained comparison's middle operand once."""
    return function(value)


def not_(value):
    if is_graph_tensor(value):
        return staged_branches.logical_not(value)
    return not value


def assert_(test, message=None):
    """``assert test, message``; a graph assertion for a tensor test.

    A Python-valued test that fails inside a graph branch or loop body
    raises when (and if) the graph runs that path, not while tracing. A
    tensor test inside a ``try`` that catches errors is unsupported: its
    handlers could never see the AssertionError the graph raises.
    """
    if is_graph_tensor(test):
        exceptions.reject_inside_catching_try("an assert on a Tensor", caller_location())
        text = _message(message)
        apply("AssertTrue", [to_bool(test)], {"message": None if text is None else str(text)})
        return
    if not test:
        error = AssertionError() if message is None else AssertionError(_message(message))
        raise exceptions.raised(error)


def _message(message):
    if callable(message) and getattr(message, "__name__", "") == "<lambda>":
        return message()
    return message


def print_(*values, **options):
    """``print(...)``: a graph print op if any value is a symbolic tensor."""
    if context.current_graph() is not None or any(is_graph_tensor(v) for v in values):
        graph_print(*values, **options)  # prints when the graph runs, in program order
        return None
    return builtins.print(*values, **options)


def len_(value):
    """``len(value)``; a scalar tensor for tensors and tensor lists.

    The tensor stands for the Python int ``len`` would give (it is weak:
    ``len(l) + x`` with a float `x` is a float, as in Python).
    """
    if isinstance(value, TensorList):
        return weak(value.array.size())
    if isinstance(value, TensorArray):
        return weak(value.size())
    if is_graph_tensor(value):
        return weak(api.shape(value)[0])
    return len(value)


def range_(*args):
    """``range(...)``, or a `TensorRange` when a bound is a symbolic tensor.

    Bounds must be integers, as for Python's range: a float (Python or
    tensor) raises TypeError.
    """
    if any(is_graph_tensor(a) for a in args):
        for bound in args:
            if is_graph_tensor(bound) and not bound.dtype.is_integer:
                raise TypeError(f"range() needs integer bounds, got a {bound.dtype.name} tensor "
                                f"({bound.name}); cast it with autoloop.cast(..., autoloop.int32)")
        return staged_loops.TensorRange(*(operator.index(a) if not is_graph_tensor(a) else a for a in args))
    unknown = next((position for position, bound in enumerate(args) if bound is None), None)
    if unknown is not None:  # by identity: `None in args` would compare tensors with None
        raise _unknown_bound(unknown, user_frame(sys._getframe(1)))
    return builtins.range(*(operator.index(a) for a in args))


def _unknown_bound(position, frame):
    """The error for ``range(x.shape[0])`` where that dimension is not known while tracing (None)."""
    call = as_written(expression_at(frame))
    where = format_location(location_of(frame))
    if not (isinstance(call, ast.Call) and position < len(call.args)):
        return stopping_conversion(TypeError(f"range() at {where} got None for a bound; it needs integers"))
    written, argument = ast.unparse(call), call.args[position]
    text, tensor = ast.unparse(argument), _shape_of(argument)
    if tensor is None:
        return stopping_conversion(TypeError(f"{written} at {where}: `{text}` is None; range needs integers"))
    call.args[position] = ast.parse(f"autoloop.shape({ast.unparse(tensor)})[{ast.unparse(argument.slice)}]",
                                    mode="eval").body
    return stopping_conversion(TypeError(
        f"{written} at {where}: `{text}` is None: that dimension of `{ast.unparse(tensor)}` is not known "
        f"while tracing (its static shape has None there). Use its size when the graph runs, a tensor: "
        f"{ast.unparse(call)}"))


def _shape_of(node):
    """`x` when `node` is ``x.shape[k]`` or ``x.get_shape()[k]``, else None."""
    if not isinstance(node, ast.Subscript):
        return None
    value = node.value
    if isinstance(value, ast.Call) and not value.args and isinstance(value.func, ast.Attribute) \
            and value.func.attr == "get_shape":
        return value.func.value
    if isinstance(value, ast.Attribute) and value.attr == "shape":
        return value.value
    return None


def match_subject(subject):
    """A ``match`` subject; a symbolic tensor cannot be matched on."""
    if is_graph_tensor(subject):
        location = caller_location()
        raise_from_user(NotImplementedError(
            f"match on a Tensor ({describe(location)}) cannot be converted to graph control flow; "
            f"use if/elif on the tensor instead"), location)
    return subject
