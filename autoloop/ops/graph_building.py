"""What code can ask about the graph being built: `executing_eagerly`, `get_static_value`, `name_scope`.

    @autoloop.function
    def f(x):
        with autoloop.name_scope("layer"):
            return x * 2            # the node is named "layer/Mul"
"""

from __future__ import annotations

import contextlib
import re

from autoloop.ir import context
from autoloop.ops.dispatch import constant_value
from autoloop.tensor import Tensor

_SCOPE_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\-]*")  # TensorFlow's rule for a scope name


def executing_eagerly() -> bool:
    """True outside a trace (ops run at once); False while a function is traced into a graph."""
    return context.current_graph() is None


def get_static_value(tensor, partial=False):
    """The numpy value of `tensor` if it is known now, else None.

    An eager tensor's value is known; so is a symbolic one that tracing
    computed from constants (``shape(x)`` for a fully known shape, ``2 + 3``).
    A value that is not a tensor is returned as it is. `partial` is accepted
    for TensorFlow compatibility: partly known values give None.
    """
    if not isinstance(tensor, Tensor):
        return tensor
    return constant_value(tensor)


@contextlib.contextmanager
def name_scope(name):
    """A block whose new graph nodes are named ``name/...`` (nested blocks: ``outer/inner/...``).

    Yields the full prefix (``"outer/inner/"``). Eagerly no nodes are made and
    the block only checks the name. A name is letters, digits and ``_ . -``,
    not starting with ``_`` or ``-``; ``""`` (as in TensorFlow) goes back to the
    root scope.
    """
    if not isinstance(name, str) or name and not _SCOPE_NAME.fullmatch(name):
        raise ValueError(f"name_scope: {name!r} is not a valid scope name; use letters, digits and "
                         f"'_', '.', '-', starting with a letter, digit or '.'")
    graph = context.current_graph()
    if graph is None:
        yield f"{name}/" if name else ""
        return
    graph.name_scopes.append(name)
    try:
        yield graph.scope_prefix()
    finally:
        graph.name_scopes.pop()
