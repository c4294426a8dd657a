"""TensorFlow's smaller rules: an escaped tensor has no numpy(), an unused op that would fail is pruned,
Python iteration of ``range(tensor)``."""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop.errors import InvalidArgumentError
from tests.function_surface.backends import BACKENDS


def test_numpy_of_a_tensor_that_escaped_its_trace_is_an_attribute_error():
    escaped = []

    @al.function
    def f(x):
        escaped.append(x * 2)
        return x

    f(al.constant(1.))
    with pytest.raises(AttributeError, match=r"mul:0 is a graph tensor of the trace of f, which has ended: it "
                                             r"escaped the trace .* Return it from the function"):
        escaped[0].numpy()


def test_numpy_inside_the_trace_still_names_the_expression():
    @al.function
    def f(x):
        return x.numpy()

    with pytest.raises(TypeError, match=r"`x.numpy\(\)` at .*: `x` is a graph tensor while the function is traced"):
        f(al.constant(1.))


@pytest.mark.parametrize("target", BACKENDS)
def test_an_unused_op_that_would_fail_is_pruned(target):
    @al.function(backend=target)
    def f(x):
        al.gather(x, 10)  # out of range, but nothing needs it
        return x

    np.testing.assert_array_equal(f(al.constant([1., 2.])).numpy(), [1., 2.])


@pytest.mark.parametrize("target", BACKENDS)
def test_a_used_op_that_fails_fails_when_the_graph_runs(target):
    @al.function(backend=target)
    def f(x):
        return al.gather(x, 10)

    concrete = f.get_concrete_function(al.constant([1., 2.]))  # traces without failing
    assert concrete.outputs[0].shape.as_list() == []
    with pytest.raises(InvalidArgumentError, match=r"GatherV2 \(node GatherV2\) failed while running: GatherV2: "
                                                   r"index 10 is out of range \[0, 2\).*created at .*test_small_rules"):
        f(al.constant([1., 2.]))
    with pytest.raises(InvalidArgumentError, match="index 10 is out of range"):  # eagerly: at once
        al.gather(al.constant([1., 2.]), 10)


def test_python_iteration_of_a_range_of_a_tensor_with_a_known_value():
    @al.function
    def f(x):
        n = al.constant(3)
        return [i * x for i in list(range(n))], [i for i, _ in zip(range(n), "ab")]

    values, pairs = f(al.constant(2))
    assert [v.numpy() for v in values] == [0, 2, 4] and [p.numpy() for p in pairs] == [0, 1]


def test_python_iteration_of_a_range_of_unknown_length_says_what_to_do():
    @al.function
    def f(n):
        return list(range(n))

    with pytest.raises(TypeError, match=r"Python iteration over TensorRange.* needs its length while the function "
                                        r"is traced.*Use a for statement"):
        f(al.constant(3))


leaked = None


def test_a_leaked_tensor_used_in_another_trace_is_a_type_error_as_in_tensorflow():
    @al.function
    def leaky(a):
        global leaked
        leaked = a + 1
        return leaked

    assert leaky(al.constant(1)).numpy() == 2
    with pytest.raises(AttributeError, match="escaped the trace"):
        leaked.numpy()

    @al.function
    def captures_leaked(b):
        b += leaked
        return b

    with pytest.raises(TypeError, match=r"add:0 belongs to another graph \('leaky'\) than the one being built "
                                        r"\('captures_leaked'\).*pass it in as an argument"):
        captures_leaked(al.constant(2))


def test_a_concrete_function_is_called_with_its_tensors_only():
    class Model:
        bias, weight = 5.0, 2.0

    def evaluate(model, x):
        return model.weight * x + model.bias

    x = al.constant(10.)
    concrete = al.function(evaluate).get_concrete_function(Model(), x)
    assert concrete(x).numpy() == 25.0  # the model was baked in: TensorFlow's flat call
