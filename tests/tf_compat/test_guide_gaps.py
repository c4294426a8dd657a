"""Small gaps TensorFlow's guides found (scripts/tf_guides.py): TF's spellings and rules."""

import numpy as np
import pytest

import autoloop as al


def test_dtype_prints_as_tensorflow_does():
    # print(x.dtype) in TF shows <dtype: 'float32'>; repr stays the importable name.
    assert str(al.float32) == "<dtype: 'float32'>" and f"{al.int32}" == "<dtype: 'int32'>"
    assert repr(al.float32) == "autoloop.float32" and str([al.bool]) == "[autoloop.bool]"
    assert str(al.constant([1.0]).dtype) == "<dtype: 'float32'>"


@pytest.mark.parametrize("which", ["numpy", "jax"])
def test_function_returns_python_numbers_as_tensors(which):
    if which == "jax":
        pytest.importorskip("jax")
    foo = 1

    @al.function(backend=which)
    def buggy_add():
        return 1 + foo

    @al.function(backend=which)
    def several(x):
        return x, 3, None, [1.5, True], np.float64(2.0)

    result = buggy_add()
    assert isinstance(result, al.Tensor) and result.dtype == al.int32 and result.numpy() == 2
    x, three, none, (half, true), two = several(al.constant(1))
    assert none is None and three.dtype == al.int32 and three.numpy() == 3
    assert half.dtype == al.float32 and true.dtype == al.bool and bool(true.numpy())
    assert two.dtype == al.float64 and two.numpy() == 2.0
    assert "TensorSpec(shape=(), dtype=autoloop.int32, name=None)" in str(buggy_add.get_concrete_function())


def test_matrix_prints_on_its_own_line_as_in_tensorflow():
    assert str(al.constant([[1, 2], [3, 4]])) == "autoloop.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)"
    assert str(al.constant([1, 2])) == "autoloop.Tensor([1 2], shape=(2,), dtype=int32)"


def test_sparse_tensor_prints_its_parts_and_converts_to_dense():
    st = al.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    assert str(st).startswith("SparseTensor(indices=autoloop.Tensor(\n[[0 0]\n [1 2]], shape=(2, 2), dtype=int64), "
                              "values=autoloop.Tensor([1 2], shape=(2,), dtype=int32), ")
    expected = [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]
    assert al.sparse.to_dense(st).numpy().tolist() == expected
    assert al.sparse.to_dense(st, default_value=-1).numpy().tolist() == [[1, -1, -1, -1], [-1, -1, 2, -1],
                                                                         [-1, -1, -1, -1]]
    for backend in ("numpy", "jax"):
        if backend == "jax":
            pytest.importorskip("jax")
        dense = al.function(lambda s: al.sparse.to_dense(s), backend=backend)(st)
        assert dense.dtype == al.int32 and dense.numpy().tolist() == expected
    with pytest.raises(TypeError, match="sparse.to_dense takes a SparseTensor, got Tensor"):
        al.sparse.to_dense(al.constant([1]))


def test_without_a_tensor_the_first_operand_fixes_the_dtype():
    # TensorFlow converts the first and gives its dtype to a Python second: maximum(0., [1, -1]).
    result = al.maximum(0., [1, -1])
    assert result.dtype == al.float32 and result.numpy().tolist() == [1.0, 0.0]
    assert al.maximum([1, -1], 0).dtype == al.int32
    with pytest.raises(TypeError, match="Cannot convert 0.0 to autoloop tensor of dtype int32"):
        al.maximum([1, -1], 0.)

    @al.function
    def my_relu(x):
        return al.maximum(0., x)

    assert my_relu([1, -1]).numpy().tolist() == [1.0, 0.0]
    assert al.where([True, False], [1., 2.], [3, 4]).numpy().tolist() == [1.0, 4.0]


def test_reading_an_unassigned_variable_says_used_before_assignment():
    # TensorFlow's AutoGraph reference tests match "'i' is used before assignment".
    def creates(c):
        if c:
            i = 1
        return i

    with pytest.raises(UnboundLocalError, match="'i' is used before assignment: it is read at .*no path that ran"):
        al.function(creates)(al.constant(False))
    with pytest.raises(UnboundLocalError, match="'i' is used before assignment"):
        al.function(creates)(False)


def test_empty_name_scope_goes_back_to_the_root():
    # tf.name_scope('') is valid in TensorFlow (AutoGraph's reference tests use it).
    with al.name_scope("") as scope:
        assert scope == ""
    names = {}

    @al.function
    def f(x):
        with al.name_scope("outer") as outer:
            with al.name_scope("") as root:
                y = al.identity(x, name="c")
                with al.name_scope("inner") as inner:
                    names["scopes"] = (outer, root, inner)
            z = al.identity(y, name="d")
            if x > 0:
                with al.name_scope(""):
                    z = z + 1
        return z

    assert f(al.constant(1)).numpy() == 2
    assert names["scopes"] == ("outer/", "", "inner/")
    graph_names = [node.name for node in f.get_concrete_function(al.constant(1)).graph.nodes]
    assert "c" in graph_names and "outer/d" in graph_names
    with pytest.raises(ValueError, match="'-x' is not a valid scope name"):
        with al.name_scope("-x"):
            pass


def test_branches_with_lists_of_different_lengths_say_the_lengths():
    def imbalanced(x):
        parts = al.unstack(x) if al.size(x) > 0 else []
        return len(parts)

    with pytest.raises(ValueError, match="is a Python list of 0 items in the else branch and a Python list of 1 "
                                         "item in the if branch"):
        al.function(imbalanced)(al.constant([1.0]))


@pytest.mark.parametrize("which", ["numpy", "jax"])
def test_py_function_and_numpy_function_as_decorators(which, capsys):
    if which == "jax":
        pytest.importorskip("jax")

    scalar = al.TensorSpec([], al.float32)  # backend="jax" needs the result's shape

    @al.py_function(Tout=scalar)
    def py_plus(x, y):
        print("Executing eagerly.")
        return x + y

    @al.numpy_function(Tout=scalar, stateful=False)
    def np_times(x, y):
        return x * y

    @al.function(backend=which)
    def wrapper(x, y):
        return py_plus(x, y), np_times(x, y)

    added, multiplied = wrapper(al.constant(1.0), al.constant(2.0))
    assert added.numpy() == 3.0 and multiplied.numpy() == 2.0 and py_plus.__name__ == "py_plus"
    assert capsys.readouterr().out == "Executing eagerly.\n"


def test_py_function_says_what_is_missing():
    with pytest.raises(TypeError, match=r"py_function\(\) missing Tout: call py_function\(func, inp, Tout\), or "
                                        r"decorate a function with @py_function\(Tout=...\)"):
        al.py_function(lambda x: x, [1.0])
    with pytest.raises(TypeError, match=r"numpy_function\(\) missing Tout"):
        al.numpy_function()
    with pytest.raises(TypeError, match="give func with inp"):
        al.py_function(inp=[1.0], Tout=al.float32)


@pytest.mark.parametrize("which", ["numpy", "jax"])
def test_softplus_values_and_gradient_as_tensorflow(which):
    if which == "jax":
        pytest.importorskip("jax")
    points = np.array([-20.0, -1.0, 0.0, 1.0, 20.0, 100.0], np.float32)

    @al.function(backend=which)
    def value_and_gradient(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = al.nn.softplus(x)
        return y, tape.gradient(y, x)

    value, gradient = value_and_gradient(al.constant(points))
    expected = np.logaddexp(0.0, points.astype(np.float64))  # log(1 + exp(x)), exactly
    np.testing.assert_allclose(value.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(gradient.numpy(), 1 / (1 + np.exp(-points.astype(np.float64))), rtol=1e-6)
    assert al.math.softplus is al.nn.softplus
    assert al.nn.softplus(al.constant([40.0], al.float64)).numpy().tolist() == [40.0]
    with pytest.raises(TypeError, match="softplus takes float16, float32 or float64 tensors, got a int32"):
        al.nn.softplus(al.constant([1]))


@pytest.mark.parametrize("which", ["numpy", "jax"])
def test_tf_types_trace_type_subclasses_run_and_each_object_gets_its_own_trace(which):
    if which == "jax":
        pytest.importorskip("jax")
    # TF's function guide: a class names its trace type; autoloop keys objects by its own rule.
    class FruitTraceType(al.types.experimental.TraceType):
        def __init__(self, fruit):
            self.fruit_type = type(fruit)

        def is_subtype_of(self, other):
            return type(other) is FruitTraceType and self.fruit_type is other.fruit_type

        def most_specific_common_supertype(self, others):
            return self if all(self == other for other in others) else None

        def placeholder_value(self, placeholder_context=None):
            return None

        def __eq__(self, other):
            return type(other) is FruitTraceType and self.fruit_type == other.fruit_type

        def __hash__(self):
            return hash(self.fruit_type)

    class Apple:
        def __init__(self, flavor):
            self.flavor = al.constant(flavor)

        def __tf_tracing_type__(self, context):
            return FruitTraceType(self)

    @al.function(backend=which)
    def flavor_of(fruit):
        return fruit.flavor * 2

    assert isinstance(Apple([1]), al.types.experimental.SupportsTracingProtocol)
    # Two apples share a trace type, but the second's own flavor is used: never a stale trace.
    assert flavor_of(Apple([1, 2])).numpy().tolist() == [2, 4]
    assert flavor_of(Apple([3, 4])).numpy().tolist() == [6, 8]
    with pytest.raises(TypeError, match="abstract"):
        type("Half", (al.types.experimental.TraceType,), {})()
    assert al.Tensor in al.types.experimental.TensorLike.__args__


@pytest.mark.parametrize("which", ["numpy", "jax"])
def test_converted_code_appends_to_a_tensor_array_as_tensorflow_autograph_does(which):
    if which == "jax":
        pytest.importorskip("jax")

    @al.function(backend=which)  # TF's TF1 AutoGraph guide: `z.append(i)` on a TensorArray in a loop
    def squares(nums):
        result = al.TensorArray(al.int64, size=0, dynamic_size=True)
        for num in nums:
            result.append(num * num)
        return result.stack()

    assert squares(al.constant(np.arange(5))).numpy().tolist() == [0, 1, 4, 9, 16]


def test_a_tensor_array_appended_to_in_a_tf1_graph_loop():
    v1 = al.compat.v1

    @v1.function
    def arange(n):
        z = v1.TensorArray(v1.int32, size=0, dynamic_size=True)
        for i in v1.range(n):
            z.append(i)
        return z.stack()

    with v1.Graph().as_default(), v1.Session() as sess:
        assert sess.run(arange(v1.constant(4))).tolist() == [0, 1, 2, 3]


def test_a_trace_time_print_shows_a_graph_tensor_as_tensorflow_does(capsys):
    trace_print = al.do_not_convert(print)  # TF's print: while tracing, with the graph tensor

    @al.function(input_signature=(al.TensorSpec(shape=[None], dtype=al.int32),))
    def g(x):
        trace_print("Tracing with", x)
        return x

    g(al.constant([1, 2])), g(al.constant([1, 2, 3]))
    assert capsys.readouterr().out == 'Tracing with Tensor("x:0", shape=(None,), dtype=int32)\n'
    assert repr(g.get_concrete_function().inputs[0]) == "<autoloop.Tensor 'x:0' shape=(None,) dtype=int32>"
