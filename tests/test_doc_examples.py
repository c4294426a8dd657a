"""Every Python example in README.md and docs/ runs, and prints what the page shows.

Each ```python block runs on its own, as a reader would paste it, in a fresh
Python process started in the repository's root (a page may switch a process
to TF1 graph mode). A block followed directly by an ```output block must print exactly
that. A ```py block is shown only, never run (a signature, a fragment, a
program meant for several processes), and so is a file the page includes
(``--8<--``), which runs as a test of its own (for
example converted code that needs its runtime, or a program meant for
several processes); one that uses JAX is skipped, saying so, where JAX is not
installed.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.S | re.M)
HAVE_JAX = subprocess.run([sys.executable, "-c", "import jax"], capture_output=True).returncode == 0

# Runs the block it is given as JSON on stdin from a file (so that its functions have source), and prints
# a JSON line: what it printed, or the error it raised.
RUNNER = r"""
import contextlib, io, json, os, sys, tempfile, traceback
folder = tempfile.mkdtemp()
for index, source in json.load(sys.stdin):
    namespace = {"__name__": "__main__"}
    out = io.StringIO()
    path = os.path.join(folder, f"example_at_line_{index}.py")  # a file, so that functions have source
    with open(path, "w") as file:
        file.write(source)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, path, "exec"), namespace)
        error = None
    except BaseException:
        error = traceback.format_exc(limit=-3)
    print(json.dumps({"index": index, "printed": out.getvalue(), "error": error}), flush=True)
"""


def blocks(page: pathlib.Path):
    """[(python source, expected output or None, line)] for the page's runnable blocks."""
    text = page.read_text()
    found = list(BLOCK.finditer(text))
    runnable = []
    for k, match in enumerate(found):
        language, source = match.group(1), match.group(2)
        if language != "python" or source.startswith("--8<--"):
            continue
        expected = None
        following = found[k + 1] if k + 1 < len(found) else None
        if following is not None and following.group(1) == "output" and \
                not text[match.end():following.start()].strip():
            expected = following.group(2)
        runnable.append((source, expected, text.count("\n", 0, match.start()) + 1))
    return runnable


def uses_jax(source: str) -> bool:
    return 'backend="jax"' in source or "import jax" in source or "jit_compile=True" in source


CASES = [(page, source, expected, line) for page in PAGES for source, expected, line in blocks(page)]


@pytest.mark.parametrize("page, source, expected, line", CASES,
                         ids=[f"{page.relative_to(ROOT)}:{line}" for page, _, _, line in CASES])
def test_the_example_runs_and_prints_what_the_page_shows(page, source, expected, line):
    if not HAVE_JAX and uses_jax(source):
        pytest.skip("the example uses the JAX backend, and JAX is not installed (pip install 'autoloop[jax]')")
    result = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps([(line, source)]), capture_output=True,
                            text=True, cwd=ROOT, timeout=300)
    reports = [json.loads(text) for text in result.stdout.splitlines() if text.startswith("{")]
    assert len(reports) == 1, result.stderr[-3000:]
    where = f"{page.relative_to(ROOT)}:{line}"
    assert reports[0]["error"] is None, f"the example at {where} failed:\n{reports[0]['error']}"
    if expected is not None:
        assert reports[0]["printed"] == expected, f"the example at {where} printed something else"


def test_the_docs_have_examples_with_checked_output():
    checked = [case for case in CASES if case[2] is not None]
    assert len(CASES) >= 10 and len(checked) >= 5
