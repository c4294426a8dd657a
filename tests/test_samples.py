"""Every sample runs and prints what its seed document shows.

A sample states its expected output in a trailing ``# expected output:``
comment block; this test runs the script and compares.
"""

import pathlib
import subprocess
import sys

import pytest

SAMPLES = sorted(pathlib.Path(__file__).parent.parent.joinpath("samples").glob("*.py"))


def expected_output(path: pathlib.Path) -> str:
    lines = path.read_text().splitlines()
    start = lines.index("# expected output:") + 1
    return "\n".join(line[2:] for line in lines[start:] if line.startswith("# ")) + "\n"


def test_there_are_samples():
    assert len(SAMPLES) >= 4


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_prints_the_documented_output(path):
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected_output(path)
