"""Errors for Python code that needs a graph tensor's value while a function is traced.

A symbolic tensor has no value until its graph runs, so Python cannot index
a list with it or call ``.numpy()`` on it. The messages name the user's
expression and variables (read from the source the frame runs) and the fix:

    `xs[i]` at model.py:14: `i` is a graph tensor: its value is known only when the graph
    runs, so it cannot index the Python list `xs` while tracing. Make the list a tensor and
    gather from it: autoloop.gather(autoloop.constant(xs), i)
"""

from __future__ import annotations

import ast
import numbers

import numpy as np

from autoloop.errors import stopping_conversion
from autoloop.source_map import expression_at, format_location, location_of, user_frame


def index_error(tensor, frame) -> TypeError:
    """The error for a symbolic tensor used as a Python index (``xs[i]``) by code in `frame`."""
    frame = user_frame(frame)
    expression = expression_at(frame) if frame is not None else None
    where = format_location(location_of(frame)) if frame is not None else "<unknown>"
    if not isinstance(expression, ast.Subscript):
        return stopping_conversion(TypeError(
            f"a graph tensor ({tensor.name}, {tensor.dtype.name}) is used as a Python integer at {where}; "
            f"its value is known only when the graph runs. Use autoloop ops on the tensor instead "
            f"(autoloop.gather, autoloop.range, autoloop.zeros, ...), or pass a Python int"))
    container, index = ast.unparse(expression.value), ast.unparse(expression.slice)
    value = _lookup(expression.value, frame)
    kind = f"Python {type(value).__name__} " if value is not _UNKNOWN else ""
    plain = not isinstance(expression.slice, (ast.Slice, ast.Tuple))  # xs[i], not xs[i:j] or xs[i, j]
    what = f"`{index}` is a graph tensor" if plain else f"an index in `{index}` is a graph tensor"
    message = (f"`{container}[{index}]` at {where}: {what}: its value is known only when the graph runs, "
               f"so it cannot index the {kind}`{container}` while tracing")
    made = _as_tensor_expression(value, container)
    if made is None and value is _UNKNOWN:
        made = f"autoloop.constant({container})"
        message += f". If `{container}` is a list of numbers, make it a tensor and "
    elif made is not None:
        message += ". Make it a tensor and "
    if made is not None:
        message += (f"gather from it: autoloop.gather({made}, {index})" if plain else
                    f"index that: {made}[{index}]")
    return stopping_conversion(TypeError(message))


def value_error(tensor, frame) -> TypeError:
    """The error for ``.numpy()`` (or a conversion to a Python or numpy value) of a symbolic tensor."""
    frame = user_frame(frame)
    expression = expression_at(frame) if frame is not None else None
    location = location_of(frame) if frame is not None else None
    where = format_location(location)
    receiver = next((node.value for node in ast.walk(expression) if isinstance(node, ast.Attribute)
                     and node.attr == "numpy"), None) if expression is not None else None
    if receiver is not None:
        name = ast.unparse(receiver)
        return stopping_conversion(TypeError(
            f"`{name}.numpy()` at {where}: `{name}` is a graph tensor while the function is traced, so it "
            f"has no value yet (it gets one each time the graph runs). Use `{name}` itself (ops take "
            f"tensors), return it to get its value, or print it when the graph runs with "
            f"autoloop.print({name})"))
    return stopping_conversion(TypeError(
        f"a graph tensor ({tensor.name}, {tensor.dtype.name}) is converted to a Python or numpy value at "
        f"{where}, but it has no value while the function is traced (it gets one each time the graph "
        f"runs). Compute with autoloop ops on the tensor instead, return it to get its value, or print "
        f"it when the graph runs with autoloop.print"))


def escaped_error(tensor) -> AttributeError | None:
    """The error for ``.numpy()`` of a graph tensor whose trace has ended (kept in a list or an
    attribute while the function was traced), or None while its graph is still being built or it
    belongs to a TF1 graph. An AttributeError, as TensorFlow raises for its graph tensors."""
    from autoloop.ir import context
    graph = tensor.graph
    while graph.parent is not None:
        graph = graph.parent
    if getattr(graph, "tf1_style", False) or context.is_being_built(graph):
        return None
    return AttributeError(
        f"{tensor.name} is a graph tensor of the trace of {graph.name}, which has ended: it escaped the "
        f"trace (kept in a Python list, attribute or closure) and never has a value, so it has no numpy(). "
        f"Return it from the function to get its value on every call", name="numpy", obj=tensor)


_UNKNOWN = object()


def _lookup(node, frame):
    """The value a plain name holds in `frame`, or _UNKNOWN (anything else is not evaluated)."""
    if not isinstance(node, ast.Name):
        return _UNKNOWN
    for namespace in (frame.f_locals, frame.f_globals, frame.f_builtins):
        if node.id in namespace:
            return namespace[node.id]
    return _UNKNOWN


def _as_tensor_expression(value, text):
    """``autoloop.constant(xs)`` or ``autoloop.stack(xs)`` when that makes `value` a tensor, else None."""
    from autoloop.tensor import Tensor
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return f"autoloop.constant({text})"
    if not isinstance(value, (list, tuple)) or not value:
        return None
    if all(isinstance(item, numbers.Real) for item in value):
        return f"autoloop.constant({text})"
    if all(isinstance(item, Tensor) for item in value) and len({(t.dtype, str(t.shape)) for t in value}) == 1:
        return f"autoloop.stack({text})"
    return None
