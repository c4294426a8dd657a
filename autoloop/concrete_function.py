"""`ConcreteFunction`: one trace of a `Function`, its graph compiled for a backend and called on arrays.

Its `run_flat` runs the compiled graph on input arrays and packs the
structured result the traced Python function returned: eager Tensors (or a
backend's arrays with ``jax_arrays=True``), composites rebuilt from their
parts, an appended Python list as a list.
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes, nest
from autoloop.arguments import flatten, input_array, is_input
from autoloop.backends import compiler_for
from autoloop.control_flow.array_elements import ArrayElements
from autoloop.control_flow.composite import CompositeTensor
from autoloop.ir.graph import Graph
from autoloop.runtime.lists import TensorList
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, eager


class ConcreteFunction:
    """One trace: `graph` with `inputs`/`outputs`, compiled and callable."""

    def __init__(self, graph: Graph, structured_outputs, output_leaves, input_specs, decisions=(),
                 backend: str = "numpy", jax_arrays: bool = False):
        self.graph = graph
        self.input_specs = input_specs
        self.decisions = decisions  # for each loop and branch traced: staged or Python, and why
        self.backend = backend
        self._structured_outputs = structured_outputs
        self._output_leaves = output_leaves  # per output leaf: number of graph outputs, or None
        self._compiled = None
        self._jax_arrays = jax_arrays
        self._run_flat = None

    @property
    def inputs(self):
        return [Tensor(value=v) for v in self.graph.inputs]

    @property
    def outputs(self):
        return [Tensor(value=v) for v in self.graph.outputs]

    @property
    def compiled(self):
        """The graph compiled for this function's backend (a `CompiledGraph`, a `JaxProgram`), made once."""
        if self._compiled is None:
            self._compiled = self.compile(self.graph)
        return self._compiled

    def compile(self, graph):
        """`graph` compiled for this function's backend, with its options."""
        options = {"jax_arrays": True} if self._jax_arrays else {}
        return compiler_for(self.backend)(graph, **options)

    @property
    def run_flat(self):
        """``run_flat(arrays)``: run on input arrays; the structured result of eager tensors (or, with
        ``jax_arrays=True``, of the backend's arrays)."""
        if self._run_flat is None:
            one_tensor = (type(self._structured_outputs) is Tensor
                          and [leaf for leaf, _ in self._output_leaves] == [self._structured_outputs])
            # The common result, one tensor, skips the general packing (0.8 µs of a 2 µs call).
            if self._jax_arrays:
                pack = _first if one_tensor else self._pack_arrays
            else:
                pack = _one_tensor if one_tensor else self._pack_results
            # A one-tensor result is handed over alone (`one`), straight into its Tensor where the value
            # needs no conversion: a JAX backend's values come back converted, an array of rank >= 1
            # stays an array (`eager` makes a rank-0 array a numpy scalar).
            one = None
            if one_tensor and self._jax_arrays:
                one = _same
            elif one_tensor:
                output = self.graph.outputs[0]
                converted = self.backend == "jax" or (output.shape.rank and output.dtype is not dtypes.variant)
                one = Tensor if converted else eager
            self._run_flat = self.compiled.runner(pack, one=one)
        return self._run_flat

    def _pack_results(self, results):
        return self.pack_tensors([eager(r) if not isinstance(r, list) else Tensor(r) for r in results])

    def _pack_arrays(self, results):
        """The structured result with the backend's arrays as its tensors (``jax_arrays=True``); the
        parts of composite results (TensorArrays, SparseTensors, appended lists) become Tensors."""
        leaves, position = [], 0
        for template, count in self._output_leaves:
            if count is None:
                leaves.append(template)
                continue
            parts = results[position:position + count]
            position += count
            if type(template) is Tensor:
                leaves.append(parts[0])
            else:
                tensors = [Tensor(p) if isinstance(p, list | ArrayElements) else eager(np.asarray(p)) for p in parts]
                leaves.append(_leaf_from_tensors(template, tensors))
        return nest.pack_sequence_as(self._structured_outputs, leaves)

    def pack_tensors(self, tensors):
        """The structured result from one eager Tensor per graph output (a GradientTape keeps those)."""
        leaves, position = [], 0
        for template, count in self._output_leaves:
            if count is None:
                leaves.append(template)
                continue
            leaves.append(_leaf_from_tensors(template, tensors[position:position + count]))
            position += count
        return nest.pack_sequence_as(self._structured_outputs, leaves)

    def __call__(self, *args):
        """Run on the traced function's arguments; only tensors and arrays are fed.

        TypeError if they are not as many, or not of the dtypes and shapes, as
        the graph's inputs (a graph traced for int32 never runs on float32).
        """
        arrays = [input_array(a, self.backend) for a in flatten(list(args)) if is_input(a)]
        if len(arrays) != len(self.graph.inputs):
            raise TypeError(f"this concrete function of {self.graph.name} takes {len(self.graph.inputs)} "
                            f"tensor arguments, got {len(arrays)}")
        for position, (array, value) in enumerate(zip(arrays, self.graph.inputs)):
            dtype, shape = dtypes.as_dtype(np.dtype(array.dtype)), TensorShape(np.shape(array))
            if dtype is not value.dtype or not shape.is_subtype_of(value.shape):
                raise TypeError(f"tensor argument {position} of this concrete function of {self.graph.name} "
                                f"must be {value.dtype.name} of shape {value.shape}, got {dtype.name} of "
                                f"shape {shape}; call the Function itself to trace for new inputs")
        return self.run_flat(arrays)


def _leaf_from_tensors(template, parts):
    """One result of the traced function rebuilt from its graph outputs' eager Tensors."""
    if isinstance(template, AppendedList):
        return [eager(value) for value in parts[0]._numpy]
    return template.from_components(parts) if isinstance(template, CompositeTensor) else parts[0]


class AppendedList(CompositeTensor):
    """A returned Python list that a graph loop appended to: it comes back as a list of tensors.

    Inside the trace such a list travels as a TensorArray; the caller gets
    what the plain function would have returned, a Python list (so
    ``len(l)``, ``l[i]`` and ``autoloop.stack(l)`` work).
    """

    def __init__(self, array):
        self.array = array

    @classmethod
    def wrap(cls, leaf):
        return cls(leaf.array) if isinstance(leaf, TensorList) else leaf

    def components(self):
        return self.array.components()


def _one_tensor(outputs) -> Tensor:
    value = outputs[0]  # eager()'s rule, inlined: a call costs 0.06 µs of a 1.3 µs call
    if isinstance(value, np.ndarray) and not value.ndim:
        value = value[()]
    return Tensor(value)


def _first(results):
    return results[0]


def _same(result):
    return result
