"""Golden files pin the converted source of each construct.

Each ``golden/NAME.py`` defines ``f``; ``golden/NAME.expected`` holds
``to_code(f)``. Regenerate with ``pytest tests/compiler --update-golden``.
"""

import importlib.util
import pathlib

import pytest

from autoloop.compiler.api import to_code

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = sorted(path.stem for path in GOLDEN.glob("*.py"))


def _load(name):
    spec = importlib.util.spec_from_file_location(f"golden_{name}", GOLDEN / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.parametrize("name", CASES)
def test_converted_source_matches_golden(name, request):
    actual = to_code(_load(name)) + "\n"
    expected_path = GOLDEN / f"{name}.expected"
    if request.config.getoption("--update-golden"):
        expected_path.write_text(actual)
        return
    assert expected_path.exists(), f"no golden file {expected_path.name}; run pytest --update-golden"
    assert actual == expected_path.read_text()


@pytest.mark.parametrize("name", CASES)
def test_golden_output_compiles_standalone(name):
    compile(to_code(_load(name)), f"<golden {name}>", "exec")
