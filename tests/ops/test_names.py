"""TensorFlow's names that are not ops of the table: namespaces, dtypes, case/switch_case,
debugging assertions, name_scope, static values, SparseTensor expand_dims, absent names,
and the dtype rules and errors of the new ops, eagerly and traced."""

import importlib

import numpy as np
import pytest

import autoloop as al
from autoloop.errors import InvalidArgumentError
from ophelpers import run_eager, run_traced

MODES = {"eager": run_eager, "traced": run_traced}
F = np.arange(6, dtype=np.float32).reshape(2, 3)
I = np.arange(6, dtype=np.int32).reshape(2, 3)  # noqa: E741


@pytest.fixture(params=sorted(MODES))
def run(request):
    return MODES[request.param]


# -- every name of the issue exists where TensorFlow has it ---------------------------------
NAMES = {
    "autoloop": ["name_scope", "newaxis", "eye", "clip_by_value", "pad", "reverse", "roll", "sort", "argsort",
                 "split", "boolean_mask", "gather_nd", "scatter_nd", "tensor_scatter_nd_update", "einsum",
                 "tensordot", "broadcast_to", "add_n", "truediv", "case", "switch_case", "executing_eagerly",
                 "get_static_value", "ensure_shape", "int8", "int16", "uint8", "float16", "norm", "floor",
                 "round", "sign", "cumsum", "reduce_logsumexp", "assert_equal", "assert_less",
                 "assert_greater", "matmul"],
    "autoloop.autograph": ["to_code", "to_graph", "do_not_convert"],
    "autoloop.autograph.experimental": ["set_loop_options", "do_not_convert"],
    "autoloop.random": ["uniform", "normal", "set_seed"],
    "autoloop.math": ["floor", "ceil", "round", "sign", "log1p", "rsqrt", "cumsum", "cumprod", "reduce_logsumexp",
                      "reduce_std", "reduce_variance", "add", "subtract", "multiply", "divide", "truediv",
                      "floordiv", "floormod", "pow", "negative", "abs", "square", "sqrt", "exp", "log", "sin",
                      "cos", "tanh", "sigmoid", "maximum", "minimum", "reduce_sum", "reduce_mean", "reduce_max",
                      "reduce_min", "reduce_prod", "reduce_any", "reduce_all", "argmax", "argmin", "less",
                      "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
                      "logical_or", "logical_not", "add_n", "is_finite", "softmax", "log_softmax"],
    "autoloop.nn": ["relu", "softmax", "log_softmax", "softplus", "sigmoid", "tanh"],
    "autoloop.linalg": ["matmul", "norm", "eye", "matvec", "einsum", "tensordot"],
    "autoloop.debugging": ["assert_equal", "assert_less", "assert_greater", "Assert"],
    "autoloop.sparse": ["expand_dims", "to_dense", "SparseTensor"],
}


@pytest.mark.parametrize("module", sorted(NAMES))
def test_the_names_exist(module):
    namespace = importlib.import_module(module)
    missing = [name for name in NAMES[module] if not hasattr(namespace, name)]
    assert not missing, f"{module} lacks {missing}"


def test_namespaces_hold_the_same_functions_as_the_top_level():
    assert al.math.floor is al.floor and al.linalg.matmul is al.matmul and al.nn.sigmoid is al.sigmoid
    assert al.autograph.to_code is al.to_code and al.autograph.experimental.set_loop_options is al.set_loop_options
    assert al.truediv is al.divide and al.math.floormod is al.mod


@pytest.mark.parametrize("name, why, instead", [
    ("data", "no data module", "pass numpy arrays or tensors to your function"),
    ("distribute", "no distribute module", "shard its batch with autoloop.distributed"),
    ("strings", "no strings module", "keep strings as Python values"),
])
def test_deliberately_absent_names_say_so_and_what_to_use(name, why, instead):
    with pytest.raises(AttributeError, match=f"autoloop has {why}.*{instead}"):
        getattr(al, name)
    assert not hasattr(al, name)


def test_an_unknown_name_is_a_plain_attribute_error():
    with pytest.raises(AttributeError, match="module 'autoloop' has no attribute 'no_such_name'"):
        al.no_such_name  # noqa: B018


# -- dtypes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, numpy_type", [("int8", np.int8), ("int16", np.int16), ("uint8", np.uint8),
                                              ("float16", np.float16)])
def test_new_dtypes_round_trip(name, numpy_type):
    dtype = getattr(al, name)
    assert dtype.name == name and dtype.as_numpy_dtype is numpy_type and al.as_dtype(name) is dtype
    assert al.as_dtype(numpy_type) is dtype and al.constant(np.zeros(2, numpy_type)).dtype is dtype
    assert al.constant([1, 2], dtype=dtype).numpy().dtype == numpy_type
    assert dtype.min == np.iinfo(numpy_type).min if dtype.is_integer else dtype.min == -np.inf
    assert dtype.is_unsigned == (name == "uint8")


def test_tensorflow_dtype_aliases():
    assert al.half is al.float16 and al.double is al.float64 and al.as_dtype("half") is al.float16


def test_a_python_number_out_of_range_for_a_narrow_dtype_is_an_error(run):
    with pytest.raises(ValueError, match="out of range for uint8"):
        run(lambda x: x + 300, np.zeros(2, np.uint8))


def test_function_inputs_keep_narrow_dtypes():
    double = al.function(lambda x: x * 2)
    assert double(np.array([100], np.int8)).numpy().tolist() == [-56]  # int8 wraps, as in TensorFlow
    assert double(np.array([1.5], np.float16)).dtype is al.float16


def test_an_unsupported_numpy_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="unsupported dtype.*uint16"):
        al.function(lambda x: x)(np.zeros(2, np.uint16))


WRONG_DTYPES = [
    ("floor-int", lambda x: al.floor(x), I, "Floor does not take int32"),
    ("neg-uint8", lambda x: -al.cast(x, al.uint8), I, "Neg does not take uint8"),
    ("abs-uint8", lambda x: al.abs(al.cast(x, al.uint8)), I, "Abs does not take uint8"),
    ("matmul-int8", lambda x: al.matmul(al.cast(x, al.int8), al.cast(al.transpose(x), al.int8)), I,
     "MatMul does not take int8"),
    ("softmax-int", lambda x: al.nn.softmax(x), I, "Softmax does not take int32"),
    ("sort-bool", lambda x: al.sort(x > 1), I, "Sort does not take bool"),
    ("logsumexp-int", lambda x: al.reduce_logsumexp(x), I, "reduce_logsumexp takes float16, float32 or float64"),
    ("variance-int", lambda x: al.math.reduce_variance(x), I, "reduce_variance takes float"),
    ("norm-int", lambda x: al.norm(x), I, "norm takes float16, float32 or float64 tensors, got a int32"),
    ("clip-mixed", lambda x: al.clip_by_value(x, al.constant(0.0), 1), I, "expected to be a int32 tensor"),
    ("add_n-mixed", lambda x: al.add_n([x, al.cast(x, al.int64)]), I, "expected to be a int32 tensor"),
    ("gather_nd-float-indices", lambda x: al.gather_nd(x, x), F, "GatherNd does not take float32"),
    ("uniform-bool", lambda x: al.random.uniform([2], dtype=al.bool), I, "uniform does not make bool numbers"),
    ("normal-int", lambda x: al.random.normal([2], dtype=al.int32), I, "normal does not make int32 numbers"),
    ("boolean_mask-int-mask", lambda x: al.boolean_mask(x, x[0]), I, "mask must be a bool tensor"),
    ("einsum-mixed", lambda x: al.einsum("ij,ij->", x, al.cast(x, al.float32)), I, "expected to be a int32 tensor"),
]


@pytest.mark.parametrize("fn, x, message", [c[1:] for c in WRONG_DTYPES], ids=[c[0] for c in WRONG_DTYPES])
def test_wrong_dtypes_raise_type_error(run, fn, x, message):
    with pytest.raises(TypeError, match=message):
        run(fn, x)


BAD_SHAPES = [
    ("cumsum-scalar", lambda x: al.cumsum(x[0, 0]), "Cumsum needs a tensor of rank >= 1"),
    ("cumsum-axis", lambda x: al.cumsum(x, 2), "axis 2 is out of range"),
    ("add_n-shapes", lambda x: al.add_n([x, x[0]]), "all inputs must have one shape"),
    ("clip-bound-grows", lambda x: al.clip_by_value(x[0], x, 9.0), "does not broadcast to the shape"),
    ("pad-pairs", lambda x: al.pad(x, [[1, 1]]), "one \\[before, after\\] pair per axis"),
    ("pad-reflect-too-far", lambda x: al.pad(x, [[0, 0], [3, 0]], "REFLECT"), "at most 2 on each side"),
    ("split-unequal", lambda x: al.split(x, 2, axis=1), "does not split into 2 equal pieces"),
    ("split-sizes", lambda x: al.split(x, [1, 2]), r"sizes \[1, 2\] add up to 3, but the axis has size 2"),
    ("broadcast_to-shrink", lambda x: al.broadcast_to(x, [3]), "cannot broadcast shape"),
    ("einsum-sizes", lambda x: al.einsum("ij,ij->i", x, al.transpose(x)), "label 'i' of 'ij,ij->i' has sizes"),
    ("einsum-terms", lambda x: al.einsum("ij->i", x, x), "has 1 input terms but 2 tensors"),
    ("tensordot-axes", lambda x: al.tensordot(x, x, 1), "label|sizes"),
    ("gather_nd-depth", lambda x: al.gather_nd(x, [[0, 0, 0]]), "coordinates of length 3 do not fit"),
    ("scatter_nd-updates", lambda x: al.scatter_nd([[0]], x, [4, 3]), "updates must have shape"),
    ("boolean_mask-shape", lambda x: al.boolean_mask(x, [True]), "does not match axes"),
    ("ensure_shape", lambda x: al.ensure_shape(x, [3, None]), "not compatible with the expected shape"),
    ("norm-ord", lambda x: al.norm(x, "fro", axis=0), "is not a vector norm"),
    ("softmax-scalar", lambda x: al.nn.softmax(x[0, 0]), "needs a tensor of rank >= 1"),
    ("roll-counts", lambda x: al.roll(x, [1, 2], 0), "one shift per axis"),
    ("reverse-twice", lambda x: al.reverse(x, [0, 0]), "names an axis twice"),
]


@pytest.mark.parametrize("fn, message", [c[1:] for c in BAD_SHAPES], ids=[c[0] for c in BAD_SHAPES])
def test_bad_shapes_raise_value_error(run, fn, message):
    with pytest.raises(ValueError, match=message):
        run(fn, F)


RUNTIME_ERRORS = [
    ("gather_nd-out-of-range", lambda x, i: al.gather_nd(x, i), np.array([[2, 0]], np.int32),
     r"index 2 is out of range \[0, 2\)"),
    ("scatter_nd-out-of-range", lambda x, i: al.scatter_nd(i, x[0, :1], [2]), np.array([[-1]], np.int32),
     r"index -1 is out of range \[0, 2\)"),
    ("ensure_shape", lambda x, i: al.ensure_shape(al.boolean_mask(x, i > 0), [1, 3]), np.array([1, 1], np.int32),
     r"shape \(2, 3\) is not compatible with the expected shape \(1, 3\)"),
    ("uniform-int-range", lambda x, i: al.random.uniform([2], i[0], 3, dtype=al.int32), np.array([5], np.int32),
     "need minval < maxval"),
]


@pytest.mark.parametrize("fn, extra, message", [c[1:] for c in RUNTIME_ERRORS], ids=[c[0] for c in RUNTIME_ERRORS])
def test_bad_values_raise_invalid_argument_when_run(run, fn, extra, message):
    with pytest.raises(InvalidArgumentError, match=message):
        run(fn, F, extra)


def test_shapes_known_while_tracing():
    seen = {}

    @al.function(autograph=False)
    def f(x):
        seen["split"] = [piece.shape.as_list() for piece in al.split(x, [1, -1], axis=1)]
        seen["pad"] = al.pad(x, [[1, 1], [0, 2]]).shape.as_list()
        seen["mask"] = al.boolean_mask(x, x[:, 0] > 1).shape.as_list()
        seen["einsum"] = al.einsum("ij,kj->ik", x, x).shape.as_list()
        return x
    f(F)
    assert seen == {"split": [[2, 1], [2, 2]], "pad": [4, 5], "mask": [None, 3], "einsum": [2, 2]}


# -- case / switch_case against plain Python -------------------------------------------------
def _python_case(x):
    if x < 0:
        return -1
    if x == 0:
        return 0
    return 1


@pytest.mark.parametrize("value", [-3, 0, 7])
def test_case_matches_python(run, value):
    def fn(x):
        return al.case([(x < 0, lambda: al.constant(-1)), (al.equal(x, 0), lambda: al.constant(0))],
                       default=lambda: al.constant(1))
    assert run(fn, np.int32(value)) == _python_case(value)


@pytest.mark.parametrize("value", [-3, 0, 7])
def test_case_without_default_uses_the_last_pair_and_fails_when_nothing_holds(run, value):
    def fn(x):
        return al.case([(x < 0, lambda: (al.constant(-1),)), (x > 0, lambda: [al.constant(1)])])
    if value == 0:
        with pytest.raises(InvalidArgumentError, match="none of the predicates is true"):
            run(fn, np.int32(value))
    else:
        assert run(fn, np.int32(value)) == _python_case(value)  # one-element results are unpacked


def test_case_strict_keeps_one_element_tuples(run):
    assert run(lambda x: al.case([(x > 0, lambda: (x,))], default=lambda: (-x,), strict=True),
               np.int32(2)) == (2,)


def test_case_exclusive_rejects_two_true_predicates(run):
    def fn(x):
        return al.case([(x > 0, lambda: x), (x > 1, lambda: x + 1)], default=lambda: x, exclusive=True)
    assert run(fn, np.int32(1)) == 1
    with pytest.raises(InvalidArgumentError, match="more than one predicate is true"):
        run(fn, np.int32(5))


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 3, 9])
def test_switch_case_matches_python(run, index):
    branches = [lambda: al.constant(10.0), lambda: al.constant(20.0), lambda: al.constant(30.0)]
    expected = [10.0, 20.0, 30.0][index] if 0 <= index < 3 else 30.0  # out of range: the last branch
    assert run(lambda i: al.switch_case(i, branches), np.int32(index)) == expected
    with_default = run(lambda i: al.switch_case(i, {1: branches[1], 0: branches[0]}, default=lambda: al.constant(-1.0)),
                       np.int64(index))
    assert with_default == ({0: 10.0, 1: 20.0}.get(index, -1.0))


def test_switch_case_traces_every_branch_once_into_conds():
    calls = []

    def branch(k):
        def fn():
            calls.append(k)
            return al.constant(k)
        return fn

    @al.function(autograph=False)
    def f(i):
        return al.switch_case(i, [branch(0), branch(1), branch(2)])
    graph = f.get_concrete_function(np.int32(0)).graph
    assert sorted(calls) == [0, 1, 2, 2]  # the last branch also serves as the default
    assert [node.op for node in graph.walk()].count("Cond") == 3
    assert [f(np.int32(k)).numpy() for k in (0, 1, 2, 5)] == [0, 1, 2, 2]


@pytest.mark.parametrize("bad, error, words", [
    (lambda i: al.switch_case(i, {0: lambda: i, 2: lambda: i}), ValueError, "keys must be 0, 1"),
    (lambda i: al.switch_case(al.cast(i, al.float32), [lambda: i]), TypeError, "int32 or int64 scalar"),
    (lambda i: al.case([(i, lambda: i)]), TypeError, "must be a bool scalar"),
    (lambda i: al.case([]), TypeError, "non-empty list"),
    (lambda i: al.case([(i > 0, lambda: i)], default=lambda: al.cast(i, al.float32)), TypeError, "dtype"),
])
def test_case_errors(bad, error, words):
    with pytest.raises(error, match=words):  # traced: eagerly only the chosen branch runs, as with cond
        run_traced(bad, np.int32(1))


# -- debugging assertions ---------------------------------------------------------------------
@pytest.mark.parametrize("assertion, holds, fails", [
    (al.debugging.assert_equal, (I, I), (I, I + 1)),
    (al.debugging.assert_less, (I, I + 1), (I, I)),
    (al.debugging.assert_greater, (I + 1, I), (I, I)),
])
def test_assertions_pass_silently_and_fail_with_the_values(run, assertion, holds, fails):
    assert run(lambda x, y: (assertion(x, y), x + 0)[1], *holds).tolist() == holds[0].tolist()
    with pytest.raises(InvalidArgumentError, match=r"my message.*did not hold element-wise.*\[\[0 1 2\]"):
        run(lambda x, y: (assertion(x, y, message="my message"), x + 0)[1], *fails)


def test_an_assertion_on_constants_fails_while_tracing():
    @al.function(autograph=False)
    def f(x):
        al.debugging.assert_less(al.constant(3), 2, message="static")
        return x
    with pytest.raises(InvalidArgumentError, match=r"static.*Condition x < y"):
        f.get_concrete_function(np.int32(0))


def test_an_assertion_in_a_graph_checks_every_run():
    @al.function
    def f(x):
        for i in al.range(3):
            al.debugging.assert_less(x + i, 10)
        return x
    assert f(al.constant(7)).numpy() == 7
    with pytest.raises(InvalidArgumentError, match="x < y"):
        f(al.constant(8))


# -- graph-building facts -------------------------------------------------------------------------
def test_executing_eagerly_and_get_static_value():
    seen = {}

    @al.function(autograph=False)
    def f(x):
        seen["eager"] = al.executing_eagerly()
        seen["static"] = al.get_static_value(al.shape(x))
        seen["dynamic"] = al.get_static_value(x + 1)
        return x
    f(F)
    assert al.executing_eagerly() and seen["eager"] is False
    assert seen["static"].tolist() == [2, 3] and seen["dynamic"] is None
    assert al.get_static_value(al.constant(4)) == 4 and al.get_static_value(5) == 5


def test_name_scope_prefixes_node_names_in_nested_scopes_and_loops():
    @al.function
    def f(x):
        with al.name_scope("outer") as outer:
            y = x * 2
            with al.name_scope("inner") as inner:
                i = al.constant(0)
                while i < 3:
                    y = y + 1.0
                    i += 1
        return y + 1.0, outer, inner
    concrete = f.get_concrete_function(F)
    _, outer, inner = concrete._structured_outputs
    assert (outer, inner) == ("outer/", "outer/inner/")
    names = [node.name for node in concrete.graph.walk()]
    assert "outer/mul" in names and any(n.startswith("outer/inner/") and "add" in n for n in names)
    assert "add" in names  # after the block: no prefix; `x * 2` is "mul" and `y + 1.0` "add", as TF names them
    assert f(F)[0].numpy().tolist() == (F * 2 + 4).tolist()


def test_name_scope_eagerly_and_bad_names():
    with al.name_scope("eager") as scope:
        assert scope == "eager/" and (al.constant(1) + 1).numpy() == 2
    with pytest.raises(ValueError, match="not a valid scope name"):
        with al.name_scope("bad name"):
            pass


def test_an_eager_name_scope_does_not_leak_into_a_trace():
    f = al.function(lambda x: x + 1.0, autograph=False)
    with al.name_scope("caller"):
        graph = f.get_concrete_function(F).graph
    assert not any(node.name.startswith("caller/") for node in graph.walk())


def test_newaxis_and_tensor_T(run):
    assert run(lambda x: x[:, al.newaxis], F).shape == (2, 1, 3)
    assert run(lambda x: x.T, F).tolist() == F.T.tolist()


# -- SparseTensor expand_dims ------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_sparse_expand_dims_matches_dense(run, axis):
    indices = np.array([[0, 1], [1, 2]], np.int64)
    values = np.array([5.0, 6.0], np.float32)

    def fn(i, v):
        expanded = al.sparse.expand_dims(al.SparseTensor(i, v, [2, 3]), axis)
        return expanded.indices, expanded.values, expanded.dense_shape
    new_indices, new_values, dense_shape = run(fn, indices, values)
    dense = np.zeros(dense_shape, np.float32)
    dense[tuple(new_indices.T)] = new_values
    original = np.zeros((2, 3), np.float32)
    original[tuple(indices.T)] = values
    assert np.array_equal(dense, np.expand_dims(original, axis))


def test_sparse_expand_dims_errors():
    with pytest.raises(TypeError, match="takes a SparseTensor"):
        al.sparse.expand_dims(al.constant([1]), 0)
    # No axis appends one, as TensorFlow's default does.
    assert al.sparse.expand_dims(al.SparseTensor([[0]], [1], [2])).dense_shape.numpy().tolist() == [2, 1]


# -- TensorArray additions --------------------------------------------------------------------
def test_tensor_array_identity_close_and_split_concat_round_trip(run):
    def fn(x):
        ta = al.TensorArray(al.float32, size=3).split(x, [2, 0, 1])
        assert ta.close() is None
        return ta.identity().concat(), ta.read(1)
    joined, empty = run(fn, np.arange(6, dtype=np.float32).reshape(3, 2))
    assert joined.tolist() == np.arange(6).reshape(3, 2).tolist() and empty.shape == (0, 2)


def test_tensor_array_split_lengths_must_add_up(run):
    with pytest.raises(InvalidArgumentError, match="add up to the 3 rows"):
        run(lambda x: al.TensorArray(al.float32, size=2).split(x, [1, 1]).read(0), np.zeros((3, 2), np.float32))


# -- the autograph namespace ---------------------------------------------------------------------
def _grow(n):
    x = al.constant([0])
    i = al.constant(0)
    while i < n:
        al.autograph.experimental.set_loop_options(shape_invariants=[(x, al.TensorShape([None]))])
        x = al.concat([x, [i]], 0)
        i += 1
    return x


def test_autograph_namespace_converts_and_sets_loop_options():
    assert "while_stmt" in al.autograph.to_code(_grow)
    assert al.function(_grow)(al.constant(3)).numpy().tolist() == [0, 0, 1, 2]
    graph_fn = al.autograph.to_graph(_grow)
    assert graph_fn(al.constant(2)).numpy().tolist() == [0, 0, 1]  # eagerly, Python semantics
    assert al.autograph.do_not_convert(_python_case) is _python_case


def test_to_code_and_to_graph_accept_an_autoloop_function():
    decorated = al.function(_grow)
    assert al.to_code(decorated) == al.to_code(_grow)
    assert al.to_graph(decorated) is al.to_graph(_grow)


@pytest.mark.parametrize("value, dtype", [(2 ** 31 - 1, "int32"), (-2 ** 31, "int32"), (2 ** 31, "int64"),
                                          (-2 ** 40, "int64"), ([1, 2 ** 40], "int64")])
def test_python_ints_beyond_int32_become_int64(value, dtype):
    tensor = al.constant(value)
    assert tensor.dtype.name == dtype and np.array_equal(tensor.numpy(), np.array(value))


def test_a_python_int_beyond_int64_is_a_type_error():
    with pytest.raises(TypeError, match="fits no integer dtype"):
        al.constant(2 ** 63)
