"""TF1 variables: `get_variable`, `Variable`, `variable_scope`, initializers.

In a graph a variable is a handle node; every use of the variable as a
tensor (``v + 1``, passing it to an op or to ``while_loop``) adds a fresh
read of its value where it is used, so a read inside a loop body sees the
assignments of earlier iterations. ``assign``/``assign_add``/``assign_sub``
add an update and return the new value. Values live in the `Session` that
runs the graph, each Session its own; they exist once the variable's
initializer has run (``global_variables_initializer()``): reading before
that is a `FailedPreconditionError` naming the variable.

Eagerly (no graph), a variable holds its value itself, initialised at once.

    v = get_variable("v", shape=[], dtype=autoloop.int32, initializer=ones_initializer())
    step = v.assign_add(1)
    with Session() as sess:
        global_variables_initializer().run()
        sess.run(step); sess.run(step)      # 3
"""

from __future__ import annotations

import contextlib
import itertools
import re

import numpy as np

from autoloop import dtypes, random, variables
from autoloop.compat.v1.graph import (
    Operation, ThreadStack, building_graph, get_default_graph, group, v1_graph_of)
from autoloop.ir import context
from autoloop.ops.creation_ops import fill, ones, zeros
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.graph_building import name_scope
from autoloop.shapes import as_shape
from autoloop.tensor import Tensor

_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\-/]*")


# -- initializers --------------------------------------------------------------------------------
class Initializer:
    """``initializer(shape, dtype)`` -> a tensor of that shape and dtype."""

    def __call__(self, shape, dtype=dtypes.float32, partition_info=None):
        raise NotImplementedError


class ones_initializer(Initializer):  # noqa: N801 - TensorFlow's name
    """Ones."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        return ones(shape, dtype=dtype or self.dtype)


class zeros_initializer(Initializer):  # noqa: N801
    """Zeros."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        return zeros(shape, dtype=dtype or self.dtype)


class constant_initializer(Initializer):  # noqa: N801
    """`value` (a number fills the shape; an array must have the shape)."""

    def __init__(self, value=0, dtype=dtypes.float32):
        self.value, self.dtype = value, dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype or self.dtype)
        array = np.asarray(self.value, dtype=dtype.as_numpy_dtype)
        if array.ndim == 0:
            return fill(shape, convert(array[()]))
        if list(array.shape) != list(as_shape(shape).as_list()):
            raise ValueError(f"constant_initializer: the value has shape {array.shape}, the variable {shape}")
        return convert(array)


class glorot_uniform_initializer(Initializer):  # noqa: N801
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(6 / (fan_in + fan_out))`` (TF1's default for floats)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        self.seed, self.dtype = seed, dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = as_shape(shape).as_list()
        fan_in = dims[-2] if len(dims) >= 2 else (dims[0] if dims else 1)
        fan_out = dims[-1] if dims else 1
        receptive = int(np.prod(dims[:-2])) if len(dims) > 2 else 1
        limit = float(np.sqrt(6.0 / max(1.0, (fan_in + fan_out) * receptive)))
        return random.uniform(dims, -limit, limit, dtype=dtype or self.dtype, seed=self.seed)


def _initial_value(initializer, shape, dtype, name):
    if initializer is None:
        initializer = glorot_uniform_initializer() if dtype.is_floating else zeros_initializer()
    if isinstance(initializer, Initializer) or (callable(initializer) and not isinstance(initializer, Tensor)):
        if shape is None:
            raise ValueError(f"get_variable {name!r}: give a shape to use an initializer")
        return convert(initializer(shape, dtype=dtype), dtype)
    value = convert(initializer, dtype)
    if shape is not None and not value.shape.is_compatible_with(as_shape(shape)):
        raise ValueError(f"get_variable {name!r}: the initial value has shape {value.shape}, the shape given is "
                         f"{as_shape(shape)}")
    return value


# -- scopes --------------------------------------------------------------------------------------
AUTO_REUSE = "AUTO_REUSE"
_scopes = ThreadStack()  # (name, reuse) of the open variable_scope blocks


@contextlib.contextmanager
def variable_scope(name_or_scope, reuse=None, default_name=None):
    """Names of variables made in the block start with ``name/``; `reuse` (True or `AUTO_REUSE`) returns existing ones."""
    name = name_or_scope if name_or_scope is not None else default_name
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"variable_scope: {name!r} is not a valid scope name")
    inherited = _scopes.top()[1] if _scopes.top() else None
    # Ops made in the block get a name scope too, made unique as TF does (variables keep their own names).
    with _scopes.pushed((name, reuse if reuse is not None else inherited)), name_scope(name):
        yield "/".join(scope for scope, _ in _scopes.items())


def _full_name(name: str) -> tuple[str, object]:
    reuse = _scopes.top()[1] if _scopes.top() else None
    return "/".join([scope for scope, _ in _scopes.items()] + [name]), reuse


# -- variables -----------------------------------------------------------------------------------
_unnamed = itertools.count()


class Variable(variables.Variable):
    """A TF1 variable; see the module docstring. Made by `get_variable` (or ``Variable(initial_value)``).

    Eagerly it is `autoloop.Variable` (same methods, same cell); in a TF1
    graph it is a ``VarHandleOp`` whose value each Session keeps.
    """

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, shape=None, _initializer=None):
        name = name or f"Variable_{next(_unnamed)}"
        if dtype is None:
            dtype = convert(initial_value).dtype if initial_value is not None and _initializer is None else \
                dtypes.float32
        self.dtype = dtypes.as_dtype(dtype)
        self.trainable = trainable
        initializer = _initializer if _initializer is not None else initial_value
        graph = context.current_graph()
        self._graph = v1_graph_of(graph) if graph is not None else None
        if graph is not None and (graph.parent is not None or self._graph is None):
            raise ValueError(f"variable {name!r}: make variables at the top level of a "
                             f"autoloop.compat.v1 graph, not inside a while_loop or cond body or a traced "
                             f"function")
        self._name = name
        with name_scope(f"{name}/Initializer/"):  # where TF names a variable's initial value
            initial = _initial_value(initializer, shape, self.dtype, name)
        self.shape = as_shape(shape) if shape is not None else initial.shape
        self.initial_value = initial
        if self._graph is None:  # eager: the variable holds its value
            self._hold(initial)
            self.initializer = None
            return
        with name_scope(""):  # the variable's nodes are named by its full name, whatever scope is open
            self._handle = apply("VarHandleOp", [], {"variable": self}, name=name)
            self.initializer = Operation(apply("AssignVariableOp", [self._handle, initial], self._attrs(),
                                               name=f"{name}/Assign").op)
            self._snapshot = self.read_value()
        self._graph.variables[name] = self

    @property
    def op(self) -> Operation:
        return self._as_operation()

    def _update(self, op: str, value, name: str, read_value: bool):
        result = super()._update(op, value, name, read_value)
        if read_value or result.op is None:
            return result
        return Operation(result.op)

    def eval(self, session=None):
        from autoloop.compat.v1.session import session_or_default
        return session_or_default(session, f"evaluate {self._name}").run(self)

    def _as_operation(self) -> Operation:
        if self._graph is None:
            raise TypeError(f"the eager variable {self._name!r} has no graph operation")
        return Operation(self._handle.op)

    def __repr__(self):
        where = "" if self._graph is None else " (in a graph)"
        return f"<autoloop.compat.v1.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}{where}>"


def get_variable(name, shape=None, dtype=None, initializer=None, trainable=True, **unsupported):
    """The variable `name` (after the enclosing `variable_scope` names), made now.

    `initializer` is an initializer (``ones_initializer()``), a tensor or a
    number; by default Glorot-uniform for floats and zeros otherwise.
    ValueError if a variable of that name exists and the scope does not
    reuse, or if reuse is asked for one that does not exist.
    """
    if unsupported:
        raise TypeError(f"get_variable: {', '.join(sorted(unsupported))} not supported by autoloop")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"get_variable: {name!r} is not a valid variable name")
    full_name, reuse = _full_name(name)
    graph = context.current_graph()
    owner = v1_graph_of(graph) if graph is not None else None
    existing = owner.variables.get(full_name) if owner is not None else None
    if existing is not None:
        if reuse not in (True, AUTO_REUSE):
            raise ValueError(f"the variable {full_name!r} already exists; to use it again, make it in "
                             f"variable_scope(..., reuse=True) or reuse=AUTO_REUSE")
        return existing
    if reuse is True:
        raise ValueError(f"the variable {full_name!r} does not exist, and reuse=True asks for an existing one; "
                         f"make it first, or use reuse=AUTO_REUSE")
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
    return Variable(name=full_name, dtype=dtype, shape=shape, _initializer=initializer, trainable=trainable)


def global_variables(graph=None) -> list:
    return list((graph or get_default_graph()).variables.values())


def global_variables_initializer() -> Operation | None:
    """One op running every variable's initializer in the default graph (None eagerly, where values are set)."""
    graph = context.current_graph()
    if graph is None:
        return None
    owner = building_graph("global_variables_initializer")
    owner = v1_graph_of(owner)
    return group(*[v.initializer for v in owner.variables.values()], name="init")


def variables_initializer(var_list, name="init") -> Operation | None:
    if context.current_graph() is None:
        return None
    return group(*[v.initializer for v in var_list], name=name)
