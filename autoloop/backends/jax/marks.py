"""The small vocabulary JAX kernels share: how a kernel declares what it needs, and how it refuses.

A leaf module (numpy, the op registry and the error types only), so that
the kernels, the buffer planning (`layouts`, `lengths`) and the lowering
itself import it without importing one another:

- the marks on a kernel: `with_node` (it takes ``(lowering, node, *values,
  **attrs)``), `host_call` (it calls the host, never folded), `checked` (it
  checks values at run time); `calls_host` reads the mark back;
- `is_static` and `static_value`: whether a value is known while lowering;
- `unsupported`: the `BackendError` for what XLA cannot compile, naming the
  user's line and the fix.
"""

from __future__ import annotations

import numpy as np

from autoloop.errors import BackendError
from autoloop.ops import registry
from autoloop.ops.location import format_location


def with_node(kernel):
    """Mark a JAX kernel that takes ``(lowering, node, *values, **attrs)``."""
    kernel.takes_node = True
    return kernel


def host_call(kernel):
    """Mark a JAX kernel that calls the host (prints, draws numbers; it takes the node, as `with_node`):
    it runs each time the program runs, never folded while lowering, and the program waits for it."""
    kernel.host_call = True
    return with_node(kernel)


def calls_host(node) -> bool:
    """Whether `node`'s JAX kernel is a `host_call`."""
    try:
        return getattr(registry.get(node.op).kernel_for("jax").fn, "host_call", False)
    except KeyError:  # a control-flow op, or an op without a JAX kernel
        return False


def checked(site):
    """Mark a JAX kernel that checks values at run time (it takes the node, as `with_node`).

    ``site(node)`` says, before lowering, whether `node` needs a check: None,
    or ``(witness, reproduce)``: the ``(numpy dtype, shape)`` of each value its
    message needs, and ``reproduce(*witness_values)``, which raises the numpy
    executor's error (`autoloop.backends.jax.checks`). The kernel calls
    ``lowering.check(node, failed, witness_values)``.
    """
    def mark(kernel):
        kernel.takes_node = True
        kernel.site = site
        return kernel
    return mark


def is_static(value) -> bool:
    """Whether `value` is known while lowering (a numpy value), not a traced JAX value."""
    return isinstance(value, np.ndarray | np.generic | bool | int | float)


def unsupported(node, what: str, fix: str) -> BackendError:
    """The error for something XLA cannot compile: what, where (the user's line), and the fix."""
    location = getattr(node, "location", None)
    error = BackendError(f"{what} (at {format_location(location)}) cannot be compiled by XLA (backend='jax'): {fix}")
    error.location = location  # where `autoloop.backends.jax.program` raises it
    return error


def static_value(node, value, what: str):
    """`value` as a numpy value, or a `BackendError`: XLA needs it while compiling."""
    if is_static(value):
        return value
    raise unsupported(node, f"{node.op} takes {what} from the values of its inputs, so it",
                      "XLA compiles arrays of static shape only. Compute it from shapes and constants, "
                      "pad to a fixed size, or run on backend='numpy'")
