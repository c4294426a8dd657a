"""JAX kernels of the ops with effects: print, assertions, the checks of converted code, random numbers.

- ``print`` is an ordered host call (``io_callback(..., ordered=True)``, the
  effect random draws and ``py_function`` also use, so all keep program
  order with each other) that renders its values with the
  numpy kernel, so the text and the order are the numpy executor's; it
  prints nothing once a check has failed, as numpy would have stopped
  before it. TF1's ``Print`` (``compat.v1.Print``, an identity that prints
  where its result is used) is the same host call, returning its input.
- ``Assert``, ``AssertTrue`` (a failed ``assert``, a ``raise`` in a
  branch) and ``CheckDefined``/``CheckAssigned`` (a variable no path
  assigned) are run-time checks (`autoloop.backends.jax.checks`): the
  numpy kernel raises their error after the call, with the user's message.
- Random numbers come from the op's own numpy stream through an ordered
  host call, so a traced function draws the numbers numpy draws, in the
  same order; a draw inside a compiled loop is one host call per
  iteration (fast random numbers on an accelerator are JAX's own
  ``jax.random``, with its own numbers).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from autoloop.backends.jax.checks import replay
from autoloop.backends.jax.marks import checked, host_call, static_value, unsupported
from autoloop.ops import registry
from autoloop.ir.graph import op_attrs_of


def _ok(lowering):
    """Whether nothing has failed so far, as a value the host call receives."""
    return lowering.errors.ok if lowering.errors is not None else jnp.bool_(True)


def _host(values) -> list:
    return [np.asarray(v)[()] if np.ndim(v) == 0 else np.asarray(v) for v in values]


def _print_on_host(lowering, op, arrays, **attrs) -> None:
    kernel = registry.get(op).kernel

    def host_print(ok, *values):
        if ok:
            kernel(*_host(values), **attrs)
    # io_callback, not jax.debug.callback: one kind of ordered effect for every host call, so prints keep
    # their order with py_function calls and random draws (JAX orders each kind of effect on its own).
    jax.experimental.io_callback(host_print, None, _ok(lowering), *arrays, ordered=True)


@host_call
def print_(lowering, node, *arrays, template, stream, flush=False, summarize=None):
    _print_on_host(lowering, "PrintV2", arrays, template=template, stream=stream, flush=flush, summarize=summarize)
    return ()


@host_call
def print_v1(lowering, node, value, *data, message, summarize):
    _print_on_host(lowering, "PrintV1", (value,) + data, message=message, summarize=summarize)
    return value


def _condition_failed(condition):
    return ~jnp.asarray(condition, bool)


@checked(lambda node: replay(*range(len(node.inputs)))(node))
def assert_(lowering, node, condition, *data, template, summarize):
    lowering.check(node, _condition_failed(condition), (condition,) + data)
    return ()


@checked(replay(0))
def assert_true(lowering, node, condition, message, error="AssertionError", exception=None):
    lowering.check(node, _condition_failed(condition), (condition,))
    return ()


@checked(replay(0))
def check_defined(lowering, node, defined, value, message, error):
    lowering.check(node, _condition_failed(defined), (defined,))
    return value


# -- random numbers: the op's numpy stream, drawn on the host in program order ---------------------------
def _draw(lowering, node, dims, parameters):
    kernel = registry.get(node.op).kernel
    attrs = op_attrs_of(node.attrs)
    shape = tuple(int(d) for d in np.ravel(static_value(node, dims, "the shape")))
    result = jax.ShapeDtypeStruct(shape, node.outputs[0].dtype.as_numpy_dtype)

    def draw(ok, *values):
        if not ok:
            return np.zeros(result.shape, result.dtype)
        return np.asarray(kernel(np.asarray(dims), *_host(values), **attrs), result.dtype).reshape(result.shape)
    return jax.experimental.io_callback(draw, result, _ok(lowering), *parameters, ordered=True)


@host_call
def normal(lowering, node, dims, mean, stddev, dtype, stream):
    return _draw(lowering, node, dims, (mean, stddev))


@host_call
def truncated_normal(lowering, node, dims, mean, stddev, dtype, stream):
    return _draw(lowering, node, dims, (mean, stddev))


@host_call
@checked(replay(1, 2, when=lambda node: node.attrs["dtype"].is_integer))
def uniform(lowering, node, dims, minval, maxval, dtype, stream):
    if dtype.is_integer:
        lowering.check(node, ~(jnp.asarray(minval) < jnp.asarray(maxval)), (minval, maxval))
    return _draw(lowering, node, dims, (minval, maxval))


def no_op():
    """TF1's ``no_op``/``group``: nothing to compute (its ordering edges are the graph's)."""
    return ()


# -- py_function / numpy_function: the user's Python, called on the host --------------------------------
def _result_structs(node, what: str) -> list:
    """The ``ShapeDtypeStruct`` of each output: XLA needs every shape while compiling."""
    structs = []
    for value in node.outputs:
        if not value.shape.is_fully_defined():
            raise unsupported(node, f"{what} with a result of shape {value.shape}",
                              "XLA needs the shape of each result while compiling: declare it with "
                              "Tout=autoloop.TensorSpec(shape, dtype), or result.set_shape(shape) after the call")
        structs.append(jax.ShapeDtypeStruct(tuple(value.shape.as_list()), value.dtype.as_numpy_dtype))
    return structs


class _HostError:
    """The `reproduce` of a host call's check: raises what the user's Python raised on the host (the
    callback cannot raise through XLA, so it keeps the error here and reports a failure)."""

    def __init__(self):
        self.error = None

    def __call__(self):
        raise self.error


def _host_error_site(node):
    return (), _HostError()


def _call_on_host(lowering, node, arrays, attrs, what: str):
    """`node`'s numpy kernel as a host callback: ordered when the node is an effect, pure otherwise.
    Nothing is called once a check has failed (numpy would have stopped before it); an error the
    Python function raises fails the node's check, raised after the call as on numpy."""
    kernel = registry.get(node.op).kernel
    structs = _result_structs(node, what)
    holder = lowering.facts.sites.by_node[node].reproduce

    def call(ok, *values):
        zeros = [np.zeros(s.shape, s.dtype) for s in structs]
        if not ok:
            return zeros + [np.bool_(False)]
        try:
            results = kernel(*_host(values), **attrs)
        except Exception as error:  # noqa: BLE001 - the user's error, raised on the host after the call
            holder.error = error
            return zeros + [np.bool_(True)]
        results = results if node.tuple_result else (results,)
        return [np.asarray(r, s.dtype).reshape(s.shape) for r, s in zip(results, structs)] + [np.bool_(False)]
    outputs = structs + [jax.ShapeDtypeStruct((), np.bool_)]
    if registry.get(node.op).stateful:
        *results, failed = jax.experimental.io_callback(call, outputs, _ok(lowering), *arrays, ordered=True)
    else:
        *results, failed = jax.pure_callback(call, outputs, _ok(lowering), *arrays)
    lowering.check(node, failed)
    return tuple(results) if node.tuple_result else results[0]


@host_call
@checked(_host_error_site)
def py_function(lowering, node, *arrays, func, results, eager_inputs):
    what = "py_function" if eager_inputs else "numpy_function"
    return _call_on_host(lowering, node, arrays, {"func": func, "results": results,
                                                  "eager_inputs": eager_inputs}, what)


@host_call
@checked(_host_error_site)
def py_function_gradient(lowering, node, *arrays, func, results, differentiable):
    return _call_on_host(lowering, node, arrays, {"func": func, "results": results,
                                                  "differentiable": differentiable}, "the gradient of py_function")
