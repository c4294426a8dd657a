"""The first hour's mistakes: each error names the user's variable, line and function, and the fix.

Every case is a small program with one mistake: the error's type, words, and a traceback frame at
the user's line labelled with the user's function. Where a message suggests a fix, the fixed program
runs and gives the plain Python (or numpy) answer.
"""

import textwrap
import traceback

import numpy as np
import pytest

import autoloop as al
from autoloop.errors import BranchTypeError, LoopVariableTypeError

from .programs import make_function

# name -> (source of `f` (and helpers), arguments, error type, words in the message, the line (1-based,
#          in the source) of the frame the error shows, the function that frame is named after)
CASES = {
    "branch_dtype": ("""
        def f(x):
            if x > 0:
                y = al.constant(1)
            else:
                y = al.constant(1.0)
            return y
        """, (1,), BranchTypeError,
        ["'y' is int32 in the if branch and float32 in the else branch of the if statement at",
         "line 2; every path must give it the same dtype (use autoloop.cast)"], 2, "f"),
    "branch_structure": ("""
        def f(x):
            if x > 0:
                y = (al.constant(1), al.constant(2))
            else:
                y = al.constant(1)
            return y
        """, (1,), BranchTypeError,
        ["'y' is a tuple of 2 values in the if branch and a single value in the else branch",
         "every path must give it the same structure"], 2, "f"),
    "returns_of_two_dtypes": ("""
        def f(x):
            if x > 0:
                return al.ones([2], dtype=al.int32)
            else:
                return al.ones([2])
        """, (1.0,), BranchTypeError,
        ["the return value (of the returns at lines 3 and 5) is int32 in the if branch and float32 in the else "
         "branch of the if statement at", "line 2; every return must give the same dtype (use autoloop.cast)"],
        2, "f"),
    "returns_of_two_structures_in_a_loop": ("""
        def f(n):
            if n > 100:
                return 1, 2
            i = 0
            while i < n:
                i += 1
                return 2
            return 1, 2
        """, (5,), LoopVariableTypeError,
        ["the return value (of the returns at lines 3, 7 and 8) does not have the same nested structure after "
         "one iteration of the while loop at", "line 5: it enters the loop as a tuple of 2 values but is a single "
         "value. Every return must give the same structure."], 5, "f"),
    "branch_list_lengths": ("""
        def f(x):
            if x > 0:
                y = [al.constant(1), al.constant(2)]
            else:
                y = [al.constant(1)]
            return y
        """, (1,), BranchTypeError,
        ["'y' is a list of 2 values in the if branch and a list of 1 value in the else branch"], 2, "f"),
    "branch_in_nested_function": ("""
        def f(x):
            def inner(v):
                if v > 0:
                    w = al.constant(1)
                else:
                    w = al.constant(1.0)
                return w
            return inner(x)
        """, (1,), BranchTypeError, ["'w' is int32 in the if branch and float32 in the else branch"],
        3, "inner"),
    "returns_of_two_dtypes": ("""
        def f(x):
            if x > 0:
                return al.constant(1)
            return al.constant(1.0)
        """, (1,), BranchTypeError,
        ["the return value is float32 where the return at line 3 did not run and int32 where the return "
         "at line 3 ran; every return must give the same dtype (use autoloop.cast)"], 4, "f"),
    "returns_of_two_structures": ("""
        def f(x):
            if x > 0:
                return al.constant(1), al.constant(2)
            return al.constant(1)
        """, (1,), BranchTypeError,
        ["the return value is a single value where the return at line 3 did not run and a tuple of 2 "
         "values where the return at line 3 ran; every return must give the same structure"], 4, "f"),
    "return_in_loop_and_after": ("""
        def f(n):
            i = al.constant(0)
            while i < n:
                if i > 3:
                    return i
                i += 1
            return 1.5
        """, (9,), BranchTypeError,
        ["the return value is the Python float 1.5 where the return at line 5 did not run and int32 where "
         "the return at line 5 ran"], 7, "f"),
    "returns_none_on_one_path": ("""
        def f(x):
            if x > 0:
                return x
            return None
        """, (1,), ValueError,
        ["the return value is None where the return at line 3 did not run and", "where the return at "
         "line 3 ran, so the graph cond cannot learn one dtype for it; return a tensor on every path"], 4, "f"),
    "break_skips_a_change_of_dtype": ("""
        def f(n):
            i = al.constant(0)
            y = al.constant(0)
            while i < n:
                if i > 3:
                    break
                y = al.constant(2.0)
                i += 1
            return y
        """, (9,), BranchTypeError,
        ["'y' is float32 where the break at line 6 did not run and int32 where the break at line 6 ran"],
        7, "f"),
    "cond_branches": ("""
        def f(x):
            return al.cond(x > 0, lambda: al.constant(1), lambda: al.constant(1.0))
        """, (1,), BranchTypeError,
        ["output is int32 in the true branch but float32 in the false branch"], 2, "f"),
    "argmax_in_one_branch": ("""
        def f(x):
            if al.reduce_sum(x) > 0:
                y = al.argmax(x)
            else:
                y = al.constant(0)
            return y
        """, ([1.0, 3.0],), BranchTypeError,
        ["'y' is int64 in the if branch and int32 in the else branch",
         "every path must give it the same dtype: it becomes int64 at <FILE>:3, where argmax returns int64 "
         "(its default output_type); pass output_type=autoloop.int32"], 2, "f"),
    "list_indexed_by_a_tensor": ("""
        def f(i):
            xs = [1.0, 2.5, 4.0]
            return xs[i]
        """, (1,), TypeError,
        ["`xs[i]` at <FILE>:3: `i` is a graph tensor: its value is known only when the graph runs, so it "
         "cannot index the Python list `xs` while tracing. Make it a tensor and gather from it: "
         "autoloop.gather(autoloop.constant(xs), i)"], 3, "f"),
    "list_indexed_in_a_loop": ("""
        def f(n):
            weights = (0.5, 1.5, 2.5, 3.5)
            total = al.constant(0.0)
            for i in al.range(n):
                total += weights[i]
            return total
        """, (3,), TypeError,
        ["`weights[i]` at <FILE>:5", "the Python tuple `weights`",
         "autoloop.gather(autoloop.constant(weights), i)"], 5, "f"),
    "list_of_tensors_indexed": ("""
        def f(x, i):
            rows = [x * 2.0, x + 1.0]
            return rows[i]
        """, ([1.0, 2.0], 1), TypeError,
        ["`rows[i]` at <FILE>:3", "autoloop.gather(autoloop.stack(rows), i)"], 3, "f"),
    "numpy_of_a_graph_tensor": ("""
        def f(x):
            y = x * 2
            return y.numpy() + 1
        """, (1,), TypeError,
        ["`y.numpy()` at <FILE>:3: `y` is a graph tensor while the function is traced, so it has no value "
         "yet", "Use `y` itself (ops take tensors), return it to get its value, or print it when the graph "
         "runs with autoloop.print(y)"], 3, "f"),
    "int_division_in_a_loop": ("""
        def f(n):
            i = al.constant(100)
            while i > n:
                i = i / 2
            return i
        """, (3,), LoopVariableTypeError,
        ["loop variable 'i' has dtype int32 before the loop, but dtype float64 after one iteration",
         "It becomes float64 at <FILE>:4, where `/` divides int32 values: true division of integers gives "
         "float64 (as in TensorFlow); use `//` for integer division"], 3, "f"),
    "argmax_into_an_int32_loop_variable": ("""
        def f(x):
            best = al.constant(0)
            step = al.constant(0)
            while step < 3:
                best = al.argmax(x + al.cast(step, al.float32))
                step += 1
            return best
        """, ([1.0, 3.0, 2.0],), LoopVariableTypeError,
        ["loop variable 'best' has dtype int32 before the loop, but dtype int64 after one iteration",
         "It becomes int64 at <FILE>:5, where argmax returns int64 (its default output_type); pass "
         "output_type=autoloop.int32"], 4, "f"),
    "range_over_an_unknown_dimension": ("""
        def f(x):
            total = al.constant(0.0)
            for k in range(x.shape[0]):
                total += x[k]
            return total
        """, ("unknown length", [1.0, 2.0, 4.0]), TypeError,
        ["range(x.shape[0]) at <FILE>:3: `x.shape[0]` is None: that dimension of `x` is not known while "
         "tracing", "range(autoloop.shape(x)[0])"], 3, "f"),
    "set_loop_options_not_first": ("""
        def f(x):
            s = 0
            while s < x:
                s += 1
                al.autograph.experimental.set_loop_options(maximum_iterations=4)
            return s
        """, (10,), ValueError,
        ["set_loop_options(...) at <FILE>, line 5 is not the first statement of a loop body"], 5, "f"),
}

# The fixes the messages suggest, applied: name -> (source of `f`, arguments, the right answer)
FIXED = {
    "list_indexed_by_a_tensor": ("""
        def f(i):
            xs = [1.0, 2.5, 4.0]
            return al.gather(al.constant(xs), i)
        """, (1,), 2.5),
    "list_indexed_in_a_loop": ("""
        def f(n):
            weights = (0.5, 1.5, 2.5, 3.5)
            total = al.constant(0.0)
            for i in al.range(n):
                total += al.gather(al.constant(weights), i)
            return total
        """, (3,), 4.5),
    "list_of_tensors_indexed": ("""
        def f(x, i):
            rows = [x * 2.0, x + 1.0]
            return al.gather(al.stack(rows), i)
        """, ([1.0, 2.0], 1), [2.0, 3.0]),
    "int_division_in_a_loop": ("""
        def f(n):
            i = al.constant(100)
            while i > n:
                i = i // 2
            return i
        """, (3,), 3),
    "argmax_into_an_int32_loop_variable": ("""
        def f(x):
            best = al.constant(0)
            step = al.constant(0)
            while step < 3:
                best = al.argmax(x + al.cast(step, al.float32), output_type=al.int32)
                step += 1
            return best
        """, ([1.0, 3.0, 2.0],), 1),
    "range_over_an_unknown_dimension": ("""
        def f(x):
            total = al.constant(0.0)
            for k in range(al.shape(x)[0]):
                total += x[k]
            return total
        """, ("unknown length", [1.0, 2.0, 4.0]), 7.0),
}


def _function(source):
    """`f` of `source` (whose first line is line 1)."""
    return make_function(textwrap.dedent(source).lstrip("\n"), "f", {"al": al})


def _traced(source, arguments):
    """`f` of `source` as an `autoloop.function`, and the arguments to call it with."""
    function = _function(source)
    if arguments and arguments[0] == "unknown length":
        return al.function(function, input_signature=[al.TensorSpec([None])]), [al.constant(arguments[1])]
    return al.function(function), [al.constant(a) for a in arguments]


@pytest.mark.parametrize("name", CASES)
def test_the_error_names_the_mistake_at_the_users_line_and_function(name):
    source, arguments, error_type, words, line, function_name = CASES[name]
    traced, values = _traced(source, arguments)
    filename = traced.python_function.__code__.co_filename
    with pytest.raises(error_type) as caught:
        traced(*values)
    message = str(caught.value)
    for text in words:
        assert text.replace("<FILE>", filename) in message
    assert "retval_" not in message and "do_return" not in message and "break_" not in message
    if error_type is BranchTypeError:
        assert not isinstance(caught.value, LoopVariableTypeError)
    frames = [(frame.lineno, frame.name) for frame in traceback.extract_tb(caught.value.__traceback__)
              if frame.filename == filename]
    assert (line, function_name) in frames, frames
    assert "<module>" not in {frame_name for _, frame_name in frames}


@pytest.mark.parametrize("name", FIXED)
def test_the_suggested_fix_works(name):
    source, arguments, expected = FIXED[name]
    traced, values = _traced(source, arguments)
    np.testing.assert_allclose(traced(*values).numpy(), expected)


def test_the_messages_have_a_fix_for_every_case_that_suggests_one():
    suggesting = {name for name, case in CASES.items() if any("autoloop.gather" in w or "output_type" in w
                                                               or "autoloop.shape" in w or "`//`" in w
                                                               for w in case[3])}
    assert suggesting - {"argmax_in_one_branch"} <= set(FIXED)


def test_a_list_the_message_cannot_see_gets_a_conditional_suggestion():
    function = _function("""
        class Table:
            values = [1.0, 2.0]
        def f(i):
            return Table.values[i]
        """)
    with pytest.raises(TypeError) as caught:
        al.function(function)(al.constant(1))
    assert ("If `Table.values` is a list of numbers, make it a tensor and gather from it: "
            "autoloop.gather(autoloop.constant(Table.values), i)") in str(caught.value)


def test_a_list_of_strings_gets_no_fix_that_would_not_work():
    function = _function("""
        def f(i):
            names = ["a", "b"]
            return names[i]
        """)
    with pytest.raises(TypeError, match=r"cannot index the Python list `names` while tracing$"):
        al.function(function)(al.constant(1))


def test_numpy_in_a_function_with_autograph_false_names_the_variable():
    function = _function("""
        def f(x):
            doubled = x * 2
            return doubled.numpy()
        """)
    with pytest.raises(TypeError, match=r"`doubled.numpy\(\)` at .*:3: `doubled` is a graph tensor"):
        al.function(function, autograph=False)(al.constant(1))


def test_errors_raised_in_python_keep_their_meaning():
    """Outside a trace nothing changes: a Python list takes an eager tensor as an index."""
    assert [1.0, 2.5][al.constant(1)] == 2.5
    assert al.constant(3).numpy() == 3


def test_the_same_function_in_two_files_shows_each_its_own_file():
    """Equal code objects (the same source in two files) must not share one conversion's source map."""
    source = CASES["branch_dtype"][0]
    for _ in range(2):
        traced, values = _traced(source, (1,))
        filename = traced.python_function.__code__.co_filename
        with pytest.raises(BranchTypeError) as caught:
            traced(*values)
        assert f"at {filename}, line 2" in str(caught.value)
        assert (filename, 2) in [(f.filename, f.lineno) for f in traceback.extract_tb(caught.value.__traceback__)]


def test_a_slice_of_a_list_by_graph_tensors_suggests_slicing_a_tensor():
    sliced = _function("""
        def f(i, j):
            xs = [1.0, 2.0, 3.0, 4.0]
            return xs[i:j]
        """)
    with pytest.raises(TypeError) as caught:
        al.function(sliced)(al.constant(1), al.constant(3))
    assert str(caught.value).endswith("an index in `i:j` is a graph tensor: its value is known only when the "
                                      "graph runs, so it cannot index the Python list `xs` while tracing. Make "
                                      "it a tensor and index that: autoloop.constant(xs)[i:j]")
    fixed = _function("""
        def f(i, j):
            xs = [1.0, 2.0, 3.0, 4.0]
            return al.constant(xs)[i:j]
        """)
    np.testing.assert_allclose(al.function(fixed)(al.constant(1), al.constant(3)).numpy(), [2.0, 3.0])


def _frame_names(source, calls):
    """The names of the frames at the user's lines of the errors that `calls` of `source`'s functions raise."""
    names = []
    for name in calls:
        function = make_function(source, name, {"al": al})
        with pytest.raises(BranchTypeError) as caught:
            al.function(function)(al.constant(1))
        filename = function.__code__.co_filename
        names.append([f.name for f in traceback.extract_tb(caught.value.__traceback__) if f.filename == filename])
    return names


MISMATCH = """
def {name}(x):
    if x > 0:
        y = al.constant(1)
    else:
        y = al.constant(1.0)
    return y
"""


def test_frame_names_follow_the_source_as_it_is_now():
    """The names come from the source each error's file holds: a new file, a changed text, another
    function, in any order, and several threads at once, each get their own."""
    assert _frame_names(MISMATCH.format(name="first"), ["first"]) == [["first"]]
    assert _frame_names(MISMATCH.format(name="second"), ["second"]) == [["second"]]
    both = MISMATCH.format(name="first") + MISMATCH.format(name="second")
    assert _frame_names(both, ["second", "first"]) == [["second"], ["first"]]

    import concurrent.futures
    sources = [MISMATCH.format(name=f"f{n}") for n in range(8)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda n: _frame_names(sources[n], [f"f{n}"]), range(8)))
    assert found == [[[f"f{n}"]] for n in range(8)]


def test_a_function_called_in_a_tf1_graph_names_the_return_value_too():
    def f(x):
        if x > 0:
            return al.ones([2], dtype=al.int32)
        else:
            return al.ones([2])

    first = f.__code__.co_firstlineno
    with al.compat.v1.Graph().as_default():
        x = al.compat.v1.placeholder(al.float32, [])
        with pytest.raises(BranchTypeError) as raised:
            al.function(f)(x)
    assert str(raised.value).startswith(
        f"the return value (of the returns at lines {first + 2} and {first + 4}) is int32 in the if branch and "
        f"float32 in the else branch of the if statement at {__file__}, line {first + 1}; every return must give")
