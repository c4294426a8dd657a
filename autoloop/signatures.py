"""A concrete function's signature as TensorFlow prints it: its parameters, its output type, its captures.

    >>> print(f.get_concrete_function(constant([1., 2.]), 3))
    ConcreteFunction Input Parameters:
      x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=autoloop.float32, name=None)
      n (POSITIONAL_OR_KEYWORD): Literal[3]
    Output Type:
      TensorSpec(shape=(2,), dtype=autoloop.float32, name=None)
    Captures:
      None

A tensor prints as its `TensorSpec`, a Python value baked into the trace
as ``Literal[value]``, a tuple, list or dict as ``Tuple[...]``,
``List[...]``, ``Dict[['key', ...], ...]``. Values of ``*args`` are listed
one by one (``rest_0``, ``rest_1``, positional only) and ``**kwargs`` by
their names (keyword only), as TensorFlow lists them. Captured eager
tensors are constants of the graph, so the captures are None.
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

from autoloop.arguments import TensorSpec
from autoloop.control_flow.composite import CompositeTensor
from autoloop.tensor import Tensor


class Parameter(NamedTuple):
    """One parameter of a trace: its name, its kind (``POSITIONAL_OR_KEYWORD``, ...) and its value's
    structure (TensorSpecs where the trace had tensors, Python values where it baked them in)."""

    name: str
    kind: str
    value: object


def parameters(signature: inspect.Signature | None, args, kwargs) -> tuple:
    """The `Parameter`s of a trace whose function (of `signature`) was called as ``fn(*args, **kwargs)``;
    tensors among the arguments become their `TensorSpec`s."""
    args, kwargs = spec_structure(list(args)), spec_structure(dict(kwargs))
    try:
        bound = signature.bind(*args, **kwargs) if signature is not None else None
    except TypeError:  # a signature that does not describe the call (a callable object's wrapper)
        bound = None
    if bound is None or signature is None:  # its arguments by position and keyword
        return (tuple(Parameter(f"arg_{i}", "POSITIONAL_ONLY", v) for i, v in enumerate(args))
                + tuple(Parameter(k, "KEYWORD_ONLY", v) for k, v in kwargs.items()))
    kinds = {p.name: p.kind for p in signature.parameters.values()}
    var_positional = any(kinds[name] is inspect.Parameter.VAR_POSITIONAL and value
                         for name, value in bound.arguments.items())
    found = []
    for name, value in bound.arguments.items():
        kind = kinds[name]
        if kind is inspect.Parameter.VAR_POSITIONAL:
            found += [Parameter(f"{name}_{i}", "POSITIONAL_ONLY", item) for i, item in enumerate(value)]
        elif kind is inspect.Parameter.VAR_KEYWORD:
            found += [Parameter(key, "KEYWORD_ONLY", item) for key, item in value.items()]
        elif kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and var_positional:
            found.append(Parameter(name, "POSITIONAL_ONLY", value))  # *args follows: only by position
        else:
            found.append(Parameter(name, kind.name, value))
    return tuple(found)


def spec_structure(value):
    """`value` with each tensor replaced by its `TensorSpec` (tuples, lists and dicts rebuilt)."""
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(spec_structure(item) for item in value)
    if isinstance(value, list):
        return [spec_structure(item) for item in value]
    if isinstance(value, dict):
        return {key: spec_structure(item) for key, item in value.items()}
    return value


def type_text(value) -> str:
    """How TensorFlow names the type of `value` (a structure of TensorSpecs and Python values)."""
    if isinstance(value, TensorSpec):
        return repr(value)
    if isinstance(value, Tensor):
        return repr(TensorSpec(value.shape, value.dtype))
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return f"Tuple[{', '.join(type_text(item) for item in value)}]"
    if isinstance(value, list):
        return f"List[{', '.join(type_text(item) for item in value)}]"
    if isinstance(value, dict):
        return f"Dict[{', '.join(f'[{key!r}, {type_text(item)}]' for key, item in value.items())}]"
    if isinstance(value, CompositeTensor):  # TensorArraySpec(element_shape=(), dtype=...), SparseTensorSpec(...)
        shape = getattr(value, "element_shape", None)
        shape_text = f"element_shape={shape}" if shape is not None else f"shape={getattr(value, 'shape', None)}"
        return f"{type(value).__name__}Spec({shape_text}, dtype={getattr(value, 'dtype', None)!r})"
    return f"Literal[{value!r}]"


def pretty_text(parameters_of_trace, outputs) -> str:
    """The lines TensorFlow prints for one concrete function (without the ``ConcreteFunction`` prefix)."""
    lines = ["Input Parameters:"]
    lines += [f"  {p.name} ({p.kind}): {type_text(p.value)}" for p in parameters_of_trace]
    lines += ["Output Type:", f"  {type_text(spec_structure(outputs))}", "Captures:", "  None"]
    return "\n".join(lines)


def short_text(parameters_of_trace, outputs) -> str:
    """One line, as TensorFlow's ``repr`` of a concrete function has it: ``(x: TensorSpec(...)) -> ...``."""
    items, keyword_only = [], False
    for p in parameters_of_trace:
        if p.kind == "KEYWORD_ONLY" and not keyword_only:
            items.append("*")
            keyword_only = True
        items.append(f"{p.name}: {type_text(p.value)}")
    return f"({', '.join(items)}) -> {type_text(spec_structure(outputs))}"
