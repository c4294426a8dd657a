"""The command line in-process: the decorator's options, target errors, --time, --version,
and the one-line errors that end with the user's file:line."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from autoloop import cli
from tests.child_processes import interruptible

ROOT = pathlib.Path(__file__).resolve().parents[2]

MODEL = '''
import autoloop as al


def count_down(n):
    total = 0
    while n > 0:
        total += n
        n -= 1
    return total


def no_arguments():
    return al.constant(7)


def bad_branch(x):
    if x > 0:
        y = al.constant(1)
    else:
        y = al.constant(1.0)
    return y


def numpy_in_trace(x):
    return x.numpy() + 1


def list_index(i):
    xs = [1.0, 2.5, 4.0]
    return xs[i]


def halves(n):
    i = al.constant(100)
    while i > n:
        i = i / 2
    return i


def best_of(x):
    best = al.constant(0)
    step = al.constant(0)
    while step < 3:
        best = al.argmax(x)
        step += 1
    return best


@al.function(input_signature=[al.TensorSpec([None])])
def total_of(x):
    total = al.constant(0.0)
    for k in range(x.shape[0]):
        total += x[k]
    return total


def two_returns(x):
    if x > 0:
        return al.constant(1)
    return al.constant(1.0)


def takes_two(a, b):
    return a + b


def wrong_dtype(x):
    return al.floor(x)


def runs_out_of_range(x, i):
    return al.gather(x, i)


def uses_yield(n):
    yield n


@al.function(autograph=False)
def not_converted(x):
    if x > 0:
        return x
    return -x


@al.function(input_signature=[al.TensorSpec([None], al.float64)])
def half(x):
    return x / 2


@al.function(autograph=False)
def python_loop(x):
    for i in range(3):
        x = x + i
    return x


class Model:
    def step(self, x):
        return x + 1

    @staticmethod
    def helper(x):
        return x * 3
'''


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return "model.py"


def line_of(text: str, within: str = "") -> int:
    """The line of `text` in MODEL (the first after the line holding `within`)."""
    lines = MODEL.splitlines()
    start = next(n for n, line in enumerate(lines) if within in line)
    return next(n for n, line in enumerate(lines, start=1) if n > start and text in line)


def autoloop(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_run_uses_the_functions_own_autograph_false(model, capsys):
    assert autoloop(capsys, "run", f"{model}::python_loop", "1")[:2] == (0, "4\n")
    code, out, err = autoloop(capsys, "run", f"{model}::not_converted", "-3")
    assert code == 1 and "Using a symbolic autoloop.Tensor" in err  # not converted: a Python `if` on a tensor
    assert err.rstrip().endswith(f"(model.py:{line_of('if x > 0:', within='def not_converted')})")


def test_run_uses_the_functions_input_signature_for_argument_dtypes(model, capsys):
    code, out, err = autoloop(capsys, "run", f"{model}::half", "[1, 3]")
    assert (code, out, err) == (0, "[0.5 1.5]\n", "")  # float64 from the signature: 1 / 2 is not int division


def test_explain_for_a_function_with_autograph_false(model, capsys):
    code, out, err = autoloop(capsys, "run", f"{model}::python_loop", "1", "--explain")
    assert code == 0 and out.splitlines()[0] == "4"
    assert f"line {line_of('for i in range(3)')}: for loop" in out and "autograph=False" in out


def test_run_time_prints_each_phase(model, capsys):
    code, out, err = autoloop(capsys, "run", f"{model}::count_down", "4", "--time")
    assert (code, out) == (0, "10\n")
    assert len(err.splitlines()) == 1
    assert err.startswith("autoloop: conversion ") and ", tracing " in err and ", run " in err and err.count("ms") == 3
    code, out, err = autoloop(capsys, "run", f"{model}::python_loop", "4", "--time")
    assert "conversion none (autograph=False)" in err


def test_to_code_and_dump_accept_an_autoloop_function(model, capsys):
    code, out, err = autoloop(capsys, "dump", f"{model}::half")
    assert code == 0 and out.startswith("def half(x):")


def test_version(capsys):
    import autoloop as al
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"autoloop {al.__version__}\n"


def test_graph_without_args_says_to_pass_them(model, capsys):
    code, out, err = autoloop(capsys, "graph", f"{model}::count_down")
    assert code == 2 and out == ""
    assert err == (f"autoloop: error: count_down takes n: a graph is traced for arguments, so pass them as a "
                   f"JSON list, for example --args '[0]' (model.py:{line_of('def count_down')})\n")
    code, out, err = autoloop(capsys, "graph", f"{model}::no_arguments")
    assert code == 0 and "Const" in out
    code, out, err = autoloop(capsys, "graph", f"{model}::half")  # the signature gives the inputs
    assert code == 0 and out.startswith("graph half(x:0: float64(None,))")


@pytest.mark.parametrize("target, message", [
    ("Model.step", "Model.step is a method: it needs an instance of Model (self). Name a function that creates "
                   "one and calls the method, or make the method a @staticmethod (model.py:{step})"),
    ("Model", "Model is a class, not a function; name a function, or a static method as Model.METHOD "
              "(model.py:{model})"),
    ("nope", "model.py has no function 'nope'; its functions are: bad_branch, best_of, count_down, half, halves, "
             "list_index, no_arguments, not_converted, numpy_in_trace, python_loop, runs_out_of_range, "
             "takes_two, total_of, two_returns, uses_yield, wrong_dtype"),
    ("Model.nope", "class Model in model.py has no method 'nope'; its methods are: helper, step"),
])
@pytest.mark.parametrize("command", ["dump", "run", "graph"])
def test_bad_targets_exit_2_with_one_line(model, capsys, command, target, message):
    code, out, err = autoloop(capsys, command, f"{model}::{target}", *(["1"] if command == "run" else []))
    expected = message.format(step=line_of("def step"), model=line_of("class Model"))
    assert (code, out, err) == (2, "", f"autoloop: error: {expected}\n")


def test_a_static_method_runs(model, capsys):
    assert autoloop(capsys, "run", f"{model}::Model.helper", "2")[:2] == (0, "6\n")


@pytest.mark.parametrize("function, args, code, words, line", [
    # the program breaks a rule of graphs: status 2
    ("bad_branch", ["1"], 2, "BranchTypeError: 'y' is int32 in the if branch and float32 in the else branch "
     "of the if statement at model.py, line {line}; every path must give it the same dtype", "    if x > 0:"),
    ("two_returns", ["1"], 2, "BranchTypeError: the return value is float32 where the return at line {line0} "
     "did not run and int32 where the return at line {line0} ran", "return al.constant(1.0)"),
    ("numpy_in_trace", ["1"], 2, "TypeError: `x.numpy()` at model.py:{line}: `x` is a graph tensor while the "
     "function is traced", "return x.numpy() + 1"),
    ("list_index", ["1"], 2, "TypeError: `xs[i]` at model.py:{line}: `i` is a graph tensor: its value is known "
     "only when the graph runs, so it cannot index the Python list `xs` while tracing. Make it a tensor and "
     "gather from it: autoloop.gather(autoloop.constant(xs), i)", "return xs[i]"),
    ("halves", ["3"], 2, "LoopVariableTypeError: loop variable 'i' has dtype int32 before the loop, but dtype float64 "
     "after one iteration; a loop variable must keep its dtype. It becomes float64 at model.py:{line1}, where `/` "
     "divides int32 values: true division of integers gives float64", "while i > n:"),
    ("best_of", ["[1.0, 3.0]"], 2, "LoopVariableTypeError: loop variable 'best' has dtype int32 before the loop, but "
     "dtype int64 after one iteration; a loop variable must keep its dtype. It becomes int64 at model.py:{line1}, "
     "where argmax returns int64 (its default output_type); pass output_type=autoloop.int32",
     "while step < 3:"),
    ("total_of", ["[1.0, 2.0]"], 2, "TypeError: range(x.shape[0]) at model.py:{line}: `x.shape[0]` is None: that "
     "dimension of `x` is not known while tracing (its static shape has None there). Use its size when the "
     "graph runs, a tensor: range(autoloop.shape(x)[0])", "for k in range(x.shape[0]):"),
    ("uses_yield", ["1"], 2, "NotImplementedError: 'yield' in uses_yield", "yield n"),
    ("takes_two", ["1"], 2, "error: takes_two(): missing a required argument: 'b'", "def takes_two"),
    ("total_of", ["1"], 2, "error: total_of() argument 0 does not match its input_signature",
     "@al.function(input_signature=[al.TensorSpec([None])])"),
    # the program fails: status 1
    ("wrong_dtype", ["1"], 1, "TypeError: Floor does not take int32 tensors", "return al.floor(x)"),
    ("runs_out_of_range", ["[1, 2]", "[5]"], 1, "index 5 is out of range [0, 2)", "return al.gather(x, i)"),
])
def test_errors_are_one_line_ending_with_the_users_line(model, capsys, function, args, code, words, line):
    result, out, err = autoloop(capsys, "run", f"{model}::{function}", *args)
    assert result == code and out == "" and len(err.splitlines()) == 1, err
    lines = MODEL.splitlines()
    start = next(n for n, text in enumerate(lines) if text.startswith(f"def {function}("))
    while lines[start - 1].startswith("@"):  # its decorator is where it starts
        start -= 1
    number = next(n + 1 for n in range(start, len(lines)) if line in lines[n])
    assert words.format(line=number, line0=number - 1, line1=number + 1) in err
    assert err.startswith("autoloop: error: ") and err.rstrip().endswith(f"(model.py:{number})"), err


def test_syntax_errors_end_with_the_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.py").write_text("def f(x):\n    return (x\n")
    code, out, err = autoloop(capsys, "dump", "broken.py::f")
    assert code == 2 and err.startswith("autoloop: error: syntax error: ") and err.rstrip().endswith("(broken.py:2)")


def test_ctrl_c_while_the_graph_loops_prints_one_line_and_exits_130(tmp_path):
    (tmp_path / "endless.py").write_text(textwrap.dedent("""
        def spin(x):
            print("running")
            while x > 0:
                x = x + 1
            return x
        """))
    process = subprocess.Popen(interruptible(["-m", "autoloop", "run", "endless.py::spin", "1"]), cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                   filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    try:
        assert process.stdout.readline() == "running\n"  # the graph's print: the loop runs next
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130
    assert err == "autoloop: interrupted while the graph ran, at endless.py:4\n"
