"""Golden files pin the converted source of each construct, and the pinned code runs.

Each ``golden/NAME.py`` defines ``f``; ``golden/NAME.expected`` holds
``to_code(f)``. Regenerate with ``pytest tests/compiler --update-golden``.
The pinned code itself (not a fresh conversion) is then run on the inputs of
`CALLS`: as Python on Python values, and traced into a graph on tensors
where the case takes them, and must give what the original `f` gives.
"""

import importlib
import importlib.util
import pathlib

import numpy as np
import pytest

import autoloop as al
from autoloop.compiler.api import to_code
from autoloop.compiler.context import RUNTIME_NAME
from autoloop.compiler.conversion import RUNTIME_MODULE

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


# name -> calls: each a function of the golden module giving (Python arguments, tensor arguments or None when
# the case is about Python values only), made anew for each run (some are mutated).
CALLS = {
    "assert_and_print": lambda m: [((3,), (al.constant(3),))],
    "attribute_loop_variable": lambda m: [((m.Counter(), 5), None)],
    "break_statement": lambda m: [(([1, 2, 3, 4], 2), (al.constant([1, 2, 3, 4]), al.constant(2)))],
    "calls": lambda m: [((-3.0,), None)],
    "closure_loop_variable": lambda m: [((4,), (al.constant(4),))],
    "conditional_expression": lambda m: [((k,), (al.constant(k),)) for k in (-2, 3)],
    "continue_statement": lambda m: [((9,), (al.constant(9),))],
    "elif_chain": lambda m: [((k,), (al.constant(k),)) for k in (1, 7, 12)],
    "for_range": lambda m: [((6,), (al.constant(6),))],
    "for_target_live_after": lambda m: [(([4, 5],), (al.constant([4, 5]),))],
    "fstring": lambda m: [((3,), None)],
    "if_else": lambda m: [((k,), (al.constant(k),)) for k in (-2, 3)],
    "if_without_else": lambda m: [((k, 1), (al.constant(k), al.constant(1))) for k in (0, 3)],
    "list_append": lambda m: [((4,), (al.constant(4),))],
    "logical_expressions": lambda m: [((x, y), (al.constant(x), al.constant(y))) for x, y in ((1, 2), (-1, 2), (3, 1))],
    "loop_else": lambda m: [(([1, 2, 3], t), (al.constant([1, 2, 3]), al.constant(t))) for t in (2, 7)],
    "loop_options": lambda m: [((3,), (al.constant(3),))],
    "nested_loops": lambda m: [((7,), (al.constant(7),))],
    "partly_defined": lambda m: [((2,), (al.constant(2),))],
    "return_in_finally": lambda m: [(([0, 3, 5],), None), (([0, 1, 5],), None)],
    "return_in_loop": lambda m: [((20,), (al.constant(20),)), ((3,), (al.constant(3),))],
    "walrus_condition": lambda m: [(([0, 2, 3],), None)],
    "while_loop": lambda m: [((10,), (al.constant(10),))],
}


def _pinned(name):
    """The golden module's `f` as the pinned text defines it (run with the runtime the converter binds)."""
    module = _module(name)
    namespace = dict(vars(module), **{RUNTIME_NAME: importlib.import_module(RUNTIME_MODULE)})
    exec(compile((GOLDEN / f"{name}.expected").read_text(), str(GOLDEN / f"{name}.expected"), "exec"), namespace)
    return module, namespace["f"]


def _module(name):
    spec = importlib.util.spec_from_file_location(f"golden_run_{name}", GOLDEN / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _same(actual, expected):
    actual = actual.numpy() if isinstance(actual, al.Tensor) else actual
    expected = expected.numpy() if isinstance(expected, al.Tensor) else expected
    np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))


def test_every_golden_case_has_inputs():
    assert sorted(CALLS) == CASES


@pytest.mark.parametrize("name", CASES)
def test_the_pinned_code_runs_and_gives_the_original_answer(name, capsys):
    module, pinned = _pinned(name)
    for k in range(len(CALLS[name](module))):
        expected = module.f(*CALLS[name](module)[k][0])  # fresh arguments for each run: some are mutated
        printed = capsys.readouterr().out
        python_args, tensor_args = CALLS[name](module)[k]
        _same(pinned(*python_args), expected)
        assert capsys.readouterr().out == printed
        if tensor_args is not None:
            _same(al.function(pinned, autograph=False)(*tensor_args), expected)
