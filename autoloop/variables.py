"""`Variable`: state that outlives a call, read and written in program order.

A variable holds its value in a `VariableCell` (`autoloop.ops.v1_ops`),
outside every graph. Eagerly each method runs at once. A `@function`
captures the variable *by reference*: its graph holds the cell as a
constant, and ``ReadVariableOp`` / ``AssignVariableOp`` nodes read and
write it when the graph runs, so every call sees the current value (no
retrace when it changes) and its assignments persist after the call.
Reads and writes are effects (`autoloop.ir.effects`): chained in program
order, inside loops and branches too, on every executor; the JAX backend
carries the values in and out of the compiled program.

    v = Variable(1.0)

    @function
    def step(x):
        v.assign_add(x)           # persists
        return v * 2              # a fresh read, after the update

    step(constant(2.0))          # 6.0; v.numpy() == 3.0
    step(constant(2.0))          # 10.0, the same trace

As in TensorFlow 2, a function may create variables only while it is traced
for the first time, and only once (``if self.v is None: self.v =
Variable(...)``): a function whose first trace creates variables is traced
again to check that it does not create more (`creation_rule`).

A trainable float variable read while a `GradientTape` records is watched
by it (`autoloop.autodiff.tape`). `autoloop.compat.v1.Variable` is this
class with TF1's graph mode added (values living in a Session).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any

import numpy as np

from autoloop import dtypes
from autoloop.dtypes import DTypeLike
from autoloop.autodiff.tape import variable_read
from autoloop.ir import context
from autoloop.ops import tensor_methods
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.location import format_location, user_location
from autoloop.ops.v1_ops import VariableCell, variable_of
from autoloop.shapes import TensorShape, as_shape
from autoloop.tensor import Operators, Tensor


class Variable(Operators):
    """A TF2 variable; see the module docstring.

    `initial_value` is a tensor, number, array or a callable giving one;
    `dtype` converts it; `shape` (with None for sizes that may change)
    defaults to its shape.
    """

    def __new__(cls, *args, **kwargs):
        # ``autoloop.Variable`` while a TF1 graph is built is TF1's graph variable (values in a Session).
        if cls is Variable and _building_tf1_graph():
            from autoloop.compat.v1.variables import Variable as GraphVariable
            return object.__new__(GraphVariable)
        return object.__new__(cls)

    def __init__(self, initial_value: Any = None, trainable: bool = True, name: str | None = None,
                 dtype: DTypeLike | None = None, shape: Any = None):
        if initial_value is None:
            raise ValueError("Variable: initial_value must be given (a tensor, number, array or a callable "
                             "returning one)")
        self._name = _scoped_name(name if name is not None else "Variable")
        self.trainable = bool(trainable)
        self._graph = None
        if context.current_graph() is not None:
            creation_rule(self._name)
        with context.eager():  # made now, outside the graph being traced (TF's init_scope)
            if callable(initial_value) and not isinstance(initial_value, Tensor):
                initial_value = initial_value()
            if isinstance(initial_value, Tensor) and initial_value.is_symbolic:
                raise ValueError(
                    f"Variable {self._name!r} (at {format_location(user_location())}): its initial value "
                    f"{initial_value.name} is computed by the function being traced; a variable is made once, "
                    f"outside the graph. Give an initial value that does not depend on the function's "
                    f"arguments, or create the variable outside the function")
            initial = convert(initial_value, dtypes.as_dtype(dtype) if dtype is not None else None)
        self.dtype = initial.dtype
        self.shape = as_shape(shape) if shape is not None else initial.shape
        if not initial.shape.is_compatible_with(self.shape):
            raise ValueError(f"Variable {self._name!r}: the initial value has shape {initial.shape}, the shape "
                             f"given is {self.shape}")
        self.initial_value = initial
        self._hold(initial)

    def _hold(self, initial: Tensor) -> None:
        """Keep the value here, in a new cell holding (a copy of) `initial`: an eager variable."""
        self._cell = VariableCell(self._name)
        value = initial.numpy()
        self._cell.value = value.copy() if isinstance(value, np.ndarray) else value  # not the caller's array
        self._handle = Tensor(self._cell, name=self._name)

    def _attrs(self) -> dict:
        return {"dtype": self.dtype, "shape": self.shape}

    # -- what it is --------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def graph(self):
        return self._graph

    def get_shape(self) -> TensorShape:
        return self.shape

    # -- reading ----------------------------------------------------------------------------------
    def read_value(self) -> Tensor:
        """The variable's value, read where this is called (a new read each time in a graph)."""
        value = apply("ReadVariableOp", [self._handle], self._attrs(), name=f"{self._name}/Read")
        if self.trainable and self.dtype.is_floating:
            value = variable_read(self, value)
        return value

    def value(self) -> Tensor:
        return self.read_value()

    def _reads_in(self, graph) -> list:
        """The outputs of the reads of this variable in `graph` and its sub-graphs (what `autoloop.gradients`
        with respect to a variable differentiates)."""
        me = self._cell if self._graph is None else self  # how `v1_ops.variable_of` names it
        return [n.outputs[0] for n in graph.walk() if n.op == "ReadVariableOp" and variable_of(n.inputs[0]) is me]

    def numpy(self) -> Any:
        """The current value, as numpy."""
        if self._graph is not None:
            raise TypeError(f"the variable {self._name!r} belongs to a graph: its value is in a Session; "
                            f"use sess.run({self._name})")
        value = self._cell.read()
        return value.copy() if isinstance(value, np.ndarray) else value

    def __array__(self, dtype=None, copy=None):
        array = np.asarray(self.numpy())
        return array.astype(dtype) if dtype is not None else array

    def _as_autoloop_tensor(self) -> Tensor:
        """A fresh read of the value (how ops and control flow use a variable)."""
        return self.read_value()

    # -- writing ----------------------------------------------------------------------------------
    def assign(self, value: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True) -> Any:
        """Set the variable to `value` (its dtype, a compatible shape). Eagerly, as in TensorFlow, the
        variable (an `UnreadVariable`; None with ``read_value=False``); in a graph, the new value."""
        return self._update("AssignVariableOp", value, name or f"{self._name}/Assign", read_value)

    def assign_add(self, delta: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True) -> Any:
        """Add `delta` to the variable; returns what `assign` returns."""
        return self._update("AssignAddVariableOp", delta, name or f"{self._name}/AssignAdd", read_value)

    def assign_sub(self, delta: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True) -> Any:
        """Subtract `delta` from the variable; returns what `assign` returns."""
        return self._update("AssignSubVariableOp", delta, name or f"{self._name}/AssignSub", read_value)

    def _update(self, op: str, value, name: str, read_value: bool):
        value = self._checked(value, op)
        new_value = apply(op, [self._handle, value], self._attrs(), name=name)
        if self._graph is None and context.current_graph() is None:  # TensorFlow's eager results
            return UnreadVariable(self) if read_value else None
        return new_value  # in a graph, the new value as a tensor

    def _checked(self, value, op: str) -> Tensor:
        """`value` as a tensor this variable can take: its dtype and a compatible shape, else a clear error."""
        given = value
        value = convert(value) if isinstance(value, Tensor) or hasattr(type(value), "_as_autoloop_tensor") else \
            convert(value, self.dtype)
        what = {"AssignVariableOp": "assign", "AssignAddVariableOp": "add", "AssignSubVariableOp": "subtract"}[op]
        if value.dtype is not self.dtype:
            where = format_location(user_location())  # only on failure: finding it walks the stack
            raise TypeError(f"cannot {what} a {value.dtype.name} value to a {self.dtype.name} variable "
                            f"({self._name!r}, at {where}): a variable keeps its dtype; convert the value with "
                            f"autoloop.cast(value, autoloop.{self.dtype.name})")
        if not value.shape.is_compatible_with(self.shape):
            where = format_location(user_location())
            raise ValueError(f"cannot {what} a value of shape {value.shape} to the variable {self._name!r} of shape "
                             f"{self.shape} (at {where}): give a value of the variable's shape{_hint(given)}")
        return value

    # -- scatter updates (TensorFlow's Variable methods) ------------------------------------------
    def scatter_nd_update(self, indices, updates, use_locking=True, name=None):
        """Set the elements (or slices) at `indices` (``[..., depth]``) to `updates`; the new value."""
        from autoloop.ops.scatter_ops import tensor_scatter_nd_update
        return self.assign(tensor_scatter_nd_update(self.read_value(), indices, updates), name=name)

    def scatter_nd_add(self, indices, updates, use_locking=True, name=None):
        """Add `updates` at `indices` (repeated indices add up); the new value."""
        return self.assign_add(self._scattered(indices, updates), name=name)

    def scatter_nd_sub(self, indices, updates, use_locking=True, name=None):
        """Subtract `updates` at `indices` (repeated indices add up); the new value."""
        return self.assign_sub(self._scattered(indices, updates), name=name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Set the rows ``sparse_delta.indices`` to ``sparse_delta.values`` (an `IndexedSlices`)."""
        return self.scatter_nd_update(*_row_coordinates(sparse_delta, "scatter_update"), name=name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        """Add ``sparse_delta.values`` to the rows ``sparse_delta.indices`` (an `IndexedSlices`)."""
        return self.scatter_nd_add(*_row_coordinates(sparse_delta, "scatter_add"), name=name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        """Subtract ``sparse_delta.values`` from the rows ``sparse_delta.indices`` (an `IndexedSlices`)."""
        return self.scatter_nd_sub(*_row_coordinates(sparse_delta, "scatter_sub"), name=name)

    def _scattered(self, indices, updates) -> Tensor:
        from autoloop.ops.scatter_ops import scatter_nd
        if not self.shape.is_fully_defined():
            raise ValueError(f"scatter into the variable {self._name!r}: its shape {self.shape} is not fully known")
        return scatter_nd(indices, convert(updates, self.dtype), self.shape.as_list())

    # -- printing ---------------------------------------------------------------------------------
    def __repr__(self):
        if context.current_graph() is not None:
            return f"<autoloop.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"
        value = self.numpy()
        text = str(value) if np.ndim(value) == 0 else repr(np.asarray(value))
        if "\n" in text:
            text = "\n" + text
        return f"<autoloop.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, numpy={text}>"


class UnreadVariable(Variable):
    """What an eager ``assign``/``assign_add``/``assign_sub`` returns, as in TensorFlow: the variable
    itself under the name ``'UnreadVariable'`` (printed so; each use reads the variable's value at
    that time, and an assignment through it assigns the variable)."""

    def __init__(self, variable: Variable):
        self.__dict__.update(variable.__dict__)
        self._variable = getattr(variable, "_variable", variable)

    @property
    def name(self) -> str:
        return "UnreadVariable"

    def read_value(self) -> Tensor:
        return self._variable.read_value()  # a read of the variable itself, as tapes watch it


tensor_methods.install(Variable)  # v + 1, v < n, -v, v[0], ...: each on a fresh read
Variable.__iter__ = lambda self: iter(self.read_value())  # type: ignore[method-assign, attr-defined]
# int(v), float(v), bool(v): of its value, as in TF
Variable.__bool__ = lambda self: bool(self.read_value())  # type: ignore[attr-defined]
Variable.__int__ = lambda self: int(self.read_value())  # type: ignore[attr-defined]
Variable.__float__ = lambda self: float(self.read_value())  # type: ignore[attr-defined]
Variable.__hash__ = object.__hash__  # type: ignore[method-assign]  # comparisons are element-wise; a variable is still a dict key


def _hint(value) -> str:
    return "" if not isinstance(value, Tensor) else " (autoloop.reshape changes a value's shape)"


def _row_coordinates(sparse_delta, method: str):
    from autoloop.control_flow.sparse import IndexedSlices
    from autoloop.ops.shape_ops import expand_dims
    if not isinstance(sparse_delta, IndexedSlices):
        raise TypeError(f"Variable.{method} takes an IndexedSlices(values, indices), got "
                        f"{type(sparse_delta).__name__}")
    return expand_dims(sparse_delta.indices, -1), sparse_delta.values


def creation_rule(name: str) -> None:
    """TensorFlow's rule for a variable made while a function is traced (see the module docstring).

    Allowed during the first trace of a `Function` (which is then traced
    once more, with creation forbidden, to check that the function makes
    its variables only once); a ValueError naming the user's line otherwise.
    """
    from autoloop.runtime import trace as staging_trace
    trace = staging_trace.current()
    if trace.may_create_variables:
        trace.created_variables += 1
        return
    raise ValueError(
        f"tf.function only supports singleton tf.Variables created on the first call: the variable {name!r} "
        f"(at {format_location(user_location())}) is created again when the function is traced again (a new "
        f"call signature, or the second trace that checks the first). Make sure the Variable is only created "
        f"once (``if self.v is None: self.v = Variable(...)``), or create it outside the function")


class _Scopes(threading.local):
    names: tuple = ()  # the variable name scopes open in this thread (`variable_name_scope`)


_scopes = _Scopes()


@contextlib.contextmanager
def variable_name_scope(name: str):
    """Variables made in the block are named ``name/...`` (`autoloop.Module.name_scope` opens one)."""
    saved = _scopes.names
    _scopes.names = saved + (name,)
    try:
        yield
    finally:
        _scopes.names = saved


def _scoped_name(name: str) -> str:
    return "".join(f"{scope}/" for scope in _scopes.names) + name


def _building_tf1_graph() -> bool:
    graph = context.current_graph()
    v1_graph = sys.modules.get("autoloop.compat.v1.graph")  # no TF1 graph exists unless compat.v1 is imported
    return graph is not None and v1_graph is not None and v1_graph.v1_graph_of(graph) is not None
