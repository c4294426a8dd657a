"""TF1's spellings of autoloop's ops: ``random_uniform``, ``to_float``, ``div``, ``keep_dims=``, ...

Each is a thin wrapper that maps TF1's argument names and conventions onto
the autoloop op, so TF1 code runs unchanged under ``import
autoloop.compat.v1 as tf``:

    tf.reduce_sum(x, reduction_indices=[1], keep_dims=True)   # reduce_sum(x, axis=[1], keepdims=True)
    tf.div(7, 2)                                              # 3: Python 2's division, floor for integers
"""

from __future__ import annotations

import contextlib

from autoloop import dtypes
from autoloop.compat.v1.graph import get_default_graph, no_op
from autoloop.ir import context
from autoloop.ops import graph_building, math_ops, random_ops, reduction_ops
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.shapes import as_shape


# -- random numbers -----------------------------------------------------------------------------
def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """TF1's name of `autoloop.random.uniform`."""
    return random_ops.uniform(shape, minval, maxval, dtype=dtype, seed=seed, name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """TF1's name of `autoloop.random.normal`."""
    return random_ops.normal(shape, mean, stddev, dtype=dtype, seed=seed, name=name)


def set_random_seed(seed):
    """TF1's name of `autoloop.random.set_seed`."""
    random_ops.set_seed(seed)


# -- casts and arithmetic ---------------------------------------------------------------------
def _cast_to(dtype, public_name):
    def cast(x, name=None):
        return math_ops.cast(x, dtype, name=name)
    cast.__name__ = public_name
    cast.__doc__ = f"`x` cast to {dtype.name} (TF1's ``{public_name}``)."
    return cast


to_float = _cast_to(dtypes.float32, "to_float")
to_double = _cast_to(dtypes.float64, "to_double")
to_int32 = _cast_to(dtypes.int32, "to_int32")
to_int64 = _cast_to(dtypes.int64, "to_int64")


def div(x, y, name=None):
    """TF1's ``div``: Python 2's division, floor division for integers and true division for floats.

        >>> div(7, 2).numpy(), div(7., 2.).numpy()
        (3, 3.5)
    """
    x, y = math_ops.binary_inputs(x, y)
    if x.dtype.is_integer:
        return math_ops.floordiv(x, y, name=name)
    return math_ops.divide(x, y, name=name)


def arg_max(input, dimension=None, name=None, output_type=dtypes.int64):  # noqa: A002 - TF's names
    """TF1's name of `argmax` (``dimension`` is ``axis``)."""
    return reduction_ops.argmax(input, dimension, output_type=output_type, name=name)


def arg_min(input, dimension=None, name=None, output_type=dtypes.int64):  # noqa: A002
    """TF1's name of `argmin` (``dimension`` is ``axis``)."""
    return reduction_ops.argmin(input, dimension, output_type=output_type, name=name)


def _tf1_reduction(reduce):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        if axis is not None and reduction_indices is not None:
            raise ValueError(f"{reduce.__name__}: give axis or reduction_indices (its TF1 name), not both")
        if keepdims is not None and keep_dims is not None:
            raise ValueError(f"{reduce.__name__}: give keepdims or keep_dims (its TF1 name), not both")
        axis = axis if axis is not None else reduction_indices
        keepdims = keepdims if keepdims is not None else bool(keep_dims)
        return reduce(input_tensor, axis=axis, keepdims=keepdims, name=name)
    fn.__name__ = reduce.__name__
    fn.__doc__ = f"{reduce.__doc__} TF1's ``reduction_indices`` and ``keep_dims`` are accepted."
    return fn


reduce_sum = _tf1_reduction(reduction_ops.reduce_sum)
reduce_prod = _tf1_reduction(reduction_ops.reduce_prod)
reduce_mean = _tf1_reduction(reduction_ops.reduce_mean)
reduce_max = _tf1_reduction(reduction_ops.reduce_max)
reduce_min = _tf1_reduction(reduction_ops.reduce_min)
reduce_any = _tf1_reduction(reduction_ops.reduce_any)
reduce_all = _tf1_reduction(reduction_ops.reduce_all)


# -- variables as module functions -----------------------------------------------------------
def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """``ref.assign(value)``: TF1's module-level spelling."""
    return ref.assign(value, name=name)


def assign_add(ref, value, use_locking=None, name=None):
    """``ref.assign_add(value)``."""
    return ref.assign_add(value, name=name)


def assign_sub(ref, value, use_locking=None, name=None):
    """``ref.assign_sub(value)``."""
    return ref.assign_sub(value, name=name)


def trainable_variables(scope=None):
    """The variables of the default graph made with ``trainable=True``, in the order they were made.

    `scope` keeps those whose name starts with it.
    """
    return [v for v in get_default_graph().variables.values()
            if v.trainable and (scope is None or v.name.startswith(scope))]


# -- graph building ------------------------------------------------------------------------------
@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """TF1's ``name_scope(name, default_name=None, values=None)``: `default_name` when `name` is None.

    Neither given resets to the root, like ``name_scope("")``.
    """
    if name is None:
        name = default_name if default_name is not None else ""
    with graph_building.name_scope(name) as prefix:
        yield prefix


def _with_default_infer(value, shape):
    if not value.shape.is_compatible_with(shape):
        raise ValueError(f"placeholder_with_default: the default value has shape {value.shape}, which does not "
                         f"fit the shape {shape}")
    return Spec(value.dtype, shape)


def _with_default_gradient(op, grad):
    return [grad]


register(OpDef("PlaceholderWithDefault", kernel=lambda value, shape: value, infer=_with_default_infer,
               gradient=_with_default_gradient, kernels={"jax": lambda value, shape: value}))


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's name
    """`input`, unless the Session is given another value for it in ``feed_dict``.

    `shape` may be less specific than `input`'s (``[None]``): then code
    built on it cannot rely on the default's shape.
    """
    if context.current_graph() is None:
        return convert(input)
    return apply("PlaceholderWithDefault", [convert(input)], {"shape": as_shape(shape)},
                 name=name or "PlaceholderWithDefault", fold=False)


__all__ = ["GraphKeys", "get_collection", "local_variables", "local_variables_initializer", "tables_initializer",
           "arg_max", "arg_min", "assign", "assign_add", "assign_sub", "div", "name_scope",
           "placeholder_with_default", "random_normal", "random_uniform", "reduce_all", "reduce_any", "reduce_max",
           "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "set_random_seed", "to_double", "to_float",
           "to_int32", "to_int64", "trainable_variables"]


# -- collections and initializers of TF1 training code -------------------------------------------
class GraphKeys:
    """The names of TF1's standard collections that `get_collection` knows."""

    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"


def get_collection(key, scope=None) -> list:
    """The variables of a standard collection (`GraphKeys`), those whose name starts with `scope` if given.

    autoloop keeps no other collections: another key is a NotImplementedError.
    """
    if key == GraphKeys.GLOBAL_VARIABLES:
        return [v for v in get_default_graph().variables.values() if scope is None or v.name.startswith(scope)]
    if key == GraphKeys.TRAINABLE_VARIABLES:
        return trainable_variables(scope)
    if key == GraphKeys.LOCAL_VARIABLES:
        return []
    raise NotImplementedError(f"get_collection({key!r}): autoloop keeps only the GraphKeys.GLOBAL_VARIABLES, "
                              f"TRAINABLE_VARIABLES and LOCAL_VARIABLES collections; keep your own list instead")


def local_variables() -> list:
    """TF1's local variables: autoloop makes none, so always empty."""
    return []


def local_variables_initializer():
    """An op that does nothing (there are no local variables); None eagerly."""
    return no_op(name="init_1")


def tables_initializer(name="init_all_tables"):
    """An op that does nothing (autoloop has no lookup tables); None eagerly."""
    return no_op(name=name)
