"""What a gradient rule sees of the op it differentiates (the `op` of ``rule(op, *grads)``).

Two views with one interface (see `autoloop.ops.registry` for the rule
contract):

- `GraphOp`, a node of a traced graph. Its forward values are read through
  a `Residuals` (`autoloop.autodiff.residuals`), and only when a rule asks:
  inside a loop, reading ``op.inputs[0]`` is what saves that value on a
  stack each iteration, so a rule that only needs static shapes saves
  nothing.
- `EagerOp`, an op a `GradientTape` recorded: its values are the eager
  tensors it ran on.

    >>> op.inputs[0], op.input_specs[0].shape, op.attrs["axis"]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autoloop.ir.graph import op_attrs_of
from autoloop.ops.dispatch import constant_value_of, convert
from autoloop.ops.registry import Spec
from autoloop.shapes import TensorShape


class _Lazy(Sequence):
    """Values computed on first access and kept."""

    def __init__(self, count: int, compute):
        self._values = [None] * count
        self._done = [False] * count
        self._compute = compute

    def __len__(self):
        return len(self._values)

    def __getitem__(self, position):
        if isinstance(position, slice):
            return [self[k] for k in range(len(self))[position]]
        if not self._done[position]:
            self._values[position] = self._compute(position)
            self._done[position] = True
        return self._values[position]


class GraphOp:
    """A graph node seen by its gradient rule; `needs` says which inputs want a gradient."""

    def __init__(self, node, residuals, needs):
        self.node = node
        self.op_name = node.op
        self.attrs = op_attrs_of(node.attrs)
        self.location = node.location
        self.input_specs = tuple(Spec(v.dtype, v.shape, constant_value_of(v)) for v in node.inputs)
        self.output_specs = tuple(Spec(v.dtype, v.shape, v.constant) for v in node.outputs)
        self.residuals = residuals
        self.inputs = _Lazy(len(node.inputs), lambda k: residuals.value(node.inputs[k]))
        self.outputs = _Lazy(len(node.outputs), lambda k: residuals.value(node.outputs[k]))
        self._needs = needs

    def needs_gradient(self, position: int) -> bool:
        return self._needs(position)

    def input_shape(self, position: int):
        return self.residuals.shape(self.node.inputs[position])

    def output_shape(self, position: int):
        return self.residuals.shape(self.node.outputs[position])


class EagerOp:
    """An op a tape recorded, seen by its gradient rule."""

    node = None
    location = None

    def __init__(self, op_name: str, attrs: dict, inputs, outputs, needs=None):
        self.op_name = op_name
        self.attrs = op_attrs_of(attrs)
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.input_specs = tuple(_spec(t) for t in self.inputs)
        self.output_specs = tuple(_spec(t) for t in self.outputs)
        self._needs = needs

    def needs_gradient(self, position: int) -> bool:
        return True if self._needs is None else self._needs(position)

    def input_shape(self, position: int):
        return convert(np.array(np.shape(self.inputs[position]._numpy), np.int32))

    def output_shape(self, position: int):
        return convert(np.array(np.shape(self.outputs[position]._numpy), np.int32))


def _spec(tensor) -> Spec:
    if not isinstance(tensor._numpy, np.ndarray | np.generic):
        return Spec(tensor.dtype, TensorShape([]), None)
    return Spec(tensor.dtype, tensor.shape, tensor._numpy)
