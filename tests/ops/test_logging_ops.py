"""autoloop.print and Assert: they act when they run, eagerly at once, in a graph
each time it runs and in program order."""

import sys

import numpy as np
import pytest

import autoloop as al
from autoloop.errors import InvalidArgumentError
from autoloop.ops import registry
from ophelpers import run_traced, trace_specs


def test_print_and_assert_are_stateful():
    assert registry.get("PrintV2").stateful and registry.get("Assert").stateful


def test_print_eagerly_prints_at_once(capsys):
    result = al.print("x is", al.constant([1, 2]), al.constant(2.5), 7, True)
    assert result is None
    assert capsys.readouterr().out == "x is [1 2] 2.5 7 True\n"


def test_print_sep_end_and_nested_values(capsys):
    x = al.constant([[1, 2], [3, 4]])
    al.print("a", [x[0], "s", 3], (x[1, 1],), sep="|", end="!\n")
    assert capsys.readouterr().out == "a|[[1 2], 's', 3]|(4,)!\n"


def test_print_formats_tensors_like_numpy(capsys):
    values = [np.arange(6, dtype=np.int64).reshape(2, 3), np.array([0.5, 1.25], np.float32), np.array([True, False])]
    al.print(*[al.constant(v) for v in values])
    assert capsys.readouterr().out == " ".join(str(v) for v in values) + "\n"


def test_print_to_stderr(capsys):
    al.print("oops", al.constant(1), output_stream="stderr")
    al.print("again", file=sys.stderr, flush=True)
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "oops 1\nagain\n")


def test_traced_print_prints_when_the_graph_runs_in_program_order(capsys):
    def fn(x):
        al.print("first", x)
        y = x * 2
        al.print("second", y, sep=": ")
        return y + 1

    f = al.function(fn, autograph=False)
    concrete = f.get_concrete_function(al.constant([1, 2]))
    assert capsys.readouterr().out == "", "tracing must not print"
    for value in ([1, 2], [5, 6]):
        result = concrete(al.constant(value))
        assert capsys.readouterr().out == f"first {np.array(value)}\nsecond: {np.array(value) * 2}\n"
        np.testing.assert_array_equal(result.numpy(), np.array(value) * 2 + 1)


def test_traced_print_is_kept_when_nothing_uses_it(capsys):
    run_traced(lambda x: al.print(x) or x, np.float32(1.5))
    assert capsys.readouterr().out == "1.5\n"


def test_print_in_a_while_loop_prints_every_iteration(capsys):
    def body(i):
        al.print("i =", i)
        return (i + 1,)

    fn = al.function(lambda n: al.while_loop(lambda i: i < n, body, [al.constant(0)]), autograph=False)
    fn(al.constant(3))
    assert capsys.readouterr().out == "i = 0\ni = 1\ni = 2\n"


def test_print_has_no_outputs_in_the_graph():
    graph, _ = trace_specs(lambda x: (al.print(x), x)[1], [(al.int32, al.TensorShape([2]))])
    (node,) = [n for n in graph.nodes if n.op == "PrintV2"]
    assert node.outputs == [] and node.attrs["template"] == (("input", 0), "\n")


# -- Assert ------------------------------------------------------------------------------
def test_assert_eagerly_passes_or_raises_with_the_data():
    assert al.Assert(al.constant(True), ["never shown"]) is None
    with pytest.raises(InvalidArgumentError, match=r"assertion failed: \[x must be positive\] \[\[-1  2\]\]"):
        al.Assert(al.constant(False), ["x must be positive", al.constant([-1, 2])])


def test_assert_accepts_a_python_condition_and_a_single_datum():
    with pytest.raises(InvalidArgumentError, match=r"assertion failed: \[3\]"):
        al.Assert(False, al.constant(3))


def test_traced_assert_raises_when_the_graph_runs():
    def fn(x):
        al.Assert(al.reduce_all(x > 0), ["x =", x, "must be positive"])
        return x * 2

    f = al.function(fn, autograph=False)
    concrete = f.get_concrete_function(al.constant([1, 2]))  # tracing does not check
    np.testing.assert_array_equal(concrete(al.constant([3, 4])).numpy(), [6, 8])
    with pytest.raises(InvalidArgumentError, match=r"assertion failed: \[x =\] \[\[ 3 -4\]\] \[must be positive\]"):
        concrete(al.constant([3, -4]))


def test_assert_summarize_limits_the_elements_shown():
    with pytest.raises(InvalidArgumentError, match=r"\[\[0 1 2 \.\.\.\] \(first 3 of 10 elements of shape \(10,\)\)\]"):
        al.Assert(False, [al.range(10)], summarize=3)
