"""README's "Backends: numpy and JAX" examples run and print what they say (``# value`` after a print)."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

import pytest

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _examples():
    section = README.read_text().split("## Backends: numpy and JAX", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


@pytest.mark.parametrize("source", _examples(), ids=lambda s: s.splitlines()[-1][:40])
def test_a_readme_example_prints_what_it_says(source, tmp_path):
    expected = [line.split("#")[-1].strip() for line in source.splitlines() if line.startswith("print(")]
    path = tmp_path / "example.py"  # a file: autoloop converts functions from their source
    path.write_text(source)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, str(path), "exec"), {"__name__": "example"})
    assert out.getvalue().split() == expected
