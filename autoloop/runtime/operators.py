"""Expressions converted code calls: ``and``/``or``/``not``, ``assert``, ``print``,
``len``, ``range`` and ``match`` subjects.

Python values keep Python's exact semantics (short-circuiting, returning the
deciding operand); symbolic tensors become graph ops.
"""

from __future__ import annotations

import builtins

from autoloop.runtime import exceptions, staged_branches, staged_loops, staging
from autoloop.runtime.locations import caller_location, describe, raise_from_user
from autoloop.runtime.values import is_graph_tensor


def and_(first, *rest):
    """``first and rest[0]() and rest[1]() ...``; lazy, staged for tensors."""
    value = first
    for position, thunk in enumerate(rest):
        if is_graph_tensor(value):
            return staged_branches.staged_and(value, rest[position:])
        if not value:
            return value
        value = thunk()
    return value


def or_(first, *rest):
    """``first or rest[0]() or rest[1]() ...``; lazy, staged for tensors."""
    value = first
    for position, thunk in enumerate(rest):
        if is_graph_tensor(value):
            return staged_branches.staged_or(value, rest[position:])
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
    raises when (and if) the graph runs that path, not while tracing.
    """
    if is_graph_tensor(test):
        staging.staged_assert(test, _message(message), caller_location())
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
    if staging.tracing() or any(is_graph_tensor(v) for v in values):
        staging.staged_print(values, options)  # prints when the graph runs, in program order
        return None
    return builtins.print(*values, **options)


def len_(value):
    """``len(value)``; a scalar tensor for tensors and tensor lists."""
    return staging.length(value)


def range_(*args):
    """``range(...)``, or a `TensorRange` when a bound is a symbolic tensor."""
    if any(is_graph_tensor(a) for a in args):
        return staged_loops.TensorRange(*args)
    return builtins.range(*(_as_int(a) for a in args))


def _as_int(value):
    return value if isinstance(value, int) else builtins.int(value)


def match_subject(subject):
    """A ``match`` subject; a symbolic tensor cannot be matched on."""
    if is_graph_tensor(subject):
        location = caller_location()
        raise_from_user(NotImplementedError(
            f"match on a Tensor ({describe(location)}) cannot be converted to graph control flow; "
            f"use if/elif on the tensor instead"), location)
    return subject
