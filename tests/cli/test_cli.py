"""`python -m autoloop`: output, one-line errors, exit codes."""

import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sum_square_autograph.py"


def autoloop(*args):
    return subprocess.run([sys.executable, "-m", "autoloop", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent("""
        import autoloop as al

        def count_down(n):
            total = 0
            while n > 0:
                total += n
                n -= 1
            if total > 100:
                total = 100
            return total

        def uses_yield(n):
            yield n
        """))
    return path


def test_dump_prints_functional_form():
    result = autoloop("dump", f"{SAMPLE}::sumSquare")
    assert result.returncode == 0, result.stderr
    assert "al__.while_stmt(loop_cond, loop_body, (i, result), ('i', 'result'))" in result.stdout
    assert "def loop_body(i, result):" in result.stdout


def test_run_prints_result_as_numpy():
    result = autoloop("run", f"{SAMPLE}::sumSquare", "10")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "285\n"


def test_run_explain_says_staged_and_why(user_file):
    result = autoloop("run", f"{user_file}::count_down", "5", "--explain")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "15"
    assert any(line.startswith("line 6: while loop") and "staged as graph control flow" in line
               for line in lines)
    assert any(line.startswith("line 9: if statement") and "staged" in line for line in lines)


def test_run_explain_python_condition(tmp_path):
    path = tmp_path / "py.py"
    path.write_text("def f(x):\n    for i in range(3):\n        x = x + i\n    return x\n")
    result = autoloop("run", f"{path}::f", "1", "--explain")
    assert result.returncode == 0, result.stderr
    assert "line 2: for loop" in result.stdout and "ran as Python" in result.stdout


def test_graph_text_and_dot():
    text = autoloop("graph", f"{SAMPLE}::sumSquare", "--args", "[10]")
    assert text.returncode == 0, text.stderr
    assert "While(" in text.stdout
    dot = autoloop("graph", f"{SAMPLE}::sumSquare", "--args", "[10]", "--format", "dot")
    assert dot.returncode == 0 and dot.stdout.startswith("digraph")


def test_graph_lowered_text_and_dot():
    text = autoloop("graph", f"{SAMPLE}::sumSquare", "--args", "[10]", "--lowered")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("dataflow graph sumSquare(") and "= Enter(" in text.stdout
    assert "NextIteration:0 <back edge>" in text.stdout
    dot = autoloop("graph", f"{SAMPLE}::sumSquare", "--args", "[10]", "--lowered", "--format", "dot")
    assert dot.returncode == 0 and dot.stdout.startswith("digraph") and 'label="next"' in dot.stdout


@pytest.mark.parametrize("target, words", [
    ("missing.py::f", "no such file"),
    ("{sample}::nope", "no function 'nope'"),
    ("{user}::uses_yield", "yield"),
    ("no_separator", "FILE::FUNC"),
])
def test_bad_input_is_one_line_exit_2(target, words, user_file):
    result = autoloop("dump", target.format(sample=SAMPLE, user=user_file))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert words in result.stderr and "Traceback" not in result.stderr


def test_syntax_error_is_one_line_exit_2(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def f(x):\n    return (x\n")
    result = autoloop("dump", f"{path}::f")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "syntax error" in result.stderr


def test_debug_shows_traceback(user_file):
    result = autoloop("--debug", "dump", f"{user_file}::uses_yield")
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_bad_json_argument(user_file):
    result = autoloop("run", f"{user_file}::count_down", "{oops")
    assert result.returncode == 2 and "JSON" in result.stderr
