"""Results that mix Python values and tensors come back in the traced function's structure on every backend.

The JAX backend returns a one-output program bare (no 1-tuple), a fast path;
a result whose only tensor sits among Python values has one graph output
too, and must still be packed into its structure (it came back as the
tensor unpacked as if it were the tuple, or a ``TypeError`` at rank 0).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

import autoloop as al  # noqa: E402

STRUCTURES = {
    "one tensor among Python values": lambda a: (1, a + 1),
    "one tensor first": lambda a: (a * 2, "text"),
    "a single tensor": lambda a: a + 1,
    "a tensor in a one-tuple": lambda a: (a + 1,),
    "a nested tuple": lambda a: (1, (None, (a - 1, 2.5))),
    "a dict": lambda a: {"count": 3, "value": a * 3, "none": None},
    "two tensors among Python values": lambda a: [a, 0, {"b": a + a, "c": (None,)}],
    "only Python values": lambda a: (1, None, "x"),
    "None": lambda a: None,
}


def _plain(result):
    return al.nest.map_structure(lambda t: t.numpy() if isinstance(t, al.Tensor) else t, result)


def _assert_same(found, expected):
    assert type(found) is type(expected)
    if isinstance(expected, tuple | list):
        assert len(found) == len(expected)
        for f, e in zip(found, expected):
            _assert_same(f, e)
    elif isinstance(expected, dict):
        assert found.keys() == expected.keys()
        for key in expected:
            _assert_same(found[key], expected[key])
    elif isinstance(expected, np.ndarray | np.generic):
        assert np.asarray(found).dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(found, expected)
    else:
        assert found == expected


@pytest.mark.parametrize("name", list(STRUCTURES))
@pytest.mark.parametrize("value", [5, [5, 6]], ids=["rank 0", "rank 1"])
def test_a_result_mixing_python_values_and_tensors_is_packed_alike_on_both_backends(name, value):
    fn = STRUCTURES[name]
    expected = _plain(al.function(fn)(al.constant(value)))
    _assert_same(_plain(al.function(fn, backend="jax")(al.constant(value))), expected)
    # the slow path beside the fast one: the concrete function called directly
    concrete = al.function(fn, backend="jax").get_concrete_function(al.constant(value))
    _assert_same(_plain(concrete(al.constant(value))), expected)


def test_the_reported_repro():
    f = lambda a: (1, a + 1)  # noqa: E731
    one, tensor = al.function(f, backend="jax")(al.constant([5, 6]))
    assert one == 1 and tensor.numpy().tolist() == [6, 7]
    one, tensor = al.function(f, backend="jax")(al.constant(5))
    assert one == 1 and tensor.numpy() == 6


def test_jax_arrays_results_mixing_python_values():
    import jax
    one, array = al.function(lambda a: (1, a + 1), backend="jax", jax_arrays=True)(al.constant([5, 6]))
    assert one == 1 and isinstance(array, jax.Array) and array.tolist() == [6, 7]
