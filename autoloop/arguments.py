"""What a call's arguments become: graph inputs (arrays) and the key that selects a trace.

Tensors, numpy arrays and JAX arrays are inputs, keyed by dtype and shape
(`signature_key`); any other Python value is part of the key by value (or,
unhashable, by identity) and is baked into the trace. `TensorSpec` stands
for an input of a dtype and shape without a value (an ``input_signature``).
"""

from __future__ import annotations

import inspect
import sys

import numpy as np

from autoloop import dtypes, nest
from autoloop.shapes import TensorShape, as_shape
from autoloop.tensor import Tensor, eager, to_numpy_value


class TensorSpec:
    """A shape and dtype template: ``TensorSpec([None, 3], float32)``."""

    def __init__(self, shape, dtype=dtypes.float32, name=None):
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
    """The name of each leaf of ``arguments`` (``[args, kwargs]`` as bound), in `nest.flatten` order: the
    parameter it was passed for (``*args`` entries take the var-positional name), as graph inputs are named.

    >>> input_names(inspect.signature(lambda x, pair: 0), [[1, (2, 3)], {}])
    ['x', 'pair', 'pair']
    """
    args, kwargs = arguments
    parameters = [] if signature is None else list(signature.parameters.values())
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rest = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), "arg")
    names = [positional[k] if k < len(positional) else rest for k in range(len(args))]
    named = [[nest.map_structure(lambda _, name=name: name, value) for name, value in zip(names, args)],
             {key: nest.map_structure(lambda _, key=key: key, value) for key, value in kwargs.items()}]
    return nest.flatten(named)


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


def signature_key(leaves, reduce_retracing, backend="numpy"):
    """``(key, arrays, specs)`` of a call's flattened arguments: the trace key (dtype and shape per
    input, with every dimension unknown under `reduce_retracing`; `python_key` per other value), the
    inputs as `backend` takes them, and the (dtype, shape) each graph input is traced with."""
    key, arrays, specs = [], [], []
    for leaf in leaves:
        if isinstance(leaf, TensorSpec):
            key.append(("spec", leaf.dtype, leaf.shape))
            specs.append((leaf.dtype, leaf.shape))
            continue
        if is_input(leaf):
            if isinstance(leaf, Tensor) and leaf.is_symbolic:
                raise TypeError(f"{leaf.name} is a symbolic tensor of another trace; pass eager values")
            array = input_array(leaf, backend)
            dtype = dtypes.as_dtype(np.dtype(array.dtype))
            shape = TensorShape(np.shape(array))
            if reduce_retracing:
                shape = TensorShape([None] * shape.rank)
            key.append((dtype, shape))
            specs.append((dtype, shape))
            arrays.append(array)
            continue
        key.append(python_key(leaf))
    return tuple(key), arrays, specs


def python_key(value):
    """A Python argument's part of the key: by value, or by identity if it cannot be hashed."""
    try:
        hash(value)
        return ("py", type(value), value)
    except TypeError:
        return ("py-id", type(value), id(value))


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
    checked = []
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
