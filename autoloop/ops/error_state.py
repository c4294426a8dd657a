"""numpy's floating-point error state, set to "ignore everything" cheaply around kernels.

Kernels follow TensorFlow, which never warns about overflow or division by
zero, so every kernel runs with numpy's errors ignored.
``np.errstate(all="ignore")`` builds its object on every use (about 1 µs); numpy
2 keeps the state in a context variable, which we set to a prebuilt value
(0.1–0.2 µs) and reset, as thread-safe as ``np.errstate``:

    token = ignore_errors()
    try:
        result = kernel(*arrays)
    finally:
        restore_errors(token)

The eager path (`autoloop.ops.dispatch`) and the compiled executor both use it.
"""

from __future__ import annotations

import functools

import numpy as np

try:  # numpy >= 2
    from numpy._core.umath import _extobj_contextvar, _make_extobj
except ImportError:  # numpy 1.x: the state is set through np.errstate
    _extobj_contextvar = None

if _extobj_contextvar is not None:
    _IGNORE_ALL = _make_extobj(all="ignore")

    # ignore_errors() -> token: numpy's floating-point errors are ignored until restore_errors(token).
    # A partial of the context variable's own methods, not a Python function: 60 ns less a call.
    ignore_errors = functools.partial(_extobj_contextvar.set, _IGNORE_ALL)
    restore_errors = _extobj_contextvar.reset
else:
    def ignore_errors():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def restore_errors(state):
        state.__exit__(None, None, None)
