"""The ops of variables and of TF1-style graphs (``autoloop.compat.v1`` builds them).

Variables live outside the graph, in a `VariableCell` (one per variable and
Session; one per eager variable, `autoloop.Variable`). A TF1 graph refers to
a variable through a ``VarHandleOp`` node, which the Session feeds with its
cell when it runs; a traced function holds an eager variable's cell as a
constant (`variable_of` says which variable a handle is). ``ReadVariableOp``,
``AssignVariableOp``, ``AssignAddVariableOp`` and ``AssignSubVariableOp``
take the cell as their first input. The reads and updates are effects, so
inside a loop or branch they keep program order. A cell never changes an
array in place: an update stores a new array, so a value read before it
keeps its value.

``PrintV1`` is TF1's ``Print``: an identity that writes a message to stderr
each time it runs. It is not an effect: it runs only when something needs
its output. ``NoOp`` does nothing; its ordering edges are what it is for
(``group``, ``global_variables_initializer``).

    >>> cell = VariableCell("v")
    >>> _read_kernel(cell, dtype=int32, shape=TensorShape([]))
    FailedPreconditionError: the variable 'v' is read before it is initialised ...
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

from autoloop import dtypes
from autoloop.errors import FailedPreconditionError, InvalidArgumentError
from autoloop.ops.logging_ops import element
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.shapes import TensorShape


class VariableCell:
    """Where one variable's value lives (for one Session, or for an eager variable)."""

    def __init__(self, name: str):
        self.name = name
        self.value: Any = None  # None until initialised
        self.lock = threading.Lock()

    def read(self):
        value = self.value
        if value is None:
            raise FailedPreconditionError(
                f"the variable {self.name!r} is read before it is initialised: run "
                f"autoloop.compat.v1.global_variables_initializer() (or {self.name}.initializer) in this "
                f"Session first")
        return value

    def __repr__(self):
        state = "uninitialised" if self.value is None else f"{self.value!r}"
        return f"<VariableCell {self.name}: {state}>"


def cells_of(graph) -> list:
    """The cells of the eager variables `graph` (and its sub-graphs) uses, in order of first use.

    A traced function captures an eager variable as a constant holding its cell.
    """
    cells: dict = {}
    for node in graph.walk():
        if node.op == "Const" and isinstance(node.attrs["value"], VariableCell):
            cells.setdefault(node.attrs["value"], None)
    return list(cells)


UPDATE_OPS = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})


def variable_of(handle):
    """Which variable the graph value `handle` refers to, following sub-graph captures: the cell of an
    eager variable, the `Variable` of a TF1 graph variable (its ``VarHandleOp``), or None."""
    while handle is not None:
        node = handle.node
        if node.op == "Const" and isinstance(node.attrs["value"], VariableCell):
            return node.attrs["value"]
        if node.op == "VarHandleOp":
            return node.attrs["variable"]
        handle = next((outer for outer, inner in handle.graph.captures.items() if inner is handle), None)
    return None


def updates(graph, variable) -> bool:
    """Whether `graph` or one of its sub-graphs updates `variable` (as `variable_of` names it)."""
    return any(node.op in UPDATE_OPS and variable_of(node.inputs[0]) is variable for node in graph.walk())


# -- VarHandleOp: the variable itself, fed by the Session ---------------------------------------
def _handle_infer(variable):
    return Spec(dtypes.variant, TensorShape([]))


def _handle_kernel(variable):
    raise FailedPreconditionError(
        f"the variable {variable.name!r} has a value only in a Session: run this graph with "
        f"autoloop.compat.v1.Session().run(...)")


register(OpDef("VarHandleOp", kernel=_handle_kernel, infer=_handle_infer, gradient=NOT_DIFFERENTIABLE))


# -- reads and updates ------------------------------------------------------------------------
def _read_infer(handle, dtype, shape):
    return Spec(dtype, shape)


def _read_kernel(cell, dtype, shape):
    return cell.read()


register(OpDef("ReadVariableOp", kernel=_read_kernel, infer=_read_infer, stateful=True,
               gradient=NOT_DIFFERENTIABLE,  # a GradientTape differentiates reads its own way (autodiff.tape)
               kernels={"jax": "autoloop.backends.jax.variables:read"}))


def _assign_infer(handle, value, dtype, shape):
    if value.dtype is not dtype:
        raise TypeError(f"cannot assign a {value.dtype.name} value to a {dtype.name} variable; "
                        f"use autoloop.cast")
    if not value.shape.is_compatible_with(shape):
        raise ValueError(f"cannot assign a value of shape {value.shape} to a variable of shape {shape}")
    return Spec(dtype, shape)


def _store(cell, value, shape):
    """Store `value` in `cell` (a new array, never written into) and return it."""
    if not TensorShape(np.shape(value)).is_compatible_with(shape):
        raise InvalidArgumentError(f"cannot assign a value of shape {np.shape(value)} to the variable "
                                   f"{cell.name!r} of shape {shape}")
    cell.value = value
    return value


def _assign_kernel(cell, value, dtype, shape):
    with cell.lock:
        return _store(cell, value, shape)


def _updating(update):
    def kernel(cell, delta, dtype, shape):
        with cell.lock:
            return _store(cell, np.asarray(update(cell.read(), delta), dtype=dtype.as_numpy_dtype)[()], shape)
    return kernel


for _name, _kernel, _jax in (("AssignVariableOp", _assign_kernel, "assign"),
                            ("AssignAddVariableOp", _updating(np.add), "assign_add"),
                            ("AssignSubVariableOp", _updating(np.subtract), "assign_sub")):
    register(OpDef(_name, kernel=_kernel, infer=_assign_infer, stateful=True, gradient=NOT_DIFFERENTIABLE,
                   kernels={"jax": f"autoloop.backends.jax.variables:{_jax}"}))


# -- PrintV1 ----------------------------------------------------------------------------------
def _print_infer(value, *data, message, summarize):
    return Spec(value.dtype, value.shape)


def _print_kernel(value, *data, message, summarize):
    sys.stderr.write(message + "".join(f"[{summarize_value(item, summarize)}]" for item in data) + "\n")
    return value


def summarize_value(value, limit: int) -> str:
    """`value` as TF1's Print shows it: its first `limit` elements, nested like the array, ``...`` for the rest.

        >>> summarize_value(np.arange(5), 3)
        '0 1 2...'
        >>> summarize_value(np.zeros((4, 2), np.int32), 3)
        '[0 0][0...]...'
    """
    array = np.asarray(value)
    if array.ndim == 0:
        return element(array[()])
    shown = [0]

    def rows(part) -> str:
        if part.ndim == 1:
            count = min(len(part), limit - shown[0])
            shown[0] += count
            text = " ".join(element(item) for item in part[:count])
            return text + ("..." if count < len(part) else "")
        pieces = []
        for row in part:
            if shown[0] >= limit:
                pieces.append("...")
                break
            pieces.append(f"[{rows(row)}]")
        return "".join(pieces)

    return rows(array)


def _print_gradient(op, grad):
    """An identity for its first input; the data it prints get no gradient."""
    return [grad] + [None] * (len(op.inputs) - 1)


register(OpDef("PrintV1", kernel=_print_kernel, infer=_print_infer, gradient=_print_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.effects:print_v1"}))


# -- NoOp -------------------------------------------------------------------------------------
register(OpDef("NoOp", kernel=lambda: (), infer=lambda: [], gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.effects:no_op"}))
