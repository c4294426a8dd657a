"""``autoloop.config``: the program-wide switch that runs every `Function` as plain Python (TensorFlow's
``tf.config.run_functions_eagerly``, the standard debugging switch).

    >>> config.run_functions_eagerly(True)
    >>> f(constant(3))         # runs f's own Python, op by op: breakpoints and print() work
    >>> config.run_functions_eagerly(False)

While it is on, calling a Function calls its original Python function on
the arguments as given (not converted, not traced), as TensorFlow does; the
results are the graph's results computed eagerly. ``get_concrete_function``
still traces, and a Function called while a graph is built (a TF1 graph, a
trace) is traced into it as before.
"""

from __future__ import annotations

from autoloop.ir import context

_EAGER = [False]  # the switch, program-wide as in TensorFlow (a setting, not state a trace learns)


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Run every `Function` as its plain Python function (True) or as graphs (False, the default)."""
    run_eagerly = bool(run_eagerly)
    if run_eagerly != _EAGER[0]:
        _EAGER[0] = run_eagerly
        # Function's short call path reads only `context.BUSY`: while it is non-zero every call takes the
        # path that asks `functions_run_eagerly`.
        context.count_busy(1 if run_eagerly else -1)


def functions_run_eagerly() -> bool:
    """Whether `run_functions_eagerly(True)` is in effect."""
    return _EAGER[0]
