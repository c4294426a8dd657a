"""What XLA cannot compile is said in the user's words: the return value and the ``return`` it follows, not the
compiler's ``retval_`` and the ``if`` it wrote after that ``return`` (whose true branch is the user's later code).
"""

from __future__ import annotations

import pytest

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

import autoloop as al  # noqa: E402
from autoloop.errors import BackendError  # noqa: E402


def test_returns_of_different_shapes_name_the_return_value_and_its_paths():
    def early(x):
        if al.reduce_sum(x) > 0:
            return al.zeros([2])
        return al.zeros([3])

    line = early.__code__.co_firstlineno + 2
    with pytest.raises(BackendError) as raised:
        al.function(early, backend="jax")(al.constant([1.0]))
    message = str(raised.value)
    assert message.startswith(f"the return value has shape (3,) where the return at line {line} did not run and "
                              f"(2,) where the return at line {line} ran, so it (at {__file__}:{line + 1})")
    assert "retval_" not in message and "true branch" not in message

    def pair(x):
        if al.reduce_sum(x) > 0:
            return al.zeros([2]), 1
        return al.zeros([3]), 2

    with pytest.raises(BackendError, match=r"^item \[0\] of the return value has shape \(3,\) where the return"):
        al.function(pair, backend="jax")(al.constant([1.0]))


def test_a_variable_of_an_if_keeps_its_name_and_sides():
    def branches(x):
        if al.reduce_sum(x) > 0:
            y = al.zeros([2])
        else:
            y = al.zeros([3])
        return y

    with pytest.raises(BackendError, match=r"^'y' has shape \(2,\) in the if branch and \(3,\) in the else branch"):
        al.function(branches, backend="jax")(al.constant([1.0]))
    with pytest.raises(BackendError, match=r"^the cond's output has shape \(2,\) in the true branch and \(3,\) in "):
        al.function(lambda x: al.cond(al.reduce_sum(x) > 0, lambda: al.zeros([2]), lambda: al.zeros([3])),
                    backend="jax")(al.constant([1.0]))


def test_returns_in_both_branches_of_an_if_name_the_return_value_and_its_lines():
    def both(x):
        if x > 0:
            return al.ones([2]), 1
        else:
            return al.ones([2, 2]), 1

    line = both.__code__.co_firstlineno + 1
    with pytest.raises(BackendError) as raised:
        al.function(both, backend="jax")(al.constant(1.0))
    assert str(raised.value).startswith(
        f"item [0] of the return value (of the returns at lines {line + 1} and {line + 3}) has shape (2,) in the "
        f"if branch and (2, 2) in the else branch, so it (at {__file__}:{line})")


def test_a_return_value_that_a_loop_reshapes_is_named_as_such():
    def loop(n):
        if n > 100:
            return al.ones([2])
        i = 0
        while i < n:
            i += 1
            return al.ones([3])
        return al.ones([2])

    first = loop.__code__.co_firstlineno
    with pytest.raises(BackendError) as raised:
        al.function(loop, backend="jax")(al.constant(5))
    assert str(raised.value).startswith(
        f"the return value (of the returns at lines {first + 2}, {first + 6} and {first + 7}) has shape (2,) before "
        f"an iteration and (3,) after it, so the loop (at {__file__}:{first + 4})")
