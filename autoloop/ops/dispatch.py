"""Applying an op: run its kernel now, or add a node to the graph being traced.

``apply("Add", [x, y])`` checks the inputs with the op's ``infer`` rule in
both modes, so an eager call and a traced call accept and reject the same
inputs and agree on the result's dtype and shape.
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.errors import AutoloopError, InvalidArgumentError
from autoloop.ir import context
from autoloop.ir.graph import Graph, Value
from autoloop.ops import registry
from autoloop.ops.location import format_location, user_location
from autoloop.ops.registry import Spec
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, eager, to_numpy_value


def apply(op_name: str, inputs, attrs=None, name=None):
    """Apply op `op_name` to `inputs` (Tensors); returns a Tensor or a tuple."""
    attrs = attrs or {}
    opdef = registry.get(op_name)
    graph = context.current_graph()
    if graph is None:
        return _apply_eagerly(opdef, inputs, attrs)
    return _add_to_graph(graph, opdef, inputs, attrs, name)


def _apply_eagerly(opdef, inputs, attrs):
    arrays = [t._numpy for t in inputs]
    specs = [Spec(t.dtype, t.shape, t._numpy) for t in inputs]
    out_specs = opdef.infer(*specs, **attrs)
    with np.errstate(all="ignore"):
        try:
            result = opdef.kernel(*arrays, **attrs)
        except AutoloopError:
            raise
        except (AssertionError, UnboundLocalError):
            raise
        except Exception as error:  # a numpy failure: report it as the op's
            raise InvalidArgumentError(f"{opdef.name}: {error}") from None
    if isinstance(out_specs, Spec):
        return _wrap(result, out_specs, opdef.name)
    return tuple(_wrap(r, s, opdef.name) for r, s in zip(result, out_specs))


def _wrap(result, spec: Spec, op_name: str) -> Tensor:
    if spec.dtype is dtypes.variant:
        return Tensor(result, name=op_name)
    if isinstance(result, np.ndarray) and result.ndim == 0:
        result = result[()]
    elif not isinstance(result, np.ndarray | np.generic):
        result = np.asarray(result, dtype=spec.dtype.as_numpy_dtype)[()]
    return Tensor(result, name=op_name)


def _add_to_graph(graph: Graph, opdef, inputs, attrs, name):
    values = [graph_value(graph, t) for t in inputs]
    specs = [Spec(v.dtype, v.shape, constant_value_of(v)) for v in values]
    try:
        out_specs = opdef.infer(*specs, **attrs)
    except (TypeError, ValueError) as error:
        location = user_location()
        raise type(error)(f"{error} (in {opdef.name} at {format_location(location)})") from None
    single = isinstance(out_specs, Spec)
    out_specs = [out_specs] if single else list(out_specs)
    node = graph.add_node(opdef.name, values, attrs, [(s.dtype, s.shape) for s in out_specs],
                          location=user_location(), name=name)
    for value, spec in zip(node.outputs, out_specs):
        value.constant = spec.value
    outputs = [Tensor(value=v) for v in node.outputs]
    return outputs[0] if single else tuple(outputs)


def graph_value(graph: Graph, tensor: Tensor) -> Value:
    """The value of `graph` standing for `tensor` (captured or made a constant)."""
    if tensor._value is not None:
        value = tensor._value
        if value.graph is graph:
            return value
        if value.graph.is_ancestor_of(graph):
            return graph.capture(value)
        raise ValueError(
            f"{tensor.name} belongs to another graph ({value.graph.name!r}) than the one being "
            f"built ({graph.name!r}): a tensor from one traced function cannot be used in "
            f"another; pass it in as an argument instead")
    return constant_node(graph, tensor._numpy)


def constant_node(graph: Graph, numpy_value) -> Value:
    if isinstance(numpy_value, np.ndarray | np.generic):
        dtype = dtypes.as_dtype(numpy_value.dtype)
        shape = TensorShape(np.shape(numpy_value))
    else:  # a TensorArray's list
        dtype, shape = dtypes.variant, TensorShape([])
    node = graph.add_node("Const", (), {"value": numpy_value}, [(dtype, shape)], location=user_location())
    return node.outputs[0]


def constant_value_of(value: Value):
    """The numpy value of `value` if it is known while tracing, else None."""
    if value.node.op == "Const":
        return value.node.attrs["value"]
    return value.constant


def constant_value(tensor):
    """The numpy value of an eager tensor, or of a symbolic one known while tracing."""
    if not isinstance(tensor, Tensor):
        return None
    if tensor._value is None:
        return tensor._numpy
    return constant_value_of(tensor._value)


def convert(value, dtype=None) -> Tensor:
    """`value` as a Tensor; Python and numpy values become eager constants."""
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtype:
            raise TypeError(f"Expected a {dtype.name} tensor, got {value.dtype.name} tensor {value.name}")
        return value
    return eager(to_numpy_value(value, dtype))
