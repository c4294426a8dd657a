"""Applying an op: run its kernel now, or add a node to the graph being traced.

``apply("Add", [x, y])`` checks the inputs with the op's ``infer`` rule in
both modes, so an eager call and a traced call accept and reject the same
inputs and agree on the result's dtype and shape.

An eager op costs a few microseconds on top of its kernel: its input specs
come straight from the numpy values (`dtypes.from_numpy`,
`TensorShape.of_ints`), numpy's error state is set through a prebuilt value
(`autoloop.ops.error_state`), and a Python number next to a tensor becomes
a numpy scalar of the tensor's dtype directly where that is exactly what
the general conversion gives (`convert`).
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.errors import AutoloopError, InvalidArgumentError, OutOfScopeError
from autoloop.ir import context
from autoloop.ir.graph import Graph, Value, known_value as constant_value_of
from autoloop.ops import recording, registry
from autoloop.ops.error_state import ignore_errors, restore_errors
from autoloop.ops.location import format_location, user_location
from autoloop.ops.registry import Spec
from autoloop.shapes import TensorShape
from autoloop.tensor import NUMPY_VALUES, Tensor, eager, to_numpy_value
from autoloop.ir.graph import op_attrs_of


def apply(op_name: str, inputs, attrs=None, name=None, fold=True):
    """Apply op `op_name` to `inputs` (Tensors); returns a Tensor or a tuple.

    With `fold` False a traced node's outputs are never computed while
    tracing (an op that acts when it runs, without being an effect: TF1's
    ``Print``).
    """
    attrs = attrs or {}
    opdef = registry.get(op_name)
    graph = context.current_graph()
    if graph is None:
        return _apply_eagerly(opdef, inputs, attrs)
    return _add_to_graph(graph, opdef, inputs, attrs, name, fold)


def _apply_eagerly(opdef, inputs, attrs):
    if opdef.same_dtype_numpy is not None and not attrs:
        fast = _same_dtype_elementwise(opdef, inputs)
        if fast is not None:
            return fast
    specs = []
    for tensor in inputs:  # what infer knows of an eager tensor (each Python call here costs 0.06 µs)
        value = tensor._numpy
        dtype = dtypes.from_numpy(getattr(value, "dtype", None))
        specs.append(_eager_spec(tensor) if dtype is None else Spec(dtype, TensorShape.of_ints(value.shape), value))
    try:
        out_specs = opdef.infer(*specs, **attrs)
    except ValueError as error:  # bad shapes: what TensorFlow reports eagerly as InvalidArgumentError
        if isinstance(error, AutoloopError):
            raise
        raise InvalidArgumentError(f"{opdef.name}: {error}") from None
    result = _run_kernel(opdef, [spec.value for spec in specs], attrs)
    if isinstance(out_specs, Spec):
        outputs = _wrap(result, out_specs, opdef.name)
    else:
        outputs = tuple(_wrap(r, s, opdef.name) for r, s in zip(result, out_specs))
    return _recorded(opdef, attrs, inputs, outputs)


def _same_dtype_elementwise(opdef, inputs):
    """An element-wise op on numpy values of one dtype, each of one shape or a scalar; else None.

    Its rule could only say what numpy's kernel gives here (that dtype, or bool
    for a comparison, and that shape), so the specs and the rule are skipped:
    they are half an eager op's cost. tests/ops/test_eager_fast_path.py holds
    the two paths equal for every such op and dtype.
    """
    first = inputs[0]._numpy
    dtype = getattr(first, "dtype", None)
    if dtype not in opdef.same_dtype_numpy:
        return None
    values = [first]
    shape = first.shape
    for tensor in inputs[1:]:
        value = tensor._numpy
        if getattr(value, "dtype", None) is not dtype:
            return None
        if value.shape != shape:
            if value.shape and shape:
                return None  # broadcasting arrays: the rule checks the shapes
            shape = shape or value.shape
        values.append(value)
    result = _run_kernel(opdef, values, {})
    if isinstance(result, np.ndarray) and result.ndim == 0:
        result = result[()]
    elif not isinstance(result, NUMPY_VALUES):  # never for numpy's own kernels: the rule says the dtype
        spec = Spec(dtypes.from_numpy(dtype), TensorShape.of_ints(first.shape), first)
        return _recorded(opdef, {}, inputs, _wrap(result, opdef.infer(*[spec] * len(values)), opdef.name))
    return _recorded(opdef, {}, inputs, Tensor(result, name=opdef.name))


def _run_kernel(opdef, values, attrs):
    """`opdef`'s numpy kernel on `values`, numpy's error state set; failures reported as the op's."""
    token = ignore_errors()
    try:
        return opdef.kernel(*values, **attrs)
    except InvalidArgumentError as error:  # the kernel's own words, and the user's line
        raise type(error)(f"{error} (at {format_location(user_location())})") from None
    except AutoloopError:
        raise
    except (AssertionError, UnboundLocalError):
        raise
    except Exception as error:  # a numpy failure: report it as the op's
        raise InvalidArgumentError(f"{opdef.name}: {error}") from None
    finally:
        restore_errors(token)


def _recorded(opdef, attrs, inputs, outputs):
    """`outputs`, recorded on the GradientTapes that are recording."""
    if recording.anywhere() and recording.active():
        recording.record(opdef.name, attrs, tuple(inputs), outputs if isinstance(outputs, tuple) else (outputs,))
    return outputs


def _eager_spec(tensor: Tensor) -> Spec:
    """What `infer` knows of an eager tensor: its dtype, shape and value (`_apply_eagerly` builds the
    common case, a numpy value of a supported dtype, itself)."""
    return Spec(tensor.dtype, tensor.shape, tensor._numpy)


def _wrap(result, spec: Spec, op_name: str) -> Tensor:
    if spec.dtype is dtypes.variant:
        return Tensor(result, name=op_name)
    if isinstance(result, np.ndarray) and result.ndim == 0:
        result = result[()]
    elif not isinstance(result, NUMPY_VALUES):
        result = np.asarray(result, dtype=spec.dtype.as_numpy_dtype)[()]
    return Tensor(result, name=op_name)


def _add_to_graph(graph: Graph, opdef, inputs, attrs, name, fold=True):
    values = [graph_value(graph, t) for t in inputs]
    specs = [Spec(v.dtype, v.shape, constant_value_of(v)) for v in values]
    try:
        out_specs = opdef.infer(*specs, **attrs)
    except (TypeError, ValueError) as error:
        out_specs = _failing_when_run(opdef, specs, attrs, error)
        if out_specs is None:
            location = user_location()
            raise type(error)(f"{error} (in {opdef.name} at {format_location(location)})") from None
        fold = False
    single = isinstance(out_specs, Spec)
    out_specs = [out_specs] if single else list(out_specs)
    node = graph.add_node(opdef.name, values, attrs, [(s.dtype, s.shape) for s in out_specs],
                          location=user_location(), name=name)
    node.tuple_result = not single
    folded = _fold(opdef, specs, attrs, out_specs, single) if fold else [None] * len(out_specs)
    for value, spec, constant in zip(node.outputs, out_specs, folded):
        value.constant = spec.value if spec.value is not None else constant
    outputs = [Tensor(value=v) for v in node.outputs]
    return outputs[0] if single else tuple(outputs)


def _failing_when_run(opdef, specs, attrs, error):
    """The output specs of a node whose inputs' values, known while tracing, make its kernel fail
    (`error`, an `InvalidArgumentError`: an index out of range): as in TensorFlow, the node fails when
    the graph runs, if it runs at all (a result nobody uses is pruned). None for any other error."""
    if not isinstance(error, InvalidArgumentError) or all(s.value is None for s in specs):
        return None
    try:
        return opdef.infer(*[Spec(s.dtype, s.shape) for s in specs], **attrs)
    except (TypeError, ValueError):
        return None


_FOLD_LIMIT = 1000  # elements: shape arithmetic, not data


def _fold(opdef, specs, attrs, out_specs, single) -> list:
    """Output values computed while tracing, when every input is a small constant.

    Folding keeps shapes static through shape arithmetic (``range(size(x) + 1)``
    has a known length). A kernel that fails here is left to fail when the
    graph runs, where the error names the op and line as any run-time error.
    """
    none = [None] * len(out_specs)
    if opdef.stateful or not specs or any(s.value is None for s in specs):
        return none
    if any(s.dtype is dtypes.variant for s in list(specs) + out_specs):
        return none
    if sum(np.size(s.value) for s in specs) > _FOLD_LIMIT:
        return none
    try:
        with np.errstate(all="ignore"):
            result = opdef.kernel(*[s.value for s in specs], **attrs)
    except Exception:  # noqa: BLE001 - reported at run time instead, with the user's line
        return none
    results = [result] if single else list(result)
    folded = []
    for value, spec in zip(results, out_specs):
        value = np.asarray(value)
        if value.dtype != spec.dtype.as_numpy_dtype or not TensorShape(value.shape).is_subtype_of(spec.shape):
            return none  # never trust a fold that disagrees with the op's rule
        folded.append(value[()] if value.ndim == 0 else frozen(value))
    return folded


def frozen(array):
    """A read-only view of `array`: graph constants are shared by every run."""
    if isinstance(array, np.ndarray) and array.flags.writeable:
        array = array.view()
        array.setflags(write=False)
    return array


def graph_value(graph: Graph, tensor: Tensor) -> Value:
    """The value of `graph` standing for `tensor` (captured or made a constant)."""
    if tensor._value is not None:
        value = tensor._value
        if value.graph is graph:
            return value
        if value.graph.is_ancestor_of(graph):
            return graph.capture(value)
        raise OutOfScopeError(
            f"{tensor.name} belongs to another graph ({value.graph.name!r}) than the one being "
            f"built ({graph.name!r}): a tensor from one traced function cannot be used in "
            f"another; pass it in as an argument instead")
    return constant_node(graph, tensor._numpy)


def constant_node(graph: Graph, numpy_value, name=None) -> Value:
    if isinstance(numpy_value, np.ndarray | np.generic):
        dtype = dtypes.as_dtype(numpy_value.dtype)
        shape = TensorShape(np.shape(numpy_value))
    else:  # a TensorArray's list
        dtype, shape = dtypes.variant, TensorShape([])
    node = graph.add_node("Const", (), {"value": frozen(numpy_value)}, [(dtype, shape)], location=user_location(),
                          name=name)
    return node.outputs[0]


def constant_value(tensor):
    """The numpy value of an eager tensor, or of a symbolic one known while tracing."""
    if not isinstance(tensor, Tensor):
        return None
    if tensor._value is None:
        return tensor._numpy
    return constant_value_of(tensor._value)


def convert(value, dtype=None) -> Tensor:
    """`value` as a Tensor; Python and numpy values become eager constants.

    An object whose class defines ``_as_autoloop_tensor(self)`` converts
    through it (a TF1 variable gives a fresh read of its value).
    """
    as_tensor = getattr(type(value), "_as_autoloop_tensor", None)
    if as_tensor is not None:
        return convert(as_tensor(value), dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtype:
            raise TypeError(f"Expected a {dtype.name} tensor, got {value.dtype.name} tensor {value.name}")
        return value
    if dtype is not None:
        scalar = _python_scalar(value, dtype)
        if scalar is not None:
            return Tensor(scalar)
    if isinstance(value, list | tuple) and _holds_tensor(value):
        return _pack(value, dtype)
    return eager(to_numpy_value(value, dtype))


def _python_number_ranges() -> dict:
    """(Python type, DType) -> (lowest, highest) value that converts exactly by the numpy type's constructor.

    An int converts to an integer dtype in its range; an int or bool to a
    float dtype up to 2**53 (exact in a double, so rounded once, as
    ``astype`` rounds) within the dtype's range; a float to a float dtype
    within its range. Anything else (and every error) takes the general
    conversion.
    """
    ranges = {(bool, dtypes.bool_): (False, True)}
    for dtype in dtypes.SUPPORTED:
        if dtype.is_integer:
            ranges[int, dtype] = ranges[bool, dtype] = (dtype.min, dtype.max)
        elif dtype.is_floating:
            largest = float(np.finfo(dtype.as_numpy_dtype).max)
            ranges[float, dtype] = (-largest, largest)
            exact = min(2 ** 53, int(largest))
            ranges[int, dtype] = ranges[bool, dtype] = (-exact, exact)
    return ranges


_PYTHON_NUMBER_RANGES = _python_number_ranges()  # a table of constants, built once at import


def _python_scalar(value, dtype):
    """`value` (an int, float or bool) as a numpy scalar of `dtype`, exactly as `to_numpy_value` converts
    it, or None where the general conversion is needed (to convert or to raise)."""
    limits = _PYTHON_NUMBER_RANGES.get((type(value), dtype))
    if limits is None or not limits[0] <= value <= limits[1]:
        return None
    return dtype.as_numpy_dtype(value)


def _holds_tensor(value) -> bool:
    if isinstance(value, Tensor):
        return True
    return isinstance(value, list | tuple) and any(_holds_tensor(item) for item in value)


def _pack(items, dtype):
    """A list mixing tensors and numbers, stacked into one tensor (TensorFlow's auto-packing).

    Numbers take the dtype of the tensors beside them: ``[x, 1]`` with ``x``
    float32 is float32.
    """
    from autoloop.ops.shape_ops import stack  # shape_ops builds on this module
    if dtype is None:
        dtype = next(leaf.dtype for leaf in _leaves(items) if isinstance(leaf, Tensor))
    return stack([convert(item, dtype) for item in items])


def _leaves(items):
    for item in items:
        if isinstance(item, list | tuple):
            yield from _leaves(item)
        else:
            yield item


def on_values(fn):
    """`fn`, a function of Tensors, as a function of graph Values (a callback for `autoloop.ir.rewrite`).

        >>> rewrite.add_loop_var(loop, zero, on_values(lambda count: count + 1))

    The callback runs while a sub-graph is being built; what `fn` returns
    becomes a value of that graph.
    """
    def on_graph_values(*values):
        result = fn(*[Tensor(value=v) for v in values])
        return graph_value(context.current_graph(), convert(result))
    on_graph_values.__name__ = getattr(fn, "__name__", "on_values")
    return on_graph_values


def infer_node(node):
    """``(dtype, shape)`` per output of `node`, re-derived by its op's rule (for the verifier)."""
    opdef = registry.get(node.op)
    attrs = op_attrs_of(node.attrs)
    specs = [Spec(v.dtype, v.shape, constant_value_of(v)) for v in node.inputs]
    if node.op == "Const":
        specs = []
    try:
        out = opdef.infer(*specs, **attrs)
    except (TypeError, ValueError) as error:  # a node that fails when it runs, as tracing made it
        out = _failing_when_run(opdef, specs, attrs, error)
        if out is None:
            raise
    out = [out] if isinstance(out, Spec) else out
    return [(s.dtype, s.shape) for s in out]


def verify(graph) -> None:
    """Check `graph` with the IR verifier and this op library's rules."""
    from autoloop.ir.verify import verify as verify_graph
    verify_graph(graph, infer_node)
