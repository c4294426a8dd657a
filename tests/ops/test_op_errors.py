"""Bad input gives the same clear error eagerly and traced: the error type, and a
message that says what was expected and what was found."""

import numpy as np
import pytest

import autoloop as al
from autoloop.errors import InvalidArgumentError
from ophelpers import run_eager, run_traced

F = np.ones((2, 3), np.float32)
I = np.arange(6, dtype=np.int32).reshape(2, 3)  # noqa: E741
B = I > 2
MODES = {"eager": run_eager, "traced": run_traced}


@pytest.fixture(params=sorted(MODES))
def run(request):
    return MODES[request.param]


WRONG_DTYPES = [
    ("reduce_sum-bool", lambda x: al.reduce_sum(x), B, "Sum does not take bool"),
    ("reduce_mean-bool", lambda x: al.reduce_mean(x, 0), B, "Mean does not take bool"),
    ("reduce_any-float", lambda x: al.reduce_any(x), F, "Any does not take float32"),
    ("argmax-bool", lambda x: al.argmax(x), B, "ArgMax does not take bool"),
    ("gather-float-indices", lambda x: al.gather(x, x), F, "GatherV2 does not take float32"),
    ("one_hot-float-indices", lambda x: al.one_hot(x, 3), F, "OneHot does not take float32"),
    ("where-int-condition", lambda x: al.where(x, x, x), I, "SelectV2 does not take int32"),
    ("where-mixed-values", lambda x: al.where(x > 1, x, al.cast(x, al.float32)), I,
     "expected to be a int32 tensor but is a float32"),
    ("stack-mixed", lambda x: al.stack([x, al.cast(x, al.int64)]), I, "expected to be a int32 tensor but is a int64"),
    ("reshape-float-shape", lambda x: al.reshape(x, al.cast(al.shape(x), al.float32)), I,
     "a shape must be an integer tensor, got a float32"),
    ("range-bool", lambda x: al.range(x[0, 0] > 1), I, "range: arguments must be numbers, got bool"),
    ("Assert-int-condition", lambda x: al.Assert(x[0, 0], ["no"]), I, "Assert does not take int32"),
    ("fill-float-dims", lambda x: al.fill(al.cast(al.shape(x), al.float32), 1), F, "a shape must be an integer"),
    ("axis-float", lambda x: al.reduce_sum(x, 1.0), F, "axis must be an integer, got float"),
    ("argmax-float-output-type", lambda x: al.argmax(x, output_type=al.float32), F,
     "output_type must be int32 or int64"),
]


@pytest.mark.parametrize("fn, x, message", [c[1:] for c in WRONG_DTYPES], ids=[c[0] for c in WRONG_DTYPES])
def test_wrong_dtypes_raise_type_error(run, fn, x, message):
    with pytest.raises(TypeError, match=message):
        run(fn, x)


BAD_AXES = [
    ("reduce_sum", lambda x: al.reduce_sum(x, 2), "axis 2 is out of range for a tensor of rank 2"),
    ("reduce_max-list", lambda x: al.reduce_max(x, [0, -3]), "axis -3 is out of range"),
    ("argmin", lambda x: al.argmin(x, 2), "axis 2 is out of range"),
    ("expand_dims", lambda x: al.expand_dims(x, 4), "axis 4 is out of range"),
    ("squeeze-not-one", lambda x: al.squeeze(x, 1), r"cannot squeeze axis 1 of shape \(2, 3\): its size is 3"),
    ("transpose-not-a-permutation", lambda x: al.transpose(x, [0, 0]), "perm must be a permutation of 0..1"),
    ("stack", lambda x: al.stack([x, x], axis=4), "axis 4 is out of range"),
    ("unstack", lambda x: al.unstack(x, axis=2), "axis 2 is out of range"),
    ("gather", lambda x: al.gather(x, [0], axis=-3), "axis -3 is out of range"),
    ("one_hot", lambda x: al.one_hot(x, 2, axis=4), "axis 4 is out of range"),
]


@pytest.mark.parametrize("fn, message", [c[1:] for c in BAD_AXES], ids=[c[0] for c in BAD_AXES])
def test_bad_axes_raise_value_error(run, fn, message):
    with pytest.raises(ValueError, match=message):
        run(fn, I)


INCOMPATIBLE_SHAPES = [
    ("reshape-count", lambda x: al.reshape(x, [4]), r"cannot reshape a tensor of shape \(2, 3\) \(6 elements\) to "
                                                    r"\[4\] \(4 elements\)"),
    ("reshape-not-a-multiple", lambda x: al.reshape(x, [4, -1]), "6 is not a multiple of 4"),
    ("reshape-two-unknowns", lambda x: al.reshape(x, [-1, -1]), "at most one dimension may be -1"),
    ("stack", lambda x: al.stack([x, al.transpose(x)]), r"all inputs must have one shape, got \(2, 3\), \(3, 2\)"),
    ("where-broadcast", lambda x: al.where(x > 1, x, al.transpose(x)), "incompatible shapes"),
    ("tile-multiples", lambda x: al.tile(x, [2]), r"expected one multiple per axis of the input \(2 for shape"),
    ("unstack-num", lambda x: al.unstack(x, num=3), "asked for 3 tensors, but axis 0 of shape"),
    ("argmax-scalar", lambda x: al.argmax(x[0, 0]), "needs a tensor of rank >= 1"),
    ("Assert-vector", lambda x: al.Assert(x > 0, ["x"]), "the condition must be a scalar"),
    ("fill-matrix-dims", lambda x: al.fill(x, 1), "the shape must be a 1-D tensor|a shape must be a 1-D tensor"),
    ("gather-constant-index-out-of-range", lambda x: al.gather(x, [5]), r"index 5 is out of range \[0, 2\)"),
]


@pytest.mark.parametrize("fn, message", [c[1:] for c in INCOMPATIBLE_SHAPES], ids=[c[0] for c in INCOMPATIBLE_SHAPES])
def test_incompatible_shapes_raise_value_error(run, fn, message):
    with pytest.raises(ValueError, match=message):
        run(fn, I)


def test_traced_errors_name_the_user_line():
    with pytest.raises(ValueError, match=r"in Reshape at .*test_op_errors.py:\d+"):
        run_traced(lambda x: al.reshape(x, [4]), I)


# -- errors that only values can show: raised when the graph runs -------------------------
RUNTIME_ERRORS = [
    ("gather-index", lambda x, i: al.gather(x, i), (I, np.array([0, 2], np.int32)), r"index 2 is out of range \[0, 2\)"),
    ("gather-negative-index", lambda x, i: al.gather(x, i), (I, np.array(-1, np.int32)), "index -1 is out of range"),
    ("range-zero-delta", lambda d: al.range(0, 5, d), (np.array(0, np.int32),), "delta must not be 0"),
    ("range-backwards", lambda n: al.range(n), (np.array(-2, np.int32),),
     r"start \(0\) must be <= limit \(-2\) when delta \(1\) is positive"),
    ("reshape-dynamic", lambda x, s: al.reshape(x, s), (I, np.array([4], np.int32)), "reshape|Reshape"),
    ("unstack-dynamic", lambda x, n: al.unstack(al.reshape(x, [n, -1]), num=2), (I, np.array(3, np.int32)),
     "asked for 2 tensors, but axis 0 of shape"),
]


@pytest.mark.parametrize("fn, args, message", [c[1:] for c in RUNTIME_ERRORS], ids=[c[0] for c in RUNTIME_ERRORS])
def test_value_errors_raise_invalid_argument_when_the_graph_runs(fn, args, message):
    with pytest.raises(InvalidArgumentError, match=message):
        run_traced(fn, *args)
    with pytest.raises(ValueError, match=message):  # eagerly, values are known at once
        run_eager(fn, *args)


# -- static arguments must be known while tracing ---------------------------------------
STATIC_ARGUMENTS = [
    ("reduce_sum-axis", lambda x, a: al.reduce_sum(x, a), "Sum: axis must be known while tracing"),
    ("expand_dims-axis", lambda x, a: al.expand_dims(x, a), "ExpandDims: axis must be known while tracing"),
    ("argmax-axis", lambda x, a: al.argmax(x, a), "ArgMax: axis must be known while tracing"),
    ("transpose-perm", lambda x, a: al.transpose(x, al.stack([a, 1 - a])), "Transpose: perm must be known"),
    ("one_hot-depth", lambda x, a: al.one_hot(x, a), "OneHot: depth must be known while tracing"),
    ("stack-axis", lambda x, a: al.stack([x], a), "Pack: axis must be known while tracing"),
]


@pytest.mark.parametrize("fn, message", [c[1:] for c in STATIC_ARGUMENTS], ids=[c[0] for c in STATIC_ARGUMENTS])
def test_computed_static_arguments_raise_type_error_when_traced(fn, message):
    axis = np.array(1, np.int32)
    assert run_eager(fn, I, axis) is not None  # an eager tensor's value is known
    with pytest.raises(TypeError, match=message):
        run_traced(fn, I, axis)


def test_unstack_needs_a_known_size():
    with pytest.raises(ValueError, match="cannot infer the number of tensors .* pass num="):
        run_traced(lambda x, n: al.unstack(al.reshape(x, [n, -1])), I, np.array(2, np.int32))


def test_gather_batch_dims_is_not_supported():
    with pytest.raises(NotImplementedError, match="batch_dims"):
        al.gather(I, [0], batch_dims=1)


def test_where_needs_both_values():
    with pytest.raises(ValueError, match="give both x and y, or neither"):
        al.where(B, x=I)
