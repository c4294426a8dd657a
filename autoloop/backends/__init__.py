"""Where a traced graph runs: the backends `autoloop.function(..., backend=)` can name.

- ``"numpy"``: the compiled numpy executor (`autoloop.execute`), always there;
- ``"jax"``: the graph lowered to ``jax.numpy``/``jax.lax`` and compiled by
  XLA (`autoloop.backends.jax`), with the optional extra
  ``pip install 'autoloop[jax]'``.

Each backend is named here once, with the function that compiles a graph
for it (a ``"module:function"`` string, imported on first use, so
``import autoloop`` never imports JAX) and the package it needs:

    >>> check_backend("jax")          # ValueError for a name we do not know, ImportError if JAX is missing
    >>> program = compiler_for("numpy")(graph)
    >>> outputs = program(*input_arrays)
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Literal

from autoloop.ir.lazy import resolve


@dataclass(frozen=True)
class Backend:
    """One backend: how to compile a graph for it and what it needs installed.

    `compile` is ``compile(graph, **options) -> callable(*arrays) -> tuple``;
    `static_shapes` says that it compiles per concrete input shape (XLA), so
    a trace for it is made per concrete shape as well (see `autoloop.function`).
    """

    name: str
    compile: str
    requires: str | None = None
    extra: str | None = None
    static_shapes: bool = False


BackendName = Literal["numpy", "jax"]  # the names `BACKENDS` holds, for type checkers

BACKENDS = {
    "numpy": Backend("numpy", "autoloop.execute.executor:CompiledGraph"),
    "jax": Backend("jax", "autoloop.backends.jax:compile_graph", requires="jax", extra="jax", static_shapes=True),
}


def check_backend(name) -> Backend:
    """The backend called `name`: ValueError if there is none, ImportError if its package is missing.

    Looks for the package without importing it.
    """
    backend = BACKENDS.get(name) if isinstance(name, str) else None
    if backend is None:
        raise ValueError(f"backend must be one of {', '.join(repr(n) for n in BACKENDS)}, got {name!r}")
    if backend.requires is not None and importlib.util.find_spec(backend.requires) is None:
        raise ImportError(f"backend={name!r} needs the {backend.requires!r} package, which is not installed; "
                          f"install it with: pip install 'autoloop[{backend.extra}]'")
    return backend


def compiler_for(name: str):
    """The function compiling a graph for backend `name` (imported now)."""
    return resolve(check_backend(name).compile)
