"""`ConcreteFunction`: one trace of a `Function`, its graph compiled for a backend and called on arrays.

Its `run_flat` runs the compiled graph on input arrays and packs the
structured result the traced Python function returned: eager Tensors (or a
backend's arrays with ``jax_arrays=True``), composites rebuilt from their
parts, an appended Python list as a list.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autoloop import dtypes, nest, signatures
from autoloop.arguments import TensorSpec, flatten, input_array, is_input
from autoloop.backends import compiler_for
from autoloop.control_flow.array_elements import ArrayElements
from autoloop.control_flow.composite import CompositeTensor
from autoloop.errors import InputMismatchError
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
        self.parameters: tuple = ()  # the trace's `autoloop.signatures.Parameter`s, set by the Function that traced it
        # Variables whose reads are graph inputs after the arguments' (a trace for eager GradientTapes,
        # `autoloop.autodiff.tape.CallPoints`)
        self.watched_variables: list = []

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
                one = Tensor.of_value if converted else eager
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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run on the traced function's arguments; only tensors and arrays are fed.

        Keyword arguments name the traced function's parameters, as in
        TensorFlow. TypeError if they are not as many, or not of the dtypes
        and shapes, as the graph's inputs (a graph traced for int32 never runs
        on float32).
        """
        self._check_python_values(args, kwargs)
        if kwargs:
            args = self._in_parameter_order(args, kwargs)
        arrays = [input_array(a, self.backend) for a in flatten(list(args)) if is_input(a)]
        if len(arrays) != len(self.graph.inputs):
            raise TypeError(f"this concrete function of {self.graph.name} takes {len(self.graph.inputs)} "
                            f"tensor arguments, got {len(arrays)}")
        for position, (array, value) in enumerate(zip(arrays, self.graph.inputs)):
            dtype, shape = dtypes.as_dtype(np.dtype(array.dtype)), TensorShape(np.shape(array))
            if dtype is not value.dtype or not shape.is_subtype_of(value.shape):
                raise InputMismatchError(f"tensor argument {position} of this concrete function of {self.graph.name} "
                                f"must be {value.dtype.name} of shape {value.shape}, got {dtype.name} of "
                                f"shape {shape}; call the Function itself to trace for new inputs")
        return self.run_flat(arrays)

    def _check_python_values(self, args, kwargs) -> None:
        """TypeError if a Python value is given for a parameter the trace baked another value into
        (``square = pow.get_concrete_function(x, 2)`` then ``square(x, 3)``), as in TensorFlow.

        Tensors are fed in order whatever parameter they land on: ``evaluate(model, x)`` traced,
        its concrete function is called as ``concrete(x)`` (TensorFlow's flat call).
        """
        given = dict(zip((p.name for p in self.parameters), args)) | kwargs
        for parameter in self.parameters:
            traced = parameter.value
            if parameter.name not in given or isinstance(traced, TensorSpec | list | tuple | dict):
                continue
            value = given[parameter.name]
            if is_input(value):
                continue
            if not (type(value) is type(traced) and _same_python_value(value, traced)):
                raise TypeError(f"this concrete function of {self.graph.name} was traced with {parameter.name}="
                                f"{traced!r}, got {value!r}; call the Function itself to trace for other Python "
                                f"values")

    def _in_parameter_order(self, args, kwargs) -> tuple:
        """`args`, then the values of `kwargs` in the order of the parameters they name."""
        names = [p.name for p in self.parameters]
        unknown = sorted(set(kwargs) - set(names[len(args):]))
        if unknown:
            raise TypeError(f"this concrete function of {self.graph.name} got an unexpected keyword argument "
                            f"{unknown[0]!r}; its parameters are ({', '.join(names)})")
        return tuple(args) + tuple(kwargs[name] for name in names[len(args):] if name in kwargs)

    @property
    def structured_outputs(self):
        """What the traced Python function returned: symbolic tensors and Python values, nested."""
        return self._structured_outputs

    @property
    def structured_input_signature(self):
        """``(args, kwargs)`` of the trace: a `TensorSpec` for each tensor, Python values as they were."""
        def named(p):  # a tensor parameter's spec carries its name, as in TensorFlow
            return TensorSpec(p.value.shape, p.value.dtype, name=p.name) if isinstance(p.value, TensorSpec) else p.value
        args = tuple(named(p) for p in self.parameters if p.kind != "KEYWORD_ONLY")
        return args, {p.name: named(p) for p in self.parameters if p.kind == "KEYWORD_ONLY"}

    def pretty_printed_signature(self, verbose=True) -> str:
        """Its parameters, output type and captures, as TensorFlow prints them (`autoloop.signatures`)."""
        return signatures.pretty_text(self.parameters, self._structured_outputs)

    def __str__(self):
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self):
        return (f"<ConcreteFunction {signatures.short_text(self.parameters, self._structured_outputs)} "
                f"at 0x{id(self):X}>")


def _same_python_value(value, traced) -> bool:
    try:
        return bool(value == traced)
    except Exception:  # noqa: BLE001 - an object whose == is not a truth value: by identity
        return value is traced


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
