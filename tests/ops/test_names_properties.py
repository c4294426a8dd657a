"""Property tests for the TensorFlow-named ops: for random shapes, dtypes and arguments,
each op equals its numpy reference eagerly, and its traced graphs (inputs of full,
partial or unknown shape) infer compatible shapes and compute the same values."""

import numpy as np
from hypothesis import given, settings, strategies as st

import autoloop as al
from ophelpers import assert_same, run_eager, run_traced
from test_op_properties import check_inference, make_array, shapes

SETTINGS = settings(max_examples=12, deadline=None)
FLOATS = [np.float16, np.float32, np.float64]
NUMERIC = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.float32, np.float64]
ORDERED = [np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64]


def matches_numpy(data, fn, reference, *arrays, value_dependent=False, needs_ranks=False):
    """`fn` equals `reference` on numpy inputs, and its traces agree with it (see check_inference).

    An op that `needs_ranks` known while tracing is traced on inputs of known shapes only.
    """
    expected = reference(*arrays)
    expected = list(expected) if isinstance(expected, list) else expected
    assert_same(run_eager(fn, *arrays), expected)
    if needs_ranks:
        assert_same(run_traced(fn, *arrays), expected)
    else:
        check_inference(data, fn, *arrays, value_dependent=value_dependent)


def axis_of(data, shape):
    return data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(FLOATS),
       st.sampled_from(["floor", "ceil", "round", "sign", "log1p", "rsqrt", "is_finite"]))
def test_unary_math(data, shape, dtype, name):
    x = make_array(data, dtype, shape) * 3
    if name in ("log1p", "rsqrt"):
        x = np.abs(x) + dtype(0.5)
    special = {"rsqrt": lambda a: (1 / np.sqrt(a)).astype(a.dtype), "is_finite": np.isfinite}
    reference = special[name] if name in special else getattr(np, name)
    matches_numpy(data, getattr(al.math, name), lambda a: reference(a)[()], x)


def _cumulative(accumulate, identity, x, axis, exclusive, reverse):
    x = np.moveaxis(x, axis, 0)
    x = x[::-1] if reverse else x
    rows, running = [], np.full(x.shape[1:], identity, x.dtype)
    for row in x:
        if exclusive:
            rows.append(running)
        running = accumulate(running, row).astype(x.dtype)
        if not exclusive:
            rows.append(running)
    out = np.stack(rows) if rows else np.zeros_like(x)
    return np.moveaxis(out[::-1] if reverse else out, 0, axis)


@SETTINGS
@given(st.data(), shapes(min_rank=1), st.sampled_from(NUMERIC), st.sampled_from(["cumsum", "cumprod"]),
       st.booleans(), st.booleans())
def test_cumulative(data, shape, dtype, name, exclusive, reverse):
    axis = axis_of(data, shape)
    x = make_array(data, dtype, shape, low=0 if dtype == np.uint8 else -3, high=4)
    accumulate, identity = (np.add, 0) if name == "cumsum" else (np.multiply, 1)
    matches_numpy(data, lambda t: getattr(al.math, name)(t, axis, exclusive=exclusive, reverse=reverse),
                  lambda a: _cumulative(accumulate, identity, a, axis, exclusive, reverse), x)


@SETTINGS
@given(st.data(), shapes(min_rank=1), st.sampled_from(ORDERED))
def test_roll_and_reverse(data, shape, dtype):
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    shifts = data.draw(st.lists(st.integers(-6, 6), min_size=len(axes), max_size=len(axes)))
    x = make_array(data, dtype, shape, low=0)
    matches_numpy(data, lambda t: al.roll(t, shifts, axes), lambda a: np.roll(a, shifts, axes), x)
    matches_numpy(data, lambda t: al.reverse(t, axes), lambda a: np.flip(a, axes), x)


@SETTINGS
@given(st.data(), shapes(min_rank=1, min_dim=1), st.sampled_from(NUMERIC),
       st.sampled_from(["CONSTANT", "REFLECT", "SYMMETRIC"]))
def test_pad(data, shape, dtype, mode):
    def limit(dim):
        return 3 if mode == "CONSTANT" else dim - 1 if mode == "REFLECT" else dim
    paddings = [[data.draw(st.integers(0, limit(d))), data.draw(st.integers(0, limit(d)))] for d in shape]
    x = make_array(data, dtype, shape, low=0)
    numpy_mode = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode]
    matches_numpy(data, lambda t: al.pad(t, paddings, mode), lambda a: np.pad(a, paddings, mode=numpy_mode), x)


@SETTINGS
@given(st.data(), shapes(min_rank=1), st.sampled_from(NUMERIC))
def test_split(data, shape, dtype):
    axis = axis_of(data, shape)
    size = shape[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, size), max_size=3)))
    sizes = np.diff([0, *cuts, size]).tolist()
    if data.draw(st.booleans()):
        sizes[data.draw(st.integers(0, len(sizes) - 1))] = -1
    x = make_array(data, dtype, shape, low=0)
    matches_numpy(data, lambda t: al.split(t, sizes, axis), lambda a: np.split(a, cuts, axis), x)


@SETTINGS
@given(st.data(), shapes(min_rank=1), st.sampled_from(ORDERED), st.sampled_from(["ASCENDING", "DESCENDING"]))
def test_sort_and_argsort_with_ties(data, shape, dtype, direction):
    axis = axis_of(data, shape)
    x = make_array(data, dtype, shape, low=0, high=3)  # few values: many ties

    def order(a):
        if direction == "ASCENDING":
            return np.argsort(a, axis, kind="stable")
        # descending, ties in their original order: sort on the negated rank of each value
        ranks = np.unique(a, return_inverse=True)[1].reshape(a.shape)
        return np.argsort(-ranks, axis, kind="stable")
    matches_numpy(data, lambda t: al.argsort(t, axis, direction), lambda a: order(a).astype(np.int32), x)
    matches_numpy(data, lambda t: al.sort(t, axis, direction),
                  lambda a: np.take_along_axis(a, order(a), axis), x)


@SETTINGS
@given(st.data(), shapes(max_rank=3, min_dim=1), shapes(max_rank=3, min_dim=1),
       st.sampled_from([np.int32, np.float32, np.float64]))
def test_tensordot(data, a_shape, b_shape, dtype):
    count = data.draw(st.integers(0, min(len(a_shape), len(b_shape))))
    b_shape = a_shape[len(a_shape) - count:] + b_shape[count:]
    a, b = make_array(data, dtype, a_shape), make_array(data, dtype, b_shape)
    matches_numpy(data, lambda x, y: al.tensordot(x, y, count), lambda x, y: np.tensordot(x, y, count), a, b,
                  needs_ranks=True)


@SETTINGS
@given(st.data(), shapes(min_rank=1, min_dim=1), st.sampled_from(NUMERIC))
def test_gather_nd_and_scatter_nd(data, shape, dtype):
    depth = data.draw(st.integers(1, len(shape)))
    count = data.draw(st.integers(0, 4))
    indices = np.array([[data.draw(st.integers(0, d - 1)) for d in shape[:depth]] for _ in range(count)],
                       np.int32).reshape(count, depth)
    x = make_array(data, dtype, shape, low=0)
    slices = x[tuple(indices.T)]
    matches_numpy(data, al.gather_nd, lambda a, i: a[tuple(i.T)], x, indices)

    def scattered(i, u):
        out = np.zeros(shape, u.dtype)
        np.add.at(out, tuple(i.T), u)
        return out
    matches_numpy(data, lambda i, u: al.scatter_nd(i, u, list(shape)), scattered, indices, slices)

    def updated(a, i, u):
        out = a.copy()
        for index, update in zip(i, u):
            out[tuple(index)] = update
        return out
    matches_numpy(data, al.tensor_scatter_nd_update, updated, x, indices, slices)


@SETTINGS
@given(st.data(), shapes(min_rank=1), st.sampled_from(NUMERIC))
def test_boolean_mask(data, shape, dtype):
    axis = data.draw(st.integers(0, len(shape) - 1))
    depth = data.draw(st.integers(1, len(shape) - axis))
    x = make_array(data, dtype, shape, low=0)
    mask = make_array(data, np.bool_, shape[axis:axis + depth])

    def reference(a, m):
        moved = a.reshape(a.shape[:axis] + (-1,) + a.shape[axis + depth:]) if a.size else \
            np.zeros(a.shape[:axis] + (int(np.prod(m.shape)),) + a.shape[axis + depth:], a.dtype)
        return np.take(moved, np.flatnonzero(m), axis=axis)
    matches_numpy(data, lambda t, m: al.boolean_mask(t, m, axis=axis), reference, x, mask, needs_ranks=True)


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(NUMERIC))
def test_broadcast_to_and_clip(data, shape, dtype):
    target = data.draw(shapes(max_rank=2)) + shape
    source = tuple(1 if data.draw(st.booleans()) else d for d in shape)
    x = make_array(data, dtype, source, low=0)
    matches_numpy(data, lambda t: al.broadcast_to(t, list(target)), lambda a: np.broadcast_to(a, target).copy(), x)
    low, high = make_array(data, dtype, shape, low=0, high=3), make_array(data, dtype, (), low=2, high=6)
    matches_numpy(data, al.clip_by_value, lambda a, lo, hi: np.maximum(np.minimum(a, hi), lo),
                  make_array(data, dtype, shape, low=0, high=8), low, high)


@SETTINGS
@given(st.data(), shapes(min_rank=1, min_dim=1), st.sampled_from([np.float32, np.float64]))
def test_softmax_and_norms(data, shape, dtype):
    axis = axis_of(data, shape)
    x = make_array(data, dtype, shape) * 20

    def softmax(a):
        e = np.exp(a - a.max(axis, keepdims=True))
        return (e / e.sum(axis, keepdims=True)).astype(a.dtype)
    matches_numpy(data, lambda t: al.nn.softmax(t, axis), softmax, x)
    matches_numpy(data, lambda t: al.nn.log_softmax(t, axis), lambda a: np.log(softmax(a)).astype(a.dtype),
                  x / 20)
    order = data.draw(st.sampled_from(["euclidean", 1, 2, np.inf, 3]))
    matches_numpy(data, lambda t: al.norm(t, order, axis=axis),
                  lambda a: np.linalg.norm(a, 2 if order == "euclidean" else order, axis=axis).astype(a.dtype), x)


@SETTINGS
@given(st.lists(st.booleans(), min_size=1, max_size=4), st.booleans())
def test_case_picks_the_first_true_predicate_like_python(predicates, with_default):
    def python(flags):
        for position, flag in enumerate(flags):
            if flag:
                return position
        return -1 if with_default else None

    def fn(flags):
        pairs = [(flags[k], lambda k=k: al.constant(k)) for k in range(len(predicates))]
        return al.case(pairs, default=(lambda: al.constant(-1)) if with_default else None)
    flags = np.array(predicates)
    expected = python(predicates)
    for run in (run_eager, run_traced):
        if expected is None:
            try:
                run(fn, flags)
            except al.errors.InvalidArgumentError as error:
                assert "none of the predicates is true" in str(error)
            else:
                raise AssertionError("expected an InvalidArgumentError")
        else:
            assert run(fn, flags) == expected
