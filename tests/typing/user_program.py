"""A typed program using autoloop's public API, as a user writes one.

``python -m mypy`` must accept it (its config in pyproject.toml names this
file; tests/typing/test_typing.py runs mypy on it, and runs it): the
public names, their signatures and `Tensor`'s operators are visible to a
type checker although ``import autoloop`` loads them lazily.
"""

from __future__ import annotations

import sys

import numpy as np

import autoloop
from autoloop import Tensor

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover - Python 3.10 has no typing.assert_type
    def assert_type(value, _type):
        return value


@autoloop.function
def sum_squares(n: Tensor) -> Tensor:
    total = autoloop.constant(0)
    for i in range(n):
        total += i * i
    return total


@autoloop.function(reduce_retracing=True, backend="numpy")
def halve_until_small(x: Tensor) -> Tensor:
    while autoloop.reduce_max(x) > 1.0:
        x = x / 2
    return x


class Dense(autoloop.Module):
    def __init__(self, units: int) -> None:
        super().__init__(name="dense")
        self.w = autoloop.Variable(np.ones((2, units), np.float32), name="w")

    def __call__(self, x: Tensor) -> Tensor:
        return x @ self.w


def main() -> dict[str, object]:
    assert_type(sum_squares, autoloop.Function)
    x = autoloop.constant([1.0, 2.0], dtype=autoloop.float32)
    assert_type(x, Tensor)
    assert_type(x * 2.0 + 1, Tensor)
    assert_type(-x[0], Tensor)
    assert_type(x.shape, autoloop.TensorShape)
    assert_type(x.dtype, autoloop.DType)
    assert_type(autoloop.add(x, 1), Tensor)
    assert_type(autoloop.reshape(autoloop.matmul([[1.0]], [[2.0]]), [1]), Tensor)
    assert_type(autoloop.cast(x > 1, autoloop.bool), Tensor)
    autoloop.print("printed", x, output_stream=sys.stdout)
    _, total = autoloop.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + i), (0, 0),
                                   maximum_iterations=10)
    picked = autoloop.cond(x[0] > 0, lambda: x, lambda: -x)
    doubled = autoloop.map_fn(lambda row: row * 2, autoloop.constant([[1.0], [2.0]]))
    squares = autoloop.TensorArray(autoloop.float32, size=3)
    for k in range(3):
        squares = squares.write(k, float(k * k))
    assert_type(squares.stack(), Tensor)
    layer = Dense(3)
    with autoloop.GradientTape() as tape:
        y = autoloop.reduce_sum(layer(autoloop.constant([[1.0, 2.0]])))
    assert_type(tape, autoloop.GradientTape)
    assert_type(layer.trainable_variables, tuple[autoloop.Variable, ...])
    (gradient,) = tape.gradient(y, layer.trainable_variables)
    concrete = sum_squares.get_concrete_function(autoloop.TensorSpec([], autoloop.int32))
    assert_type(concrete, autoloop.ConcreteFunction)
    return {"sum_squares": sum_squares(autoloop.constant(4)).numpy(), "total": total.numpy(),
            "halved": halve_until_small(autoloop.constant([3.0])).numpy(), "picked": picked.numpy(),
            "doubled": doubled.numpy(), "squares": squares.stack().numpy(), "gradient": gradient.numpy(), "code": autoloop.to_code(halve_until_small)}
