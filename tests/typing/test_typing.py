"""autoloop's types as a user's type checker sees them: py.typed, the public stub, and mypy on two programs."""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import autoloop

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_package_says_it_is_typed():
    assert importlib.resources.files("autoloop").joinpath("py.typed").is_file()


def test_the_public_stub_is_current_and_names_exactly_the_public_names():
    # A name added to autoloop/__init__.py's _PUBLIC (or a new op) needs `python scripts/public_stub.py`.
    public_stub = _load(ROOT / "scripts" / "public_stub.py", "public_stub")
    assert public_stub.STUB.read_text() == public_stub.stub_text(), "run: python scripts/public_stub.py"
    public = {name for name in dir(autoloop) if not name.startswith("_")}
    assert set(re.findall(r" as (\w+),\n", public_stub.STUB.read_text())) == public
    assert set(re.findall(r'^    "(\w+)",$', public_stub.STUB.read_text(), re.MULTILINE)) == public  # __all__


def test_the_typed_user_program_runs():
    results = _load(HERE / "user_program.py", "user_program").main()
    assert results["sum_squares"] == 14 and results["total"] == 3
    np.testing.assert_allclose(results["halved"], [0.75])
    np.testing.assert_allclose(results["squares"], [0.0, 1.0, 4.0])
    np.testing.assert_allclose(results["gradient"], [[1.0] * 3, [2.0] * 3])
    assert "while_stmt" in results["code"]


def _expected_errors(path: pathlib.Path) -> set[tuple[int, str]]:
    lines = path.read_text().splitlines()
    return {(number, match.group(1)) for number, line in enumerate(lines, 1)
            if (match := re.search(r"# error: ([\w-]+)$", line))}


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (CI installs it)")
def test_mypy_accepts_the_user_program_and_finds_each_mistake(tmp_path):
    user, wrong = HERE / "user_program.py", HERE / "wrong_program.py"
    # --follow-imports=silent: autoloop's own modules are read for their types; `python -m mypy` checks them.
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--follow-imports=silent",
         "--cache-dir", str(tmp_path / "cache"), str(user), str(wrong)],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}, timeout=300)
    found = {(pathlib.Path(file).name, int(line), code) for file, line, code in
             re.findall(r"^(.*?\.py):(\d+): error: .*\[([\w-]+)\]$", run.stdout, re.MULTILINE)}
    assert not {error for error in found if error[0] == user.name}, run.stdout
    assert {(line, code) for name, line, code in found if name == wrong.name} == _expected_errors(wrong), run.stdout
    assert run.returncode == 1
