"""The `tf.function` surface: concrete functions and their signatures, TensorFlow's options, eager
debugging (`config.run_functions_eagerly`) and recursion."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import autoloop as al
from tests.function_surface.backends import BACKENDS

HAVE_JAX = importlib.util.find_spec("jax") is not None


@pytest.fixture
def functions_run_eagerly():
    al.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        al.config.run_functions_eagerly(False)


def test_a_concrete_function_prints_its_signature_as_tensorflow_does():
    @al.function
    def f(x, n=2, *, k=None):
        return x * n, {"a": x}

    concrete = f.get_concrete_function(al.constant([1., 2.]), 3)
    spec = "TensorSpec(shape=(2,), dtype=autoloop.float32, name=None)"
    assert str(concrete) == (
        "ConcreteFunction Input Parameters:\n"
        f"  x (POSITIONAL_OR_KEYWORD): {spec}\n"
        "  n (POSITIONAL_OR_KEYWORD): Literal[3]\n"
        "  k (KEYWORD_ONLY): Literal[None]\n"
        "Output Type:\n"
        f"  Tuple[{spec}, Dict[['a', {spec}]]]\n"
        "Captures:\n"
        "  None")
    assert repr(concrete).startswith(f"<ConcreteFunction (x: {spec}, n: Literal[3], *, k: Literal[None]) -> Tuple[")
    np.testing.assert_array_equal(concrete(al.constant([1., 2.]))[0].numpy(), [3., 6.])


def test_var_args_are_listed_one_by_one():
    @al.function
    def f(pair, *rest, **named):
        return [pair[0], None]

    concrete = f.get_concrete_function((al.constant(1), al.constant([1.])), al.constant(2), z=al.constant(True))
    assert concrete.pretty_printed_signature().splitlines()[1:5] == [
        "  pair (POSITIONAL_ONLY): Tuple[TensorSpec(shape=(), dtype=autoloop.int32, name=None), "
        "TensorSpec(shape=(1,), dtype=autoloop.float32, name=None)]",
        "  rest_0 (POSITIONAL_ONLY): TensorSpec(shape=(), dtype=autoloop.int32, name=None)",
        "  z (KEYWORD_ONLY): TensorSpec(shape=(), dtype=autoloop.bool, name=None)",
        "Output Type:"]
    assert "List[TensorSpec(shape=(), dtype=autoloop.int32, name=None), Literal[None]]" in str(concrete)


def test_pretty_printed_concrete_signatures_lists_every_trace_and_tensor_specs_trace():
    @al.function
    def f(x):
        return x + 1

    f(al.constant(1.))
    concrete = f.get_concrete_function(al.TensorSpec([None], al.int32))
    assert concrete.inputs[0].shape.as_list() == [None]
    np.testing.assert_array_equal(concrete(al.constant([1, 2])).numpy(), [2, 3])
    blocks = f.pretty_printed_concrete_signatures().split("\n\n")
    assert [block.splitlines()[1] for block in blocks] == [
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=autoloop.float32, name=None)",
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None,), dtype=autoloop.int32, name=None)"]


def test_input_signature_gives_the_concrete_function_without_arguments():
    @al.function(input_signature=[al.TensorSpec([None], al.float32)])
    def f(x):
        return x * 2

    concrete = f.get_concrete_function()
    assert "Output Type:\n  TensorSpec(shape=(None,), dtype=autoloop.float32, name=None)" in str(concrete)
    assert concrete.structured_input_signature == ((al.TensorSpec([None], al.float32),), {})


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is not installed")
def test_jit_compile_means_the_jax_backend():
    @al.function(jit_compile=True)
    def f(x):
        return x + 1

    assert f.backend == "jax" and f(al.constant(1.)).numpy() == 2.
    assert al.function(lambda x: x, jit_compile=False).backend == "numpy"
    assert al.function(lambda x: x, jit_compile=None).backend == "numpy"


def test_jit_compile_without_jax_says_so(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jax" else real(name, *a))
    with pytest.raises(ImportError, match=r"jit_compile=True compiles the function with XLA through JAX "
                                          r"\(backend='jax'\), and the 'jax' package is not installed"):
        al.function(lambda x: x, jit_compile=True)


def test_tensorflow_options_are_accepted():
    feature = al.autograph.experimental.Feature
    f = al.function(lambda x: x * 2, experimental_relax_shapes=True,
                    experimental_autograph_options=(feature.LISTS, feature.ASSERT_STATEMENTS))
    assert f.reduce_retracing and f(al.constant(2)).numpy() == 4
    assert al.function(lambda x: x, experimental_autograph_options=feature.ALL)(al.constant(1)).numpy() == 1
    with pytest.raises(TypeError, match=r"experimental_autograph_options takes .*Feature values .* got 'LISTS'"):
        al.function(lambda x: x, experimental_autograph_options="LISTS")


@pytest.mark.parametrize("target", BACKENDS)
def test_run_functions_eagerly_runs_the_plain_python(target, functions_run_eagerly):
    seen = []

    @al.function(backend=target)
    def f(n):
        seen.append(type(n))  # plain Python: runs on every call, with the eager tensor itself
        i, total = al.constant(0), al.constant(0)
        while i < n:
            total += i * i
            i += 1
        return total

    assert al.config.functions_run_eagerly()
    assert f(al.constant(4)).numpy() == 14 and f(al.constant(4)).numpy() == 14
    assert seen == [al.Tensor, al.Tensor]
    assert f.experimental_get_tracing_count() == 0
    al.config.run_functions_eagerly(False)
    assert f(al.constant(4)).numpy() == 14 and f.experimental_get_tracing_count() == 1


def test_run_functions_eagerly_keeps_gradients_and_input_signatures(functions_run_eagerly):
    @al.function(input_signature=[al.TensorSpec([2], al.float32)])
    def f(x):
        return al.reduce_sum(x * x)

    x = al.constant([1., 3.])
    with al.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2., 6.])
    with pytest.raises(Exception, match="float32"):
        f(al.constant([1, 2]))


def test_recursion_with_a_python_base_case_unrolls_while_tracing():
    @al.function
    def factorial(n, x):
        if n == 0:
            return al.ones_like(x)
        return x * factorial(n - 1, x)

    assert factorial(4, al.constant(2.)).numpy() == 16.
    assert factorial(0, al.constant(2.)).numpy() == 1.


def test_recursion_on_a_tensor_condition_is_a_clear_error():
    @al.function
    def countdown(n):
        if n == 0:
            return al.constant(0)
        return n + countdown(n - 1)

    assert countdown(3).numpy() == 6
    with pytest.raises(RecursionError, match=r"while countdown was traced.*must end on Python values"):
        countdown(al.constant(3))


def test_a_nested_recursive_function_still_sees_its_closure():
    def outer(limit):
        def walk(n):
            return n if n >= limit else walk(n + 1)
        return walk

    assert al.function(outer(3))(0) == 3


def test_a_concrete_function_takes_keyword_arguments_and_names_its_specs():
    @al.function
    def scaled(a, b, factor=2):
        return (a + b) * factor

    concrete = scaled.get_concrete_function(al.constant(1), al.constant(2))
    assert concrete(al.constant(1), b=al.constant(5)).numpy() == 12
    assert concrete(b=al.constant(5), a=al.constant(2)).numpy() == 14
    [a, b, factor], _ = concrete.structured_input_signature
    assert (a.name, b.name, factor) == ("a", "b", 2)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'c'; its parameters are \(a, b, factor\)"):
        concrete(al.constant(1), c=al.constant(2))


def test_a_concrete_function_keeps_the_python_values_it_was_traced_with():
    @al.function
    def power(a, b):
        return a ** b

    square = power.get_concrete_function(a=al.TensorSpec(None, al.float32), b=2)
    assert "b (POSITIONAL_OR_KEYWORD): Literal[2]" in str(square)
    assert square(al.constant(10.0)).numpy() == 100 and square(al.constant(10.0), b=2).numpy() == 100
    with pytest.raises(TypeError, match=r"traced with b=2, got 3; call the Function itself"):
        square(al.constant(10.0), b=3)
    with pytest.raises(TypeError, match=r"traced with b=2, got 3"):
        square(al.constant(10.0), 3)
    with pytest.raises(al.errors.InvalidArgumentError, match=r"tensor argument 0 .* must be float32"):
        square(al.constant(1))  # TensorFlow's error class, and a TypeError as before
    with pytest.raises(TypeError, match=r"tensor argument 0 .* must be float32"):
        square(al.constant(1))


def test_composite_results_print_as_their_specs():
    @al.function
    def f(x):
        return al.TensorArray(al.float32, size=1).write(0, x), al.SparseTensor([[0, 1]], [1.0], [2, 3])

    assert str(f.get_concrete_function(al.constant(1.))).splitlines()[3] == (
        "  Tuple[TensorArraySpec(element_shape=(), dtype=autoloop.float32), "
        "SparseTensorSpec(shape=(2, 3), dtype=autoloop.float32)]")


def test_to_code_and_to_graph_take_tensorflows_options():
    def f(x):
        return x + 1

    feature = al.autograph.experimental.Feature
    assert al.autograph.to_code(f, recursive=True, experimental_optional_features=feature.LISTS) == al.to_code(f)
    assert al.autograph.to_graph(f, experimental_optional_features=(feature.ALL,))(2) == 3
    with pytest.raises(ValueError, match="recursive=False: autoloop always converts the functions"):
        al.autograph.to_graph(f, recursive=False)
    with pytest.raises(TypeError, match="experimental_optional_features takes .*Feature values"):
        al.to_code(f, experimental_optional_features="LISTS")
