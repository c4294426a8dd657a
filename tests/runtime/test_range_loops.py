"""A converted ``for`` over ``autoloop.range(...)`` uses its loop index as the element.

The element ``i`` of a range is ``i * delta + start`` in its dtype, which is
what the Range kernel computes, so the loop need not read a range array on
every step; these loops must give what the same loop over the range's
values gives, for every dtype, sign of delta and static or run-time length,
and a range the op rejects must still fail.
"""

import numpy as np
import pytest

import autoloop as al
from autoloop.errors import InvalidArgumentError

from ..compiler.programs import make_function

SOURCE = '''
def fold(start, limit, delta):
    total = start - start
    for t in al.range(start, limit, delta):
        total = total * FACTOR + t
    return total
'''

CASES = [
    (0, 10, 1, np.int32), (3, 20, 4, np.int32), (10, -5, -3, np.int32), (-2**31, -2**31 + 5, 2, np.int32),
    (2**40, 2**40 + 7, 3, np.int64), (0.5, 3.0, 0.3, np.float32), (1.0, -1.0, -0.1, np.float64),
    (0.0, 5.0, 1.0, np.float32), (0.0, -1.0, -0.25, np.float32),  # the first element is 0.0, not -0.0
]


def by_hand(start, limit, delta, dtype):
    factor = dtype(3) if np.dtype(dtype).kind == "i" else dtype(-0.5)  # negative: -0.0 and 0.0 differ in the result
    total = dtype(0)
    with np.errstate(all="ignore"):
        for t in al.range(dtype(start), dtype(limit), dtype(delta)).numpy():  # the Range kernel's values
            total = total * factor + t
    return total


@pytest.mark.parametrize("start, limit, delta, dtype", CASES)
@pytest.mark.parametrize("static", [True, False], ids=["static length", "run-time length"])
def test_a_loop_over_a_range_gives_the_ranges_elements(start, limit, delta, dtype, static):
    factor = 3 if np.dtype(dtype).kind == "i" else -0.5
    fold = make_function(SOURCE, "fold", {"al": al, "FACTOR": factor})
    if static:
        converted = al.function(lambda: fold(al.constant(dtype(start)), al.constant(dtype(limit)),
                                             al.constant(dtype(delta))))
        result = converted()
    else:
        result = al.function(fold)(al.constant(dtype(start)), al.constant(dtype(limit)), al.constant(dtype(delta)))
    expected = by_hand(start, limit, delta, dtype)
    assert result.numpy().dtype == expected.dtype and result.numpy().tobytes() == expected.tobytes()


def test_the_index_is_the_element_of_range_n():
    fold = make_function(SOURCE, "fold", {"al": al, "FACTOR": 3})
    graph = al.function(fold).get_concrete_function(al.constant(0), al.constant(50), al.constant(1)).graph
    (loop,) = [node for node in graph.nodes if node.op == "While"]
    assert not [node for node in loop.attrs["body"].nodes if node.op == "StridedSlice"]
    source = al.function(fold).get_concrete_function(al.constant(0), al.constant(50), al.constant(1)).compiled.source
    assert "[" not in source.split("while", 1)[1], source  # nothing is read from an array in the loop


def test_a_range_the_op_rejects_still_fails():
    fold = al.function(make_function(SOURCE, "fold", {"al": al, "FACTOR": 3}))
    with pytest.raises(InvalidArgumentError, match="must be <= limit"):
        fold(al.constant(5), al.constant(0), al.constant(1))
    with pytest.raises(InvalidArgumentError, match="delta must not be 0"):
        fold(al.constant(0), al.constant(5), al.constant(0))


RECIPROCALS = '''
def reciprocals(start, limit, delta):
    total = start - start
    for t in al.range(start, limit, delta):
        total = total + 1.0 / t
    return total
'''


@pytest.mark.parametrize("start, limit, delta", [(0.0, -1.0, -0.25), (0.0, 1.0, 0.25), (-0.0, 1.0, 0.5)])
def test_a_float_ranges_zero_keeps_its_sign(start, limit, delta):
    """1 / 0.0 is inf and 1 / -0.0 is -inf: the sum says which zero the loop saw."""
    reciprocals = make_function(RECIPROCALS, "reciprocals", {"al": al})
    args = [al.constant(np.float32(v)) for v in (start, limit, delta)]
    with np.errstate(divide="ignore"):
        expected = np.float32(0.0) + np.sum(np.float32(1.0) / al.range(*args).numpy())
    assert al.function(reciprocals)(*args).numpy() == expected
    assert al.function(lambda: reciprocals(*args))().numpy() == expected  # bounds known while tracing
