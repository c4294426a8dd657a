"""Graph ops that converted code needs to keep Python's semantics.

- ``CheckDefined(defined, value)``: `value` if `defined` holds, else raises
  UnboundLocalError (a variable read where no path assigned it)
  or `MissingReturnError` (a function that ended without ``return``).
- ``CheckAssigned(defined, value)``: the same, for a dict item or attribute
  (KeyError / AttributeError); it runs only where its value is used.
- ``AssertTrue(condition)``: raises AssertionError with the user's message
  when `condition` is false (or the error named by its ``error`` attribute:
  a branch that reads an unbound variable raises UnboundLocalError when it
  runs; or a copy of its ``exception`` attribute: a ``raise`` in a branch).

Both raise when the graph runs; the executor shows the user's line.
"""

from __future__ import annotations

import copy

from autoloop.errors import AutoloopError
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register


class MissingReturnError(AutoloopError, ValueError):
    """A converted function reached its end without a return statement on a graph path."""


class MissingItemError(AutoloopError, KeyError):
    """A dict item read where no path of graph control flow assigned it."""


class MissingAttributeError(AutoloopError, AttributeError):
    """An attribute read where no path of graph control flow assigned it."""


_ERRORS = {"UnboundLocalError": UnboundLocalError, "MissingReturnError": MissingReturnError,
           "KeyError": MissingItemError, "AttributeError": MissingAttributeError}


def _check_defined_kernel(defined, value, message, error):
    if not bool(defined):
        raise _ERRORS[error](message)
    return value


def _check_defined_infer(defined, value, **attrs):
    return Spec(value.dtype, value.shape)


def _assert_true_kernel(condition, message, error="AssertionError", exception=None):
    if not bool(condition):
        if exception is not None:  # the user's own exception (a raise in a graph branch)
            error = copy.copy(exception).with_traceback(None)
            error.__autoloop_user_raise__ = True  # the executor keeps its type
            raise error
        error_type = _ERRORS.get(error, AssertionError)
        raise error_type(message) if message is not None else error_type()


def _no_outputs(*specs, **attrs):
    return []


register(OpDef("CheckDefined", kernel=_check_defined_kernel, infer=_check_defined_infer,
               stateful=True,  # a check whose value is unused must still run (y = x, y dead)
               gradient=lambda op, grad: [None, grad],
               kernels={"jax": "autoloop.backends.jax.kernels.effects:check_defined"}))
# The same check for an item or attribute a container holds: it runs only where the value is
# used (a dict returned or read later), never merely because the container was written.
register(OpDef("CheckAssigned", kernel=_check_defined_kernel, infer=_check_defined_infer,
               gradient=lambda op, grad: [None, grad],
               kernels={"jax": "autoloop.backends.jax.kernels.effects:check_defined"}))
register(OpDef("AssertTrue", kernel=_assert_true_kernel, infer=_no_outputs, stateful=True, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.effects:assert_true"}))
