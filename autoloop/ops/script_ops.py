"""Python inside a graph: `py_function` and `numpy_function` (TensorFlow's escape hatches).

``py_function(func, inp, Tout)`` calls ``func`` on eager Tensors each time
the graph runs; ``numpy_function(func, inp, Tout)`` calls it on numpy
arrays. Eagerly both call ``func`` at once. Each run is an effect, ordered
with prints and assertions (`autoloop.ir.effects`) and never pruned;
``numpy_function(..., stateful=False)`` declares a pure function, which may
be pruned when its results are unused.

`Tout` is a dtype (one result) or a list of dtypes (a list of results);
a `TensorSpec` in its place also declares the result's shape. Without one
the shape is unknown, as in TensorFlow (``result.set_shape(...)`` narrows
it). The function's results are converted to the declared dtypes with
TensorFlow's conversion rules; a result of another numpy dtype is an
`InvalidArgumentError` naming the function, the result and both dtypes.

Gradients: ``py_function`` is differentiable where ``func`` is written
with autoloop ops — the backward pass calls ``func`` again under an eager
`GradientTape` (so a ``func`` with effects repeats them there).
``numpy_function`` has no gradient (None, as in TensorFlow).

    >>> @function
    ... def f(x):
    ...     return py_function(lambda t: t * 2, [x], float32)
    >>> f(constant(3.0)).numpy()
    np.float32(6.0)

On ``backend="jax"`` the call is a host callback: ``io_callback(...,
ordered=True)`` for a stateful function, ``pure_callback`` for a pure one
(`autoloop.backends.jax.kernels.effects`); XLA needs every result's shape
while compiling, so declare it there with a `TensorSpec` or ``set_shape``.
"""

from __future__ import annotations

import functools

import numpy as np

from autoloop import dtypes, nest
from autoloop.errors import InvalidArgumentError
from autoloop.ir import context
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, eager, to_numpy_value


class ResultTypes:
    """What `Tout` declares: one (dtype, shape) per result, and whether the call returns a bare value."""

    def __init__(self, Tout, caller: str):  # noqa: N803 - TensorFlow's argument name
        self.single = not isinstance(Tout, list | tuple)
        self.specs = tuple(_result_spec(item, caller) for item in ([Tout] if self.single else Tout))

    def __repr__(self):  # attrs are printed with the graph
        return repr([(dtype.name, str(shape)) for dtype, shape in self.specs])


def _result_spec(item, caller):
    shape = getattr(item, "shape", None)
    if shape is not None and not isinstance(item, np.dtype | type):  # a TensorSpec
        return dtypes.as_dtype(item.dtype), TensorShape(shape)
    try:
        return dtypes.as_dtype(item), TensorShape(None)
    except TypeError:
        raise TypeError(f"{caller}: Tout must be a dtype, a TensorSpec or a list of them, "
                        f"got {item!r}") from None


def _infer(*inputs, func, results, eager_inputs):
    specs = [Spec(dtype, shape) for dtype, shape in results.specs]
    return specs[0] if results.single else specs


def _call(arrays, func, results, eager_inputs) -> list:
    """Run `func` on the input arrays (Tensors for py_function, numpy arrays for numpy_function); one
    numpy value per declared result."""
    # Copies: func may change its arguments in place, and graph constants are shared by every run.
    args = [eager(np.array(a)) if eager_inputs else np.array(a) for a in arrays]
    with context.eager():  # a Session runs graphs while its TF1 graph is the default one
        returned = func(*args)
    return _results_of(returned, results, func)


def _results_of(returned, results, func, keep_tensors=False) -> list:
    """One value per declared result, from what `func` returned: a numpy value of the declared dtype,
    or with `keep_tensors` func's own Tensor where it already fits (an eager tape recorded it)."""
    values = [returned] if results.single else _as_list(returned, len(results.specs), func)
    found = []
    for position, (value, (dtype, shape)) in enumerate(zip(values, results.specs)):
        fits = isinstance(value, Tensor) and value.dtype is dtype and value.shape.is_subtype_of(shape)
        found.append(value if keep_tensors and fits else _checked_result(value, dtype, shape, position, func))
    return found


def _as_list(returned, count, func) -> list:
    values = [] if returned is None and count == 0 else returned
    if count == 1 and not isinstance(values, list | tuple):
        return [values]  # one result, returned bare: TensorFlow takes it
    if not isinstance(values, list | tuple) or len(values) != count:
        raise InvalidArgumentError(f"{_name(func)} must return {count} value(s), one per entry of Tout, "
                                   f"got {returned!r}")
    return list(values)


def _checked_result(value, dtype, shape, position, func):
    if isinstance(value, Tensor):
        value = value.numpy()
    try:
        array = np.asarray(to_numpy_value(value, dtype))
    except (TypeError, ValueError) as error:
        raise InvalidArgumentError(f"result {position} of {_name(func)} must be {dtype.name} as Tout "
                                   f"declares: {error}") from None
    if not TensorShape(array.shape).is_subtype_of(shape):
        raise InvalidArgumentError(f"result {position} of {_name(func)} has shape {array.shape}, but Tout "
                                   f"declares {shape}")
    return array


def _name(func) -> str:
    return getattr(func, "__name__", None) or repr(func)


def _kernel(*arrays, func, results, eager_inputs):
    values = _call(arrays, func, results, eager_inputs)
    return values[0] if results.single else tuple(values)


def _py_function_gradient(op, *output_grads):
    """Call func again on the forward inputs under an eager tape, seeded with the output gradients."""
    if not op.attrs["eager_inputs"]:
        return [None] * len(op.inputs)  # numpy_function: numpy code has no gradient
    differentiable = [spec.dtype.is_floating for spec in op.input_specs]
    if not any(differentiable):
        return [None] * len(op.inputs)
    grads = [grad if grad is not None else _zeros_like(output) for grad, output in zip(output_grads, op.outputs)]
    attrs = {"func": op.attrs["func"], "results": op.attrs["results"], "differentiable": tuple(differentiable)}
    computed = iter(nest.flatten(apply("PyFunctionGrad", list(op.inputs) + grads, attrs, fold=False)))
    return [next(computed) if flag else None for flag in differentiable]


def _zeros_like(tensor):
    from autoloop.ops.creation_ops import zeros_like
    return zeros_like(tensor)


def _gradient_infer(*specs, func, results, differentiable):
    inputs = specs[:len(differentiable)]
    return [Spec(spec.dtype, spec.shape) for spec, flag in zip(inputs, differentiable) if flag]


def _gradient_kernel(*arrays, func, results, differentiable):
    with context.eager():  # a Session runs graphs while its TF1 graph is the default one
        return _gradients_on_tape(arrays, func, results, differentiable)


def _gradients_on_tape(arrays, func, results, differentiable) -> tuple:
    from autoloop.autodiff import GradientTape
    inputs = [eager(np.array(a)) for a in arrays[:len(differentiable)]]
    seeds = [eager(np.asarray(a)) for a in arrays[len(differentiable):]]
    sources = [tensor for tensor, flag in zip(inputs, differentiable) if flag]
    with GradientTape() as tape:
        for tensor in sources:
            tape.watch(tensor)
        returned = func(*inputs)
    targets = _results_of(returned, results, func, keep_tensors=True)
    kept = [(t, s) for t, s in zip(targets, seeds) if isinstance(t, Tensor) and t.dtype.is_floating]
    grads = tape.gradient([t for t, _ in kept], sources, output_gradients=[s for _, s in kept],
                          unconnected_gradients="zero")
    return tuple(np.asarray(g.numpy(), dtype=s.dtype.as_numpy_dtype) for g, s in zip(grads, sources))


def _no_forward_mode(op, *tangents):
    """Forward mode cannot derive py_function's rule from its gradient (which calls `func` under an eager tape,
    an op with no gradient of its own to transpose), so it says so instead of giving no tangent."""
    from autoloop.ops.location import format_location
    where = f" (created at {format_location(op.location)})" if op.location else ""
    raise NotImplementedError(
        f"forward mode (ForwardAccumulator, jvp) cannot pass through py_function{where}: the Python function's "
        f"derivative is known only to reverse mode. Take the gradient with a GradientTape, or write the function "
        f"with autoloop ops")


_JAX = "autoloop.backends.jax.kernels.effects:py_function"
register(OpDef("PyFunction", kernel=_kernel, infer=_infer, stateful=True, gradient=_py_function_gradient,
               jvp=_no_forward_mode, kernels={"jax": _JAX}))
register(OpDef("PyFunctionStateless", kernel=_kernel, infer=_infer, gradient=NOT_DIFFERENTIABLE,  # numpy only
               kernels={"jax": _JAX}))
# Not an effect itself: a backward pass whose gradients nobody reads need not call func again.
register(OpDef("PyFunctionGrad", kernel=_gradient_kernel, infer=_gradient_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.effects:py_function_gradient"}))


def _stage(caller, func, inp, Tout, stateful, name, eager_inputs):  # noqa: N803
    if not callable(func):
        raise TypeError(f"{caller}: func must be callable, got {func!r}")
    results = ResultTypes(Tout, caller)
    inputs = [convert(value) for value in (inp if isinstance(inp, list | tuple) else [inp])]
    if context.current_graph() is None:  # eagerly: call it now (a GradientTape sees the ops it runs)
        if eager_inputs:
            values = _results_of(func(*inputs), results, func, keep_tensors=True)
        else:
            values = _call([t.numpy() for t in inputs], func, results, False)
        tensors = [value if isinstance(value, Tensor) else eager(value) for value in values]
        return tensors[0] if results.single else tensors
    attrs = {"func": func, "results": results, "eager_inputs": eager_inputs}
    op = "PyFunction" if stateful else "PyFunctionStateless"
    outputs = apply(op, inputs, attrs, name=name, fold=False)
    return outputs if results.single else list(outputs)


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803 - TensorFlow's argument names
    """Call ``func(*inp)`` on eager Tensors when the graph runs; results converted to `Tout`.

    See the module docstring: ordered as an effect, differentiable through
    the autoloop ops ``func`` runs, a host callback on ``backend="jax"``.
    Without `func` (``@py_function(Tout=...)``) a decorator, as in TensorFlow:
    the decorated function called on ``args`` is ``py_function(func, args, Tout)``.
    """
    if func is None:
        return _decorator(py_function, "py_function", inp, Tout=Tout, name=name)
    _check_given("py_function", inp, Tout)
    return _stage("py_function", func, inp, Tout, True, name, eager_inputs=True)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """Call ``func(*inp)`` on numpy arrays when the graph runs; results converted to `Tout`.

    ``stateful=False`` promises that ``func`` has no effects and depends only
    on its inputs: then an unused call may be pruned. No gradient. Without
    `func`, a decorator (see `py_function`).
    """
    if func is None:
        return _decorator(numpy_function, "numpy_function", inp, Tout=Tout, stateful=stateful, name=name)
    _check_given("numpy_function", inp, Tout)
    return _stage("numpy_function", func, inp, Tout, bool(stateful), name, eager_inputs=False)


def _decorator(op, op_name, inp, **options):
    """``@op(Tout=...)``: the decorated function called on ``args`` is ``op(func, list(args), ...)``."""
    if inp is not None:
        raise TypeError(f"{op_name}: give func with inp, or use @{op_name}(Tout=...) as a decorator without inp")
    _check_given(op_name, (), options["Tout"])

    def decorate(func):
        @functools.wraps(func)
        def call(*args):
            return op(func, list(args), **options)
        return call
    return decorate


def _check_given(op_name, inp, Tout):  # noqa: N803
    if inp is None or Tout is None:
        missing = " and ".join(n for n, v in (("inp", inp), ("Tout", Tout)) if v is None)
        raise TypeError(f"{op_name}() missing {missing}: call {op_name}(func, inp, Tout), or decorate a "
                        f"function with @{op_name}(Tout=...)")
