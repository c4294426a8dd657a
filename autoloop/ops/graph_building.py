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

_SCOPE_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\-/]*")  # TensorFlow's rule for a scope name


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
def init_scope():
    """Ops inside the block are made outside every function being traced, as TensorFlow's ``init_scope``: run
    eagerly, or added to the TF1 graph being built (where state is made once, not per trace).

        @autoloop.function
        def f(x):
            with autoloop.init_scope():
                print(autoloop.executing_eagerly())   # True: not part of the trace
            return x
    """
    outer = context.outermost_graph()
    with context.building(outer) if outer is not None else context.eager():
        yield


@contextlib.contextmanager
def name_scope(name):
    """A block whose new graph nodes are named ``name/...`` (nested blocks: ``outer/inner/...``).

    Yields the full prefix (``"outer/inner/"``). TensorFlow's rules: a scope
    entered again gets a unique name (``outer/inner_1/``), as do nodes; a
    name ending in ``/`` is taken as the whole prefix, unchanged; ``""``
    resets to the root (no prefix). Eagerly no nodes are made and the block
    only checks the name. A name is letters, digits and ``_ . - /``, not
    starting with ``_``, ``-`` or ``/``.
    """
    if not isinstance(name, str) or name and not _SCOPE_NAME.fullmatch(name):
        raise ValueError(f"name_scope: {name!r} is not a valid scope name; use letters, digits and "
                         f"'_', '.', '-', '/', starting with a letter, digit or '.' (or '' for the root)")
    graph = context.current_graph()
    if graph is None:
        yield f"{name.rstrip('/')}/" if name else ""
        return
    if not name or name.endswith("/"):
        prefix = name
    else:
        prefix = graph.unique_name(graph.scope_prefix() + name) + "/"
    graph.name_scopes.append(prefix)
    try:
        yield prefix
    finally:
        graph.name_scopes.pop()
