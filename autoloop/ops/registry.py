"""The op registry: one `OpDef` per op, holding everything about it.

An op's numpy kernel, its dtype/shape rule and its gradient sit side by
side in one registration::

    register(OpDef(
        "Square",
        kernel=np.square,
        infer=same_as_input,
        expr="({0} * {0})",          # optional: inlined by the executor
        gradient=lambda node, grads, x: [grads[0] * 2 * x],  # filled later
    ))

Contracts:
- ``kernel(*arrays, **attrs)`` returns values of exactly the dtypes and
  shapes ``infer`` promised: one value when ``infer`` returns one `Spec`, a
  tuple when it returns a list (one entry per output; ``[]`` for an op with
  no outputs, whose kernel returns None).
- ``infer(*specs, **attrs)`` takes a `Spec` per input and returns one `Spec`
  or a list of them; a list of one is a tuple of one, never a bare value. It raises TypeError/ValueError for inputs the op cannot
  take; those errors are raised the same way eagerly and while tracing.
- ``expr``, when given, is a Python expression template over the inputs
  (``{0}``, ``{1}``, ...) that computes the same as ``kernel``; the compiled
  executor inlines it instead of calling the kernel. A callable ``expr``
  takes the node's attrs and returns a template (or None: call the kernel).
- ``scalar_expr``, when given, replaces ``expr`` where tracing proved every
  input a scalar (shape ``()``): a cheap form that only holds for scalars,
  such as ``({0} if {0} > {1} else {1})`` for Maximum, where a numpy ufunc
  on scalars costs 0.5 µs. A callable takes the attrs and the input dtypes
  and returns a template or None. It must give the kernel's exact values and
  dtype (numpy scalars, never Python numbers).
- Templates may name numpy as ``np``.
- ``stateful`` ops (print, assert) are never pruned and keep program order.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from autoloop.dtypes import DType
from autoloop.shapes import TensorShape


class Spec(NamedTuple):
    """What is known statically about one input: dtype, shape, maybe value."""

    dtype: DType
    shape: TensorShape
    value: Any = None  # the numpy value when it is a known constant


@dataclass(frozen=True)
class OpDef:
    name: str
    kernel: Callable
    infer: Callable
    expr: str | None = None
    gradient: Callable | None = None
    stateful: bool = False
    scalar_expr: str | Callable | None = None


_REGISTRY: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    if opdef.name in _REGISTRY:
        raise ValueError(f"op {opdef.name!r} is registered twice")
    _REGISTRY[opdef.name] = opdef
    return opdef


def get(name: str) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r} is registered") from None


def all_ops() -> dict[str, OpDef]:
    return dict(_REGISTRY)


def set_gradient(name: str, gradient: Callable) -> None:
    """Attach `gradient` to an op registered earlier (used by autodiff)."""
    opdef = get(name)
    _REGISTRY[name] = dataclasses.replace(opdef, gradient=gradient)
