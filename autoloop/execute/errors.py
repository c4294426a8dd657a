"""What a failure while a graph runs looks like, whichever executor ran it.

Errors that are the user's program speaking (a failed ``assert``, an
``UnboundLocalError`` for a variable no path assigned, an exception the
user's ``raise`` in a graph branch holds back, autoloop's own errors) keep
their type; numpy failures become `InvalidArgumentError`.
Either way the error names the op and node, and its traceback ends in a
frame at the user's line that created the node.
"""

from __future__ import annotations

from autoloop.errors import AutoloopError, InvalidArgumentError, raise_at
from autoloop.ops.location import format_location


def raise_for_node(node, error: Exception):
    """Raise what `error`, raised while running `node`, becomes; see the module docstring."""
    location = node.location
    if isinstance(error, InvalidArgumentError):
        # A kernel's own report (a TensorArray index out of range): keep its words, add the op and line.
        message = (f"{node.op} (node {node.name}) failed while running: {error}. "
                   f"The op was created at {format_location(location)}.")
        raise_at(type(error)(message), location)  # a subclass (DivisionByZeroError) stays one
    if isinstance(error, AutoloopError | AssertionError | UnboundLocalError) or getattr(
            error, "__autoloop_user_raise__", False):
        error.__traceback__ = None
        raise_at(error, location)
    message = (f"{node.op} (node {node.name}) failed while running: {type(error).__name__}: {error}. "
               f"The op was created at {format_location(location)}.")
    raise_at(InvalidArgumentError(message), location)
