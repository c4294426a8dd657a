"""What a call's arguments become: graph inputs (arrays) and the key that selects a trace.

One rule for every argument, applied by `trace_key` (the short path of
`Function.__call__`, `short_key`, is a cache in front of it for the common
call of tensors and Python numbers):

- a tensor, numpy array or JAX array is a graph input, keyed by dtype and
  shape; a `TensorSpec` stands for an input of a dtype and shape without a
  value (an ``input_signature``);
- lists, tuples, dicts and namedtuples are opened (`nest`), and so are
  *records*, a dataclass or an attrs-style object (its class has
  ``__attrs_attrs__``): keyed by their type and fields, each field keyed by
  this same rule, so tensors among them are inputs like any nest's;
- a Python number, string, ``None``, enum member or other hashable value
  with its own ``==`` is keyed by value (a new value retraces), as a dict
  key is: such a value must not change while it is one (Python's rule);
- functions, classes and modules are keyed by identity;
- any other object is keyed by identity *and* by a snapshot of its
  attributes (``vars(obj)`` and slots, recursively: Python values by value,
  numpy arrays by content, tensors by identity), so one mutated between
  calls traces anew, never reuses a stale trace. The key holds the object
  itself, so the cache entry keeps it alive: a new object can never reuse a
  freed one's address and with it the freed one's trace.

    >>> @dataclasses.dataclass
    ... class Config:
    ...     scale: float
    ...     steps: int
    >>> trace_key([[Config(2.0, 3)], {}], False)[0]   # ('record', Config, ('scale', 'steps')), ('py', float, 2.0), ...
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import inspect
import sys
import types
from typing import Any

import numpy as np

from autoloop import dtypes, nest
from autoloop.shapes import TensorShape, as_shape
from autoloop.tensor import Tensor, eager, to_numpy_value


class TensorSpec:
    """A shape and dtype template: ``TensorSpec([None, 3], float32)``."""

    def __init__(self, shape: Any, dtype: dtypes.DTypeLike = dtypes.float32, name: str | None = None):
        self.shape = as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)

    def is_compatible_with(self, value) -> bool:
        return value.dtype is self.dtype and self.shape.is_compatible_with(value.shape)

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"


def name_of(fn) -> str:
    """A name for messages: any callable may be traced, not only functions with a ``__name__``."""
    return getattr(fn, "__name__", None) or type(fn).__name__


def signature_of(fn):
    """`fn`'s `inspect.Signature`, or None for a callable that has none (a builtin)."""
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def input_names(signature, arguments) -> list[str]:
    """The name of each leaf of ``arguments`` (``[args, kwargs]`` as bound), in `flatten` order: the
    parameter it was passed for (``*args`` entries take the var-positional name), as graph inputs are named.

    >>> input_names(inspect.signature(lambda x, pair: 0), [[1, (2, 3)], {}])
    ['x', 'pair', 'pair']
    """
    args, kwargs = arguments
    parameters = [] if signature is None else list(signature.parameters.values())
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rest = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), "arg")
    names = [positional[k] if k < len(positional) else rest for k in range(len(args))]
    named = [[map_leaves(lambda _, name=name: name, value) for name, value in zip(names, args)],
             {key: map_leaves(lambda _, key=key: key, value) for key, value in kwargs.items()}]
    return flatten(named)


def defaults_are_python(signature) -> bool:
    """Whether no default of `signature` is a graph input (then a call's positional arguments alone
    select its trace: `Function`'s short path)."""
    if signature is None:
        return False
    return not any(is_input(p.default) for p in signature.parameters.values())


def is_input(leaf) -> bool:
    """Whether `leaf` becomes a graph input (a tensor, an array, a spec) rather than part of the key."""
    return isinstance(leaf, Tensor | np.ndarray | TensorSpec) or is_jax_array(leaf)


def is_jax_array(leaf) -> bool:
    """A JAX array (only possible once JAX is imported, so JAX is never imported here)."""
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(leaf, jax.Array)


def input_array(leaf, backend="numpy"):
    """`leaf` as the executor takes it: numpy values, or for backend jax also JAX arrays as they are
    (on their device, maybe sharded)."""
    if isinstance(leaf, Tensor):
        value = leaf.numpy()
        return plain_for(backend, value) if type(value) is not np.ndarray else value
    if isinstance(leaf, TensorSpec):
        raise TypeError("a TensorSpec describes an input; call with a tensor or array of that spec")
    if is_jax_array(leaf):
        dtypes.as_dtype(np.dtype(leaf.dtype))  # TypeError for a dtype autoloop does not support
        return leaf if backend == "jax" else np.asarray(leaf)
    array = np.asarray(leaf)
    dtypes.as_dtype(array.dtype)  # TypeError for a dtype autoloop does not support
    return array[()] if array.ndim == 0 else array


def plain_for(backend: str, value):
    """`value` as `backend` takes it: XLA takes plain arrays (an ndarray subclass passes its data), and
    no masked array, whose mask it would drop."""
    if backend != "jax" or not isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError("a masked array cannot be an argument of a backend='jax' function: XLA has no masks. "
                        "Pass its values (array.filled(fill_value)), or use backend='numpy'")
    return np.asarray(value)


def short_key(args, device_array_types):
    """The key of a call whose arguments are all eager tensors over ndarrays or numpy scalars, arrays of
    `device_array_types` (the backend's own, passed as they are), or Python numbers, strings or None:
    ``(key, arrays)``, or None for any other call.

    This is the short path's key, a cache in front of `trace_key`'s: (dtype, shape) per array, the scalar's
    type (its dtype; shape ()) per numpy scalar, the abstract value (dtype, shape, weak type, sharding: finer
    than (dtype, shape)) per device array, and (type, value) per Python value. Each selects the trace that
    `trace_key` selects for the same call, so a cache keyed by it is sound.
    """
    if len(args) == 1:  # the commonest call, one tensor, without the loop's lists
        arg = args[0]
        if type(arg) is Tensor:
            value = arg._numpy
            kind = type(value)
            if kind is _ndarray:
                return ((value.dtype, value.shape),), (value,)
            return ((kind,), (value,)) if kind in _SCALAR_TYPES else None
    key, arrays = [], []
    for arg in args:
        kind = type(arg)
        if kind is Tensor:
            value = arg._numpy
            kind = type(value)
            if kind is _ndarray:
                key.append((value.dtype, value.shape))
            elif kind in _SCALAR_TYPES:
                key.append(kind)
            else:  # a symbolic tensor (no value), a TensorArray's list, an ndarray subclass
                return None
            arrays.append(value)
        elif kind in _PYTHON_CONSTANTS:
            key.append((kind, arg))  # baked into the trace, as trace_key has it
        elif kind in device_array_types:
            key.append(arg.aval)
            arrays.append(arg)
        else:
            return None
    return tuple(key), arrays


def trace_key(arguments, reduce_retracing, backend="numpy", key_inputs=True):
    """``(key, arrays, specs)`` of a call's bound `arguments` (see the module docstring for the rule): the
    trace key, the inputs as `backend` takes them, and the (dtype, shape) each graph input is traced with.

    Every dimension is unknown under `reduce_retracing`; with `key_inputs` False (one trace for an
    ``input_signature``) an input's dtype and shape are left out of the key.
    """
    key, arrays, specs = [], [], []

    def visit(value):
        if isinstance(value, TensorSpec):
            key.append(("spec", value.dtype, value.shape) if key_inputs else ("input",))
            specs.append((value.dtype, value.shape))
            return
        if is_input(value):
            if isinstance(value, Tensor) and value.is_symbolic:
                raise TypeError(f"{value.name} is a symbolic tensor of another trace; pass eager values")
            array = input_array(value, backend)
            dtype = dtypes.as_dtype(np.dtype(array.dtype))
            shape = TensorShape(np.shape(array))
            if reduce_retracing:
                shape = TensorShape([None] * shape.rank)
            key.append((dtype, shape) if key_inputs else ("input",))
            specs.append((dtype, shape))
            arrays.append(array)
            return
        parts = _parts(value)
        if parts is None:
            key.append(python_key(value))
            return
        key.append(parts[0])
        for child in parts[1]:
            visit(child)

    visit(arguments)
    return tuple(key), arrays, specs


def _parts(value):
    """``(shape_key, children)`` of a structure an argument key opens (a nest or a record), else None."""
    if nest.is_nested(value):
        if isinstance(value, dict):
            keys = nest.sorted_keys(value)
            return (type(value), tuple(keys)), [value[k] for k in keys]
        return (type(value), len(value)), list(value)
    fields = record_fields(value)
    if fields is None:
        return None
    return ("record", type(value), fields), [getattr(value, name) for name in fields]


def record_fields(value) -> tuple | None:
    """The field names of a record (a dataclass or attrs-style instance), or None for any other value."""
    kind = type(value)
    if dataclasses.is_dataclass(kind):
        return tuple(field.name for field in dataclasses.fields(kind))
    attributes = getattr(kind, "__attrs_attrs__", None)
    if attributes is not None:
        return tuple(attribute.name for attribute in attributes)
    return None


def flatten(arguments) -> list:
    """The leaves of `arguments` as `trace_key` walks them: `nest`'s, with records opened into fields."""
    parts = _parts(arguments)
    if parts is None:
        return [arguments]
    return [leaf for child in parts[1] for leaf in flatten(child)]


def map_leaves(fn, arguments):
    """`arguments` with each leaf (as `flatten` finds them) replaced by ``fn(leaf)``.

    A record whose fields change is a shallow copy with the new fields (set as `object.__setattr__` sets
    them, so frozen dataclasses and slotted classes work); the caller's object is left as it was.
    """
    if nest.is_nested(arguments):
        return nest.rebuild(arguments, [map_leaves(fn, child) for child in nest.children(arguments)])
    fields = record_fields(arguments)
    if fields is None:
        return fn(arguments)
    old = [getattr(arguments, name) for name in fields]
    new = [map_leaves(fn, value) for value in old]
    if all(a is b for a, b in zip(old, new)):
        return arguments
    record = copy.copy(arguments)
    for name, value in zip(fields, new):
        object.__setattr__(record, name, value)
    return record


class _Held:
    """An object in a trace key by identity: equal only to itself, and kept alive by the key (so no new
    object at a freed one's address can reuse its trace)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return type(other) is _Held and other.value is self.value

    def __hash__(self):
        return id(self.value)


def python_key(value, ancestors=()):
    """A Python argument's part of the key (not a tensor, nest or record): see the module docstring.

    `ancestors` are the objects and containers whose snapshot is being taken around this one: a cycle
    is keyed by identity where it closes.
    """
    kind = type(value)
    if kind in _PYTHON_CONSTANTS or isinstance(value, enum.Enum | np.generic):
        return ("py", kind, value)
    if isinstance(value, _CODE) or kind.__module__.startswith("autoloop."):
        # Code, not configuration; or autoloop's own objects (a Variable is read when the graph runs; what
        # an eager assign returns stands for its variable, keyed as that variable).
        return ("py-id", _Held(getattr(value, "_variable", value)))
    try:
        hash(value)
        hashable = True
    except TypeError:
        hashable = False
    if hashable and kind.__eq__ is not object.__eq__:  # a value with its own ==: a number, frozenset, ...
        return ("py", kind, value)
    if isinstance(value, set | bytearray):
        return ("py", kind, bytes(value) if isinstance(value, bytearray) else frozenset(value))
    if any(value is ancestor for ancestor in ancestors):
        return ("py-id", _Held(value))
    return ("py-id", _Held(value), _snapshot(value, ancestors + (value,)))


def _snapshot(value, ancestors) -> tuple:
    """The attributes of a plain object (``vars`` and slots), each keyed by `_state_key`."""
    state = getattr(value, "__dict__", None)
    items = list(state.items()) if isinstance(state, dict) else []
    for kind in type(value).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                items.append((name, getattr(value, name)))
    return tuple((name, _state_key(item, ancestors)) for name, item in items)


def _state_key(value, ancestors):
    """One attribute's part of a snapshot: Python values by value, numpy arrays by content, tensors by
    identity (an eager tensor never changes), containers and records item by item, objects by
    `python_key` (a snapshot of theirs in turn)."""
    if isinstance(value, Tensor) or is_jax_array(value):
        return ("tensor", _Held(value))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, list | tuple | dict) or record_fields(value) is not None:
        if any(value is ancestor for ancestor in ancestors):
            return ("cycle", _Held(value))
        inner = ancestors + (value,)
        if isinstance(value, dict):
            return (type(value),) + tuple((python_key(k), _state_key(v, inner)) for k, v in value.items())
        shape, children = _parts(value)
        return (shape,) + tuple(_state_key(child, inner) for child in children)
    return python_key(value, ancestors)


def check_signature(signature, args, fn) -> tuple:
    """`args` checked against `signature`: a tuple of tensors (or TensorSpecs).

    Python numbers, lists and numpy arrays are converted to the dtype of
    their spec, as TensorFlow does (``f(3)`` for ``TensorSpec([], int32)``);
    TypeError for an argument that does not fit its spec.
    """
    name = name_of(fn)
    if len(args) != len(signature):
        raise TypeError(f"{name}() has input_signature of {len(signature)} tensors but was "
                        f"called with {len(args)} arguments")
    checked: list = []
    for position, (spec, arg) in enumerate(zip(signature, args)):
        if isinstance(arg, TensorSpec):
            checked.append(arg)
            continue
        if isinstance(arg, Tensor):
            value = arg
        else:
            try:
                value = eager(to_numpy_value(arg, spec.dtype))
            except (TypeError, ValueError) as error:
                raise TypeError(f"{name}() argument {position} does not match its input_signature: "
                                f"expected {spec}, got {arg!r} ({error})") from None
        if value.dtype is not spec.dtype or not spec.shape.is_compatible_with(value.shape):
            raise TypeError(f"{name}() argument {position} does not match its input_signature: "
                            f"expected {spec}, got {value.dtype.name} tensor of shape {value.shape}")
        checked.append(value)
    return tuple(checked)


_ndarray = np.ndarray  # one global read in the short path, not np's module dictionary too
_SCALAR_TYPES = frozenset(dtype.as_numpy_dtype for dtype in dtypes.SUPPORTED)  # numpy scalar types, keyed alone
_PYTHON_CONSTANTS = frozenset((int, float, bool, str, type(None)))  # Python arguments keyed by value
# Keyed by identity alone: code, not configuration (a snapshot of a module's namespace would be costly).
_CODE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type,
         types.BuiltinMethodType)
