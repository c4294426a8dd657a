"""A loop whose condition turns into a Tensor part way continues as a graph loop.

The iterations that ran as Python stay as they ran (their effects are in the
graph already); from the state they reached, the rest of the loop is a
graph ``while_loop`` whose Python-valued state becomes tensors there.
"""

import subprocess
import sys

import numpy as np
import pytest

import autoloop as al

from ..compiler.programs import make_function

FIRST_SQUARE_ABOVE = """
    def first_square_above(x):
        i = 0
        while i < 10:
            if i * i > x:
                return i
            i += 1
        return -1
    """

BREAK_UNDER_TENSOR_IF = """
    def count_until(x, limit):
        n = 0
        total = 0
        seen = []
        while n < limit:
            total += x
            seen.append(total)
            if total > 10:
                break
            n += 1
        return n, total, len(seen)
    """


@pytest.mark.parametrize("x", [-1, 0, 3, 20, 80, 200])
def test_return_under_tensor_if_in_python_while(x):
    function = make_function(FIRST_SQUARE_ABOVE, "first_square_above")
    assert al.function(function)(al.constant(x)).numpy() == function(x)


@pytest.mark.parametrize("x, limit", [(1, 5), (4, 5), (11, 3), (3, 0)])
def test_break_under_tensor_if_in_python_int_while(x, limit):
    function = make_function(BREAK_UNDER_TENSOR_IF, "count_until")
    got = [int(np.asarray(v)) for v in al.function(function)(al.constant(x), limit)]
    assert got == list(function(x, limit))


def test_the_iterations_that_ran_as_python_are_not_run_again():
    function = make_function("""
        def f(x):
            i = 0
            while i < 6:
                print("python iteration", i)
                if x > i:
                    return i
                i += 1
            return 99
        """, "f")
    concrete = al.function(function).get_concrete_function(al.constant(3))
    graph = concrete.graph
    loops = [node for node in graph.walk() if node.op == "While"]
    assert len(loops) == 1  # one graph loop, for what is left after iteration 1
    assert concrete(al.constant(3)).numpy() == 0


def test_explain_says_the_loop_continued_as_a_graph_loop():
    function = make_function(FIRST_SQUARE_ABOVE, "first_square_above")
    concrete = al.function(function).get_concrete_function(al.constant(5))
    loop = [d for d in concrete.decisions if d.statement == "while loop"]
    assert len(loop) == 1 and loop[0].staged
    assert "became a Tensor after 1 iteration ran as Python" in loop[0].reason


def test_cli_explain_for_a_loop_staged_part_way(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(FIRST_SQUARE_ABOVE.replace("\n    ", "\n").lstrip("\n"))
    result = subprocess.run([sys.executable, "-m", "autoloop", "run", f"{path}::first_square_above", "20",
                             "--explain"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "5"
    assert "line 3: while loop" in result.stdout and "the rest runs as a graph loop" in result.stdout


def test_variable_first_assigned_in_a_loop_may_change_shape_across_iterations():
    function = make_function("""
        def grow(n):
            i = 0
            while i < n:
                row = al.zeros([i + 1])
                i += 1
            return row
        """, "grow", {"al": al})
    assert al.function(function)(al.constant(3)).numpy().shape == (3,)


def test_returned_tuple_whose_shape_changes_needs_no_invariant():
    function = make_function("""
        def first_long(n):
            i = 0
            while i < 10:
                values = al.range(i)
                if i >= n:
                    return values, i
                i += 1
            return al.range(0), -1
        """, "first_long", {"al": al})
    values, index = al.function(function)(al.constant(4))
    assert values.numpy().tolist() == [0, 1, 2, 3] and index.numpy() == 4
