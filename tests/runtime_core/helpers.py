"""Helpers for the runtime-core behaviour tests.

`mode` runs a function either eagerly (a plain call) or traced with
``autoloop.function(fn, autograph=False)``. A traced graph is also run on
the reference interpreter, which must give identical outputs, errors and
printed text (`tests.execute.equivalence`), and compiled a second time in
checked mode (``CompiledGraph(graph, check=True)``), which verifies every
kernel result against the dtype and shape tracing inferred; the checked
outputs must equal the ordinary compiled outputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as tf
from autoloop.control_flow.array_elements import ArrayElements
from autoloop.execute import CompiledGraph
from tests.execute.equivalence import assert_equivalent


class Mode:
    """Calls `fn(*args)` eagerly or through a traced graph; see the module docstring."""

    def __init__(self, name: str):
        self.name = name
        self.concrete = None  # the last ConcreteFunction (traced mode)

    @property
    def traced(self) -> bool:
        return self.name == "traced"

    def __call__(self, fn, *args):
        if not self.traced:
            return fn(*args)
        function = tf.function(fn, autograph=False)
        self.concrete = function.get_concrete_function(*args)
        assert_equivalent(self.concrete.graph, input_arrays(args))  # errors too: before the real call
        result = function(*args)
        _check_mode_agrees(self.concrete, args)
        return result

    def __repr__(self):
        return self.name


def input_arrays(args) -> list:
    """The numpy values a ConcreteFunction takes for `args` (tensors and arrays only)."""
    arrays = []
    for leaf in tf.nest.flatten(list(args)):
        if isinstance(leaf, tf.Tensor):
            arrays.append(leaf.numpy())
        elif isinstance(leaf, np.ndarray):
            arrays.append(leaf)
    return arrays


def run_checked(concrete, args) -> None:
    """The graph run on the reference interpreter and in checked mode gives the plain compiled outputs."""
    assert_equivalent(concrete.graph, input_arrays(args))
    _check_mode_agrees(concrete, args)


def _check_mode_agrees(concrete, args) -> None:
    from tests.backends.differential import DifferentialProgram, assert_close
    arrays = input_arrays(args)
    plain = concrete.compiled(*arrays)
    checked = CompiledGraph(concrete.graph, check=True)(*arrays)
    assert len(plain) == len(checked)
    # Under the JAX corpus run the plain outputs are XLA's: floats agree with numpy's within rounding (a matrix
    # product over a compacted scan's fewer rows may round differently), as the differential run defines.
    same = assert_close if isinstance(concrete.compiled, DifferentialProgram) else assert_same_value
    for expected, found in zip(plain, checked):
        same(expected, found)


def assert_same_value(expected, found) -> None:
    if isinstance(expected, ArrayElements):  # a TensorArray's elements
        assert isinstance(found, ArrayElements) and len(found) == len(expected)
        for a, b in zip(expected, found):
            assert (a is None) == (b is None)
            if a is not None:
                assert_same_value(a, b)
        return
    assert np.asarray(expected).dtype == np.asarray(found).dtype
    np.testing.assert_array_equal(expected, found)


def to_numpy(structure):
    """`structure` with every Tensor replaced by its numpy value."""
    return tf.nest.map_structure(lambda leaf: leaf.numpy() if isinstance(leaf, tf.Tensor) else leaf, structure)
