"""Property tests: static shape/dtype inference agrees with what kernels compute.

For random shapes, dtypes and arguments, each op is run eagerly and traced
twice: on placeholders of the inputs' full shapes (the symbolic result's
shape must equal the kernel's) and on placeholders with some dims or ranks
unknown (it must be compatible). The partially known graph is also run on
the checking executor, which verifies every kernel result against its
inferred dtype and shape, and its values must equal the eager ones (and
the reference interpreter's, bit for bit).
"""

import numpy as np
from hypothesis import given, settings, strategies as st

import autoloop as al
from autoloop import dtypes
from autoloop.execute import CompiledGraph
from autoloop.shapes import TensorShape
from ophelpers import assert_same, run_eager, trace_specs
from tests.execute.equivalence import assert_equivalent

ALL_DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
NUMERIC = [np.int32, np.int64, np.float32, np.float64]
INTEGER = [np.int32, np.int64]

SETTINGS = settings(max_examples=50, deadline=None)


def shapes(min_rank=0, max_rank=3, min_dim=0, max_dim=4):
    return st.lists(st.integers(min_dim, max_dim), min_size=min_rank, max_size=max_rank).map(tuple)


def make_array(data, dtype, shape, low=-5, high=6):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind == "i":
        return rng.integers(low, high, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def partial_shape(data, shape):
    """`shape` with some dims (or its rank) forgotten."""
    mode = data.draw(st.sampled_from(["full", "partial", "unknown-rank"]), label="mode")
    if mode == "unknown-rank":
        return TensorShape(None)
    if mode == "full":
        return TensorShape(shape)
    return TensorShape([None if data.draw(st.booleans()) else d for d in shape])


def check_inference(data, fn, *arrays, value_dependent=False):
    """The properties of the module docstring, for `fn` on numpy `arrays`.

    A `value_dependent` result's shape depends on input values, which
    placeholders do not have: its full-shape trace need only be compatible.
    """
    expected = run_eager(fn, *arrays)
    flat_expected = [np.asarray(e) for e in (expected if isinstance(expected, list | tuple) else [expected])]

    full_specs = [(dtypes.as_dtype(a.dtype), TensorShape(np.shape(a))) for a in arrays]
    _, symbolic = trace_specs(fn, full_specs)
    assert len(symbolic) == len(flat_expected)
    for tensor, actual in zip(symbolic, flat_expected):
        assert tensor.dtype is dtypes.as_dtype(actual.dtype)
        if value_dependent:
            assert tensor.shape.is_compatible_with(TensorShape(actual.shape)), (tensor.shape, actual.shape)
        else:
            assert tensor.shape == TensorShape(actual.shape), (tensor.shape, actual.shape)
    partial_specs = [(dtype, partial_shape(data, shape)) for dtype, shape in full_specs]
    graph, symbolic = trace_specs(fn, partial_specs)
    for tensor, actual in zip(symbolic, flat_expected):
        assert tensor.dtype is dtypes.as_dtype(actual.dtype)
        assert tensor.shape.is_compatible_with(TensorShape(actual.shape)), (tensor.shape, actual.shape)
    inputs = [np.asarray(a)[()] if np.ndim(a) == 0 else a for a in arrays]
    results = CompiledGraph(graph, check=True)(*inputs)
    assert_same(list(results), flat_expected)
    assert_equivalent(graph, inputs)  # the reference interpreter agrees, bit for bit


REDUCTIONS = {
    "reduce_sum": NUMERIC, "reduce_mean": NUMERIC, "reduce_max": NUMERIC, "reduce_min": NUMERIC,
    "reduce_prod": NUMERIC, "reduce_any": [np.bool_], "reduce_all": [np.bool_],
}


@SETTINGS
@given(st.data(), st.sampled_from(sorted(REDUCTIONS)), shapes())
def test_reductions(data, name, shape):
    dtype = data.draw(st.sampled_from(REDUCTIONS[name]))
    rank = len(shape)
    axis_choice = st.integers(-rank, rank - 1) if rank else st.nothing()
    axis = data.draw(st.none() | axis_choice | st.lists(axis_choice, max_size=rank, unique=True))
    keepdims = data.draw(st.booleans())
    x = make_array(data, dtype, shape)
    check_inference(data, lambda t: getattr(al, name)(t, axis=axis, keepdims=keepdims), x)


@SETTINGS
@given(st.data(), st.sampled_from(["argmax", "argmin"]), shapes(min_rank=1, min_dim=1),
       st.sampled_from(NUMERIC), st.sampled_from(INTEGER))
def test_argmax_argmin(data, name, shape, dtype, output_type):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = make_array(data, dtype, shape)
    check_inference(data, lambda t: getattr(al, name)(t, axis, output_type=output_type), x)


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(ALL_DTYPES))
def test_transpose(data, shape, dtype):
    perm = data.draw(st.none() | st.permutations(list(range(len(shape)))))
    check_inference(data, lambda t: al.transpose(t, perm), make_array(data, dtype, shape))


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(ALL_DTYPES))
def test_expand_dims(data, shape, dtype):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check_inference(data, lambda t: al.expand_dims(t, axis), make_array(data, dtype, shape))


@SETTINGS
@given(st.data(), shapes(max_dim=2), st.sampled_from(ALL_DTYPES))
def test_squeeze(data, shape, dtype):
    ones = [i for i, d in enumerate(shape) if d == 1]
    axis = data.draw(st.none() | st.lists(st.sampled_from(ones), unique=True) if ones else st.none())
    check_inference(data, lambda t: al.squeeze(t, axis), make_array(data, dtype, shape))


@SETTINGS
@given(st.data(), shapes(max_rank=4), st.sampled_from(ALL_DTYPES), st.booleans())
def test_reshape(data, shape, dtype, as_tensor):
    target = list(data.draw(st.permutations(list(shape))))
    if len(target) >= 2 and data.draw(st.booleans()):  # merge two neighbours
        target[0:2] = [target[0] * target[1]]
    if target and 0 not in shape and data.draw(st.booleans()):
        target[data.draw(st.integers(0, len(target) - 1))] = -1
    x = make_array(data, dtype, shape)
    if as_tensor:
        check_inference(data, al.reshape, x, np.array(target, np.int32).reshape(len(target)),
                        value_dependent=True)
    else:
        check_inference(data, lambda t: al.reshape(t, target), x)


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(ALL_DTYPES), st.integers(1, 3))
def test_stack(data, shape, dtype, count):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    arrays = [make_array(data, dtype, shape) for _ in range(count)]
    check_inference(data, lambda *ts: al.stack(list(ts), axis), *arrays)


@SETTINGS
@given(st.data(), shapes(min_rank=1), st.sampled_from(ALL_DTYPES))
def test_unstack(data, shape, dtype):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    num = shape[axis]
    check_inference(data, lambda t: al.unstack(t, num, axis), make_array(data, dtype, shape))


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(ALL_DTYPES), st.booleans())
def test_tile(data, shape, dtype, as_tensor):
    multiples = data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape)))
    x = make_array(data, dtype, shape)
    if as_tensor:
        check_inference(data, al.tile, x, np.array(multiples, np.int32).reshape(len(shape)),
                        value_dependent=True)
    else:
        check_inference(data, lambda t: al.tile(t, multiples), x)


@SETTINGS
@given(st.data(), shapes(min_rank=1, min_dim=1), st.sampled_from(ALL_DTYPES), shapes(max_rank=2),
       st.sampled_from(INTEGER))
def test_gather(data, shape, dtype, indices_shape, indices_dtype):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    indices = make_array(data, indices_dtype, indices_shape, 0, shape[axis])
    check_inference(data, lambda p, i: al.gather(p, i, axis=axis), make_array(data, dtype, shape), indices)


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(INTEGER), st.integers(0, 4), st.sampled_from(ALL_DTYPES))
def test_one_hot(data, shape, indices_dtype, depth, dtype):
    axis = data.draw(st.sampled_from([-1] + list(range(len(shape) + 1))))
    indices = make_array(data, indices_dtype, shape, -1, depth + 1)
    check_inference(data, lambda i: al.one_hot(i, depth, axis=axis, dtype=dtype), indices)


def _broadcastable(data, shape):
    """A shape that broadcasts against `shape`: leading dims dropped, some dims made 1."""
    drop = data.draw(st.integers(0, len(shape)))
    return tuple(1 if data.draw(st.booleans()) else d for d in shape[drop:])


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(ALL_DTYPES))
def test_where_select(data, shape, dtype):
    condition = make_array(data, np.bool_, _broadcastable(data, shape))
    x = make_array(data, dtype, _broadcastable(data, shape))
    y = make_array(data, dtype, shape)
    check_inference(data, al.where, condition, x, y)


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(ALL_DTYPES))
def test_where_coordinates(data, shape, dtype):
    check_inference(data, al.where, make_array(data, dtype, shape), value_dependent=True)


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(ALL_DTYPES))
def test_fill_like_size_rank(data, shape, dtype):
    x = make_array(data, dtype, shape)
    check_inference(data, lambda t: (al.zeros_like(t), al.ones_like(t), al.size(t), al.rank(t),
                                     al.zeros(al.shape(t), t.dtype), al.fill(al.shape(t), al.reduce_sum(al.size(t)))), x)


@SETTINGS
@given(st.data(), st.integers(-6, 6), st.integers(-6, 6), st.integers(1, 4), st.sampled_from(NUMERIC))
def test_range(data, start, limit, step, dtype):
    delta = step if start <= limit else -step
    args = [np.array(v, dtype) for v in (start, limit, delta)]
    check_inference(data, al.range, *args, value_dependent=True)
    check_inference(data, lambda: al.range(*[a[()] for a in args]))  # known arguments


@SETTINGS
@given(st.data(), shapes(), st.sampled_from(NUMERIC))
def test_broadcasting_binary_ops(data, shape, dtype):
    x = make_array(data, dtype, _broadcastable(data, shape))
    check_inference(data, lambda a, b: (a + b, a < b, al.maximum(a, b)), x, make_array(data, dtype, shape))
