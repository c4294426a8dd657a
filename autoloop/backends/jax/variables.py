"""Variables (`autoloop.Variable`) on the JAX backend: extra inputs and outputs of the compiled program.

An XLA program keeps no state between calls, so a graph that reads or
writes variables is compiled as a pure function of its arguments *and* the
variables' current values, returning their new values beside its outputs;
`autoloop.backends.jax.program` reads the cells before the call and writes
the new values back after it. While lowering, `VariableState` holds each
variable's current JAX value: a read returns it, an update replaces it, and
the ``While`` and ``Cond`` rules carry the whole state through loops and
branches (`autoloop.backends.jax.control_flow`), so program order is kept
with no ordering of its own.

    v = autoloop.Variable(0.0)

    @autoloop.function(backend="jax")
    def count(n):
        i = 0
        while i < n:
            v.assign_add(1.0)
            i += 1
        return v.read_value()

    count(autoloop.constant(3))     # 3.0, and v.numpy() == 3.0 afterwards
"""

from __future__ import annotations

import contextlib

import numpy as np

from autoloop.backends.jax.marks import with_node


class VariableState:
    """The current value of each of `cells` while a program is lowered (JAX or numpy values)."""

    def __init__(self, cells, values):
        self.cells = cells
        self._index = {cell: k for k, cell in enumerate(cells)}
        self._values = list(values)

    def values(self) -> tuple:
        return tuple(self._values)

    def update(self, values) -> None:
        self._values = list(values)

    def read(self, cell):
        return self._values[self._index[cell]]

    def write(self, cell, value) -> None:
        self._values[self._index[cell]] = value

    @contextlib.contextmanager
    def replaced(self, lowering, values):
        """Inside the block `lowering.variables` is a state holding `values` (a loop body's or branch's)."""
        inner = VariableState(self.cells, values)
        lowering.variables = inner
        try:
            yield inner
        finally:
            lowering.variables = self


def host_values(cells) -> tuple:
    """The current values of `cells`, as the program's extra inputs."""
    return tuple(cell.read() for cell in cells)


def write_back(cells, values) -> None:
    """Store the program's new values of `cells` (numpy values; a cell never shares an array)."""
    for cell, value in zip(cells, values):
        array = np.array(value)
        cell.value = array[()] if array.ndim == 0 else array


# -- the JAX kernels of the variable ops ----------------------------------------------------------------
@with_node
def read(lowering, node, cell, dtype, shape):
    return lowering.variables.read(cell)


def _writer(update):
    @with_node
    def kernel(lowering, node, cell, value, dtype, shape):
        import jax.numpy as jnp
        new = jnp.asarray(update(lowering.variables.read(cell), value)).astype(dtype.as_numpy_dtype)
        lowering.variables.write(cell, new)
        return new
    return kernel


assign = _writer(lambda old, value: value)
assign_add = _writer(lambda old, value: old + value)
assign_sub = _writer(lambda old, value: old - value)
