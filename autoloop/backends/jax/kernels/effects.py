"""JAX kernels of the ops with effects: print, assertions, the checks of converted code, random numbers.

- ``print`` is an ordered host call (``jax.debug.callback(..., ordered=True)``,
  what ``jax.debug.print`` is made of) that renders its values with the
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
from autoloop.backends.jax.lowering import checked, host_call, static_value
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
    jax.debug.callback(host_print, _ok(lowering), *arrays, ordered=True)


@host_call
def print_(lowering, node, *arrays, template, stream, flush=False):
    _print_on_host(lowering, "PrintV2", arrays, template=template, stream=stream, flush=flush)
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
@checked(replay(1, 2, when=lambda node: node.attrs["dtype"].is_integer))
def uniform(lowering, node, dims, minval, maxval, dtype, stream):
    if dtype.is_integer:
        lowering.check(node, ~(jnp.asarray(minval) < jnp.asarray(maxval)), (minval, maxval))
    return _draw(lowering, node, dims, (minval, maxval))


def no_op():
    """TF1's ``no_op``/``group``: nothing to compute (its ordering edges are the graph's)."""
    return ()
