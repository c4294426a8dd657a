"""`autoloop run --explain` reports only lines the user wrote as loops and branches (never the
compiler's return/break/continue guards), and names called functions that no trace reached."""

import ast

import pytest

from autoloop import cli

MODEL = '''
import autoloop as al


def slow_helper(x):
    while x > 100:
        x -= 1
    return x


def rare(x):
    for k in range(3):
        x += k
    return x


def plain(x):
    return x + 1


@al.function
def search(n, flag):
    i = al.constant(0)
    total = al.constant(0)
    while i < n:
        if total > 50:
            break
        if i % 2 == 0:
            total += i
            i += 1
            continue
        total += slow_helper(i)
        i += 1
    if flag:
        total = rare(total)
    else:
        total = plain(total)
    if n > 1000:
        return -total
    return total
'''


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(MODEL)
    return "model.py"


def _statement_lines(kinds):
    """The lines of MODEL that hold one of the statements `kinds`."""
    return {node.lineno for node in ast.walk(ast.parse(MODEL)) if isinstance(node, kinds)}


@pytest.mark.parametrize("flag", ["true", "false"])
def test_explain_reports_only_the_users_loops_and_branches(model, capsys, flag):
    code = cli.main(["run", f"{model}::search", "10", flag, "--explain"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    reported = [int(line.split(":")[0].removeprefix("line ")) for line in out[1:]]
    control = _statement_lines((ast.While, ast.For, ast.If))
    definitions = _statement_lines((ast.FunctionDef,))
    assert set(reported) <= control | definitions, out
    assert len(reported) == len(set(reported)), out  # one line per statement
    # every loop and branch of search and of the functions it reached is there
    search_lines = {line for line in control if line > 20}
    assert search_lines <= set(reported)
    lines = "\n".join(out)
    assert "while loop `while x > 100:`: staged as graph control flow" in lines  # slow_helper, reached
    if flag == "false":
        rare_line = MODEL.splitlines().index("def rare(x):") + 1
        call_line = next(n for n, text in enumerate(MODEL.splitlines(), 1) if "rare(total)" in text)
        assert (f"line {rare_line}: function rare `def rare(x):`: called at line {call_line} but not "
                f"reached while tracing, so its loops and branches are not listed") in out
    else:
        assert "for loop `for k in range(3):`: ran as Python" in lines
        assert "function rare" not in lines
    assert "plain" not in lines  # reached or not, it has no loops or branches to explain
