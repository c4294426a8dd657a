"""Every argument of `scan`, eagerly and traced, against the plain-Python reference.

Traced runs also go through the reference interpreter and checked mode
(`tests.runtime_core.helpers.Mode`), so each graph here is an
interpreter-vs-compiled equivalence case too.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import autoloop as al
from autoloop import nest
from tests.scan.reference import reference_scan

Pair = collections.namedtuple("Pair", ["total", "last"])


def assert_same(found, expected):
    """`found` (Tensors, TensorArrays, None) equals `expected` (numpy), leaf by leaf, dtypes included."""
    nest.assert_same_structure(found, expected, check_types=False)
    for f, e in zip(nest.flatten(found), nest.flatten(expected)):
        if e is None:
            assert f is None
            continue
        f = f.stack() if isinstance(f, al.TensorArray) else f
        f, e = np.asarray(f.numpy()), np.asarray(e)
        assert f.dtype == e.dtype, (f.dtype, e.dtype)
        np.testing.assert_array_equal(f, e)


def check(mode, fn, *args, **scan_args):
    """`fn(*args)` (which calls scan with `scan_args` and some tensors) matches the reference."""
    found = mode(fn, *args)
    expected = reference_scan(**scan_args)
    assert_same(found, expected)
    return found


# -- xs, ys, initial --------------------------------------------------------------------------
def running_sum(x, total):
    total = total + x
    return total, total


def test_xs_with_ys_and_state(mode):
    xs = al.constant([1, 2, 3, 4])
    arguments = dict(body=running_sum, initial=al.constant(0), xs=xs, ys=al.TensorSpec([], al.int32))
    ys, total, lengths = check(mode, lambda xs: al.scan(**dict(arguments, xs=xs)), xs, **arguments)
    assert ys.numpy().tolist() == [1, 3, 6, 10] and total.numpy() == 10 and lengths.numpy() == 4
    assert lengths.dtype is al.int32 and lengths.shape == al.TensorShape([])


def test_nested_xs_ys_and_state(mode):
    xs = {"a": al.constant([[1., 2.], [3., 4.], [5., 6.]]), "b": (al.constant([10, 20, 30]),)}

    def body(x, state):
        total, count = state["total"], state["count"][0]
        total = total + x["a"] * al.cast(x["b"][0], al.float32)
        return Pair(total=total, last=[x["b"][0]]), {"total": total, "count": [count + 1]}

    ys = Pair(total=al.TensorSpec([2], al.float32), last=[al.TensorSpec([], al.int32)])
    initial = {"total": al.zeros([2]), "count": [al.constant(0)]}
    arguments = dict(body=body, initial=initial, xs=xs, ys=ys)
    found_ys, state, _ = check(mode, lambda xs: al.scan(**dict(arguments, xs=xs)), xs, **arguments)
    assert isinstance(found_ys, Pair) and isinstance(found_ys.last, list) and isinstance(state["count"], list)
    assert found_ys.total.shape == al.TensorShape([3, 2])
    np.testing.assert_array_equal(state["total"].numpy(), [1 * 10 + 3 * 20 + 5 * 30, 2 * 10 + 4 * 20 + 6 * 30])


@pytest.mark.parametrize("template", [al.zeros([2]), np.zeros(2, np.float32), al.TensorSpec([None], al.float32)],
                         ids=["tensor", "numpy", "spec"])
def test_ys_templates_are_specs_or_example_tensors(mode, template):
    xs = al.constant([[1., 2.], [3., 4.]])
    arguments = dict(body=lambda x, s: (x * 2, s), initial=al.constant(0.), xs=xs, ys=template)
    ys, _, _ = check(mode, lambda xs: al.scan(**dict(arguments, xs=xs)), xs, **arguments)
    assert ys.numpy().tolist() == [[2., 4.], [6., 8.]]


def test_no_ys_and_no_state(mode):
    def fn(n):
        return al.scan(body=lambda x, s: (None, None), spatial_dim=n)

    ys, state, lengths = mode(fn, al.constant(3))
    assert ys is None and state is None and lengths.numpy() == 3


def test_python_numbers_in_frames_take_the_template_dtype(mode):
    def fn(xs):
        return al.scan(body=lambda x, s: ((x, 1.5), s), initial=al.constant(0), xs=xs,
                       ys=(al.TensorSpec([], al.int32), al.TensorSpec([], al.float32)))

    (xs, halves), _, _ = mode(fn, al.constant([4, 5]))
    assert halves.dtype is al.float32 and halves.numpy().tolist() == [1.5, 1.5]


# -- how many frames --------------------------------------------------------------------------
def counting_body(x, step):
    return step, step + 1


@pytest.mark.parametrize("spatial_dim", [0, 1, 5])
def test_spatial_dim_as_an_int(mode, spatial_dim):
    arguments = dict(body=counting_body, initial=al.constant(0), ys=al.TensorSpec([], al.int32),
                     spatial_dim=spatial_dim)
    ys, step, lengths = check(mode, lambda: al.scan(**arguments), **arguments)
    assert ys.shape == al.TensorShape([spatial_dim])  # known while tracing too
    assert step.numpy() == spatial_dim == lengths.numpy()


def test_spatial_dim_as_a_scalar_tensor(mode):
    n = al.constant(4)
    arguments = dict(body=counting_body, initial=al.constant(0), ys=al.TensorSpec([], al.int32), spatial_dim=n)
    ys, _, _ = check(mode, lambda n: al.scan(**dict(arguments, spatial_dim=n)), n, **arguments)
    assert ys.numpy().tolist() == [0, 1, 2, 3]
    if mode.traced:
        assert mode.concrete.outputs[0].shape == al.TensorShape([None])


def test_spatial_dim_equal_to_the_length_of_xs(mode):
    xs = al.constant([1, 2, 3])
    arguments = dict(body=running_sum, initial=al.constant(0), xs=xs, ys=al.TensorSpec([], al.int32), spatial_dim=3)
    check(mode, lambda xs: al.scan(**dict(arguments, xs=xs)), xs, **arguments)


@pytest.mark.parametrize("max_seq_len", [0, 2, 10])
def test_max_seq_len_caps_xs_spatial_dim_and_cond(mode, max_seq_len):
    xs = al.constant([1, 2, 3, 4])
    for extra in (dict(xs=xs), dict(spatial_dim=6), dict(cond=lambda x, s: s < 100)):
        arguments = dict(body=running_sum if "xs" in extra else counting_body, initial=al.constant(0),
                         ys=al.TensorSpec([], al.int32), max_seq_len=max_seq_len, **extra)
        ys, _, lengths = check(mode, lambda: al.scan(**arguments), **arguments)
        limit = 4 if "xs" in extra else 6 if "spatial_dim" in extra else 100
        assert lengths.numpy() == min(limit, max_seq_len)


def test_max_seq_len_as_a_tensor(mode):
    arguments = dict(body=counting_body, initial=al.constant(0), ys=al.TensorSpec([], al.int32),
                     cond=lambda x, s: s < 100, max_seq_len=al.constant(3))
    _, step, _ = check(mode, lambda m: al.scan(**dict(arguments, max_seq_len=m)), al.constant(3), **arguments)
    assert step.numpy() == 3


# -- a scalar cond ----------------------------------------------------------------------------
@pytest.mark.parametrize("cond_before_body", [True, False])
def test_scalar_cond_stops_a_scan_over_xs(mode, cond_before_body):
    xs = al.constant([3, 1, 4, 1, 5, 9, 2, 6])

    def cond(x, total):
        return total + x < 10 if cond_before_body else total < 10

    arguments = dict(body=running_sum, initial=al.constant(0), xs=xs, ys=al.TensorSpec([], al.int32), cond=cond,
                     cond_before_body=cond_before_body)
    ys, total, lengths = check(mode, lambda xs: al.scan(**dict(arguments, xs=xs)), xs, **arguments)
    assert ys.numpy().tolist() == ([3, 4, 8, 9] if cond_before_body else [3, 4, 8, 9, 14])


@pytest.mark.parametrize("cond_before_body, expected", [(True, 0), (False, 1)])
def test_a_cond_false_from_the_start(mode, cond_before_body, expected):
    arguments = dict(body=counting_body, initial=al.constant(0), ys=al.TensorSpec([], al.int32),
                     cond=lambda x, s: s < 0, cond_before_body=cond_before_body)
    ys, _, lengths = check(mode, lambda: al.scan(**arguments), **arguments)
    assert lengths.numpy() == expected and ys.shape.as_list() in ([expected], [None])


def test_do_while_cond_sees_the_frame_it_just_ran(mode):
    seen = []

    def cond(x, s):
        seen.append(x)
        return x < 3

    xs = al.constant([1, 2, 3, 4, 5])
    arguments = dict(body=running_sum, initial=al.constant(0), xs=xs, ys=al.TensorSpec([], al.int32), cond=cond,
                     cond_before_body=False)
    ys, _, _ = check(mode, lambda xs: al.scan(**dict(arguments, xs=xs)), xs, **arguments)
    assert ys.numpy().tolist() == [1, 3, 6]  # frame 3 ran, then its test stopped the loop


# -- return_tensor_arrays ---------------------------------------------------------------------
def test_return_tensor_arrays(mode):
    def fn(xs):
        ys, total, _ = al.scan(body=lambda x, s: ({"sum": s + x}, s + x), initial=al.constant(0), xs=xs,
                               ys={"sum": al.TensorSpec([], al.int32)}, return_tensor_arrays=True)
        array = ys["sum"]
        assert isinstance(array, al.TensorArray) and array.dtype is al.int32
        return array.stack(), array.read(1), array.size(), array.write(4, total).stack()

    stacked, second, size, grown = mode(fn, al.constant([1, 2, 3]))
    assert stacked.numpy().tolist() == [1, 3, 6] and second.numpy() == 3 and size.numpy() == 3
    assert grown.numpy().tolist() == [1, 3, 6, 0, 6]


# -- state of other kinds ---------------------------------------------------------------------
def test_a_tensor_array_in_the_state(mode):
    def fn(xs):
        def body(x, array):
            return None, array.write(array.size(), x * x)

        _, array, _ = al.scan(body=body, initial=al.TensorArray(al.int32, dynamic_size=True), xs=xs)
        return array.stack()

    assert mode(fn, al.constant([1, 2, 3])).numpy().tolist() == [1, 4, 9]


def test_python_numbers_and_arrays_as_state(mode):
    def fn(xs):
        return al.scan(body=lambda x, s: (None, (s[0] + x, s[1] * 2)), initial=(0, np.float32(1)), xs=xs)[1]

    total, power = mode(fn, al.constant([1, 2, 3]))
    assert total.numpy() == 6 and power.numpy() == 8.0 and power.dtype is al.float32


def test_prints_in_the_body_run_once_per_frame_in_order(mode, capsys):
    def fn(n):
        def body(x, step):
            al.print("frame", step)
            return None, step + 1

        return al.scan(body=body, initial=al.constant(0), spatial_dim=n)[1]

    assert mode(fn, al.constant(3)).numpy() == 3
    out = capsys.readouterr().out  # traced: the graph ran more than once (plain and checked)
    assert out.count("frame 0") >= 1 and out == "frame 0\nframe 1\nframe 2\n" * out.count("frame 0")
