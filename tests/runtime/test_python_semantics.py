"""The runtime on Python values: exactly Python's semantics."""

import pytest

from autoloop import runtime as al__


def test_while_stmt_runs_python_loop():
    def loop_cond(i, total):
        return i < 4

    def loop_body(i, total):
        return i + 1, total + i
    assert al__.while_stmt(loop_cond, loop_body, (0, 0), ("i", "total")) == (4, 6)


def test_while_stmt_single_variable_is_bare():
    assert al__.while_stmt(lambda i: i < 3, lambda i: i + 1, (0,), ("i",)) == 3


def test_for_stmt_extra_test_stops_before_next_item():
    consumed = []

    def items():
        for value in range(10):
            consumed.append(value)
            yield value

    def loop_body(x, total, done):
        return total + x, x == 2

    total, done = al__.for_stmt(items(), loop_body, (0, False), ("total", "done"),
                                extra_test=lambda total, done: not done)
    assert (total, done) == (3, True) and consumed == [0, 1, 2]


def test_if_stmt_calls_one_branch_with_inputs():
    calls = []

    def if_true(y):
        calls.append("true")
        return y + 1

    def if_false(y):
        calls.append("false")
        return y
    assert al__.if_stmt(0, if_true, if_false, ("y",), (5,)) == 5 and calls == ["false"]


def test_and_or_return_deciding_operand_lazily():
    assert al__.and_(0, lambda: 1 / 0) == 0
    assert al__.and_(2, lambda: "x") == "x"
    assert al__.or_("", lambda: 0, lambda: [1]) == [1]
    assert al__.or_(3, lambda: 1 / 0) == 3
    assert al__.not_([]) is True


def test_if_exp_is_lazy():
    assert al__.if_exp(True, lambda: 1, lambda: 1 / 0) == 1


def test_undefined_read_raises_unbound_local_error():
    with pytest.raises(UnboundLocalError, match="'y'"):
        al__.read(al__.Undefined("y"))
    assert al__.read(3) == 3


def test_return_value_of_undefined_is_none():
    assert al__.return_value(al__.Undefined("retval_")) is None
    assert al__.return_value(7) == 7


def test_assert_message_built_only_on_failure():
    al__.assert_(True, lambda: 1 / 0)
    with pytest.raises(AssertionError, match="bad 3"):
        al__.assert_(False, lambda: f"bad {3}")


def test_print_and_len_and_range_on_python_values(capsys):
    al__.print_("a", 1, sep="-")
    assert capsys.readouterr().out == "a-1\n"
    assert al__.len_([1, 2]) == 2
    assert list(al__.range_(1, 7, 2)) == [1, 3, 5]


def test_list_append_mutates_python_list_in_place():
    values = []
    alias = values
    assert al__.list_append(values, 1) is values and alias == [1]


def test_converted_call_calls_library_functions_as_they_are():
    import math
    assert al__.converted_call(math.sqrt, 9.0) == 3.0
    assert al__.converted_call(len, [1, 2, 3]) == 3


def test_converted_call_converts_user_functions():
    def helper(x):
        if x > 0:
            return x
        return -x
    assert al__.converted_call(helper, -4) == 4


def test_range_takes_eager_tensor_bounds_as_pythons_range_takes_them():
    """``range(n)`` in converted code run eagerly, `n` an eager tensor (found by the fuzzer: the check for
    an unknown bound asked ``None in args``, which compared the tensor with None)."""
    import autoloop as al
    n = al.reduce_sum(al.constant([1, 2]))
    assert list(al__.range_(n)) == list(range(n)) == [0, 1, 2]
    assert list(al__.range_(al.constant(1), n, al.constant(2))) == [1]


def test_no_tensor_equals_none():
    """TensorFlow's rule: ``t == None`` is False and ``t != None`` True, eagerly and in a trace."""
    import numpy as np

    import autoloop as al
    t = al.constant([1, 2])
    assert (t == None) is False and (t != None) is True  # noqa: E711
    assert None not in (t,) and (t == al.constant([1, 3])).numpy().tolist() == [True, False]

    def compare(x):
        return x == None, x != None, x == 1  # noqa: E711
    equal, unequal, elementwise = al.function(compare, autograph=False)(t)
    # A function returns tensors, as in TensorFlow: the Python bools come back as bool tensors.
    assert equal.dtype == al.bool and equal.numpy() == False and unequal.numpy() == True  # noqa: E712
    assert np.array_equal(elementwise.numpy(), [True, False])
