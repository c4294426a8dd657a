"""Every sample runs and prints what its seed document shows.

A sample states its expected output in a trailing ``# expected output:``
comment block; this test runs the script and compares.
"""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

SAMPLES = sorted(pathlib.Path(__file__).parent.parent.joinpath("samples").glob("*.py"))
NEEDS_JAX = {"tf2_training_loop.py"}  # its documented output has a line per backend


def expected_output(path: pathlib.Path) -> str:
    lines = path.read_text().splitlines()
    start = lines.index("# expected output:") + 1
    return "\n".join(line[2:] for line in lines[start:] if line.startswith("# ")) + "\n"


def test_there_are_samples():
    assert len(SAMPLES) >= 4


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_prints_the_documented_output(path):
    if path.name in NEEDS_JAX and importlib.util.find_spec("jax") is None:
        pytest.skip(f"{path.name} runs on backend='jax' too, and JAX is not installed")
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected_output(path)


def test_the_non_strict_sample_updates_x_only_when_x_is_fetched():
    path = next(p for p in SAMPLES if p.name == "while_loop_non_strict.py")
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    log = result.stderr.splitlines()
    expected_x = [f"Updating x based on i == [{k}]" for k in range(10)]
    expected_i = [f"Updating i based on i == [{k}]" for k in range(10)]
    assert sorted(line for line in log if line.startswith("Updating x")) == expected_x
    assert log[-10:] == expected_i  # the second fetch: the counter alone
    first = log[:-10]
    assert sorted(first) == sorted(expected_i + expected_x)  # the first fetch: both
    for k in range(1, 10):  # x's iteration k exists only once the counter's update k - 1 has run
        assert first.index(f"Updating i based on i == [{k - 1}]") < first.index(f"Updating x based on i == [{k}]")


def test_the_tf2_training_loop_trains_a_module_like_numpy_by_hand():
    path = next(p for p in SAMPLES if p.name == "tf2_training_loop.py")
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "numpy: loss 0.0395, trained ['linear/b:0', 'linear/w:0'], matches numpy: True"
    on_jax = "jax: loss 0.0395, trained ['linear/b:0', 'linear/w:0'], matches numpy: True"
    assert lines[1] == on_jax if importlib.util.find_spec("jax") else lines[1].startswith("jax: not installed")
