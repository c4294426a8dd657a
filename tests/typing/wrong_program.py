"""Mistakes a type checker catches in a program using autoloop (tests/typing/test_typing.py).

Each line marked ``# error: <code>`` must be reported by mypy with that
error code, and no other line; the file is never run.
"""

from __future__ import annotations

import autoloop


def mistakes(x: autoloop.Tensor) -> None:
    autoloop.while_loop(lambda i: i < 3, lambda i: i + 1, [x], paralel_iterations=4)  # error: call-arg
    autoloop.function(lambda: x, backend="tpu")  # error: call-overload
    autoloop.not_a_name  # error: attr-defined
    x.numpyy()  # error: attr-defined
    autoloop.cond(x > 0, x, -x)  # error: arg-type
    with autoloop.GradientTape() as tape:
        y = x * x
    tape.gradient(y)  # error: call-arg
    name: str = autoloop.constant(1.0)  # error: assignment
    autoloop.Module(name=3)  # error: arg-type
