"""Every op against numpy, eagerly and traced, from the tables in `op_cases` and `op_cases_extended`."""

import inspect
import pathlib
import sys

import pytest

import autoloop
from autoloop.ops import registry
import op_cases
import op_cases_extended
from op_cases import NOT_NUMPY_COMPARABLE
from ophelpers import assert_same, run_checked, run_eager, run_traced

CASES = op_cases.CASES + op_cases_extended.CASES
IDS = [f"{case.op}-{case.id}" for case in CASES]

# Public op functions checked by their own tests rather than by a numpy case.
TESTED_ELSEWHERE = {
    "Assert": "tests/ops/test_logging_ops.py", "print_": "tests/ops/test_logging_ops.py",
    "assert_equal": "tests/ops/test_names.py", "assert_less": "tests/ops/test_names.py",
    "assert_greater": "tests/ops/test_names.py", "case": "tests/ops/test_names.py",
    "switch_case": "tests/ops/test_names.py", "expand_dims@sparse": "tests/ops/test_names.py",
    "to_dense@sparse": "tests/tf_compat/test_guide_gaps.py",
    "executing_eagerly": "tests/ops/test_names.py", "get_static_value": "tests/ops/test_names.py",
    "name_scope": "tests/ops/test_names.py", "set_seed": "tests/ops/test_random.py",
    "convert_to_tensor": "tests/core/test_values.py", "slice_tensor": "Tensor.__getitem__ cases",
    "py_function": "tests/function_surface/test_py_function.py",
    "numpy_function": "tests/function_surface/test_py_function.py",
}
NAMESPACES = [autoloop, autoloop.math, autoloop.nn, autoloop.linalg, autoloop.random, autoloop.debugging,
              autoloop.sparse]
_OP_MODULES = ("autoloop.ops.", "autoloop.control_flow.case", "autoloop.control_flow.sparse_ops")


def _expected(case):
    result = case.ref(*case.args)
    return list(result) if isinstance(result, list) else result


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_eager_matches_numpy(case):
    assert_same(run_eager(case.fn, *case.args), _expected(case))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_traced_matches_numpy(case):
    assert_same(run_traced(case.fn, *case.args), _expected(case))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_traced_kernels_give_the_inferred_dtype_and_shape(case):
    results, graph = run_checked(case.fn, *case.args)  # raises if a kernel breaks its promise
    expected = _expected(case)
    assert_same(list(results) if isinstance(expected, list) else results[0], expected)
    assert case.op in {node.op for node in graph.walk()}, f"the case does not create a {case.op} node"


def test_every_registered_op_has_a_numpy_case():
    covered = {case.op for case in CASES}
    missing = sorted(set(registry.all_ops()) - covered - NOT_NUMPY_COMPARABLE)
    assert not missing, (f"ops without a numpy comparison case in tests/ops/op_cases*.py: {missing}; "
                         f"add a Case (or, for graph plumbing, list the op in NOT_NUMPY_COMPARABLE)")


def test_the_allow_list_names_only_registered_or_planned_ops():
    assert not covered_and_allowed(), "an op is both in the table and in the allow-list"


def covered_and_allowed():
    return {case.op for case in CASES} & NOT_NUMPY_COMPARABLE


def _public_op_functions():
    """``{key: function}`` for every public function of the op library, under any namespace."""
    found = {}
    for namespace in NAMESPACES:
        for name, value in vars(namespace).items():
            if name.startswith("_") or not inspect.isfunction(value):
                continue
            if not value.__module__.startswith(_OP_MODULES):
                continue
            key = value.__name__ if value.__module__ != "autoloop.control_flow.sparse_ops" else \
                f"{value.__name__}@sparse"
            found[key] = value
    return found


def test_every_public_op_function_is_called_by_a_case():
    """A new public op function (autoloop.X, autoloop.math.X, ...) without a numpy case fails here."""
    callers = {pathlib.Path(module.__file__).resolve() for module in (op_cases, op_cases_extended)}
    callers |= {pathlib.Path(sys.modules["ophelpers"].__file__).resolve(),  # run_eager calls case.fn
                pathlib.Path(sys.modules["autoloop.ops.tensor_methods"].__file__).resolve()}  # operators
    caller_files = {str(path) for path in callers}
    called = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_back is not None and frame.f_back.f_code.co_filename in caller_files:
            called.add(frame.f_code)

    sys.setprofile(profile)
    try:
        for case in CASES:
            run_eager(case.fn, *case.args)
    finally:
        sys.setprofile(None)
    missing = sorted(key for key, fn in _public_op_functions().items()
                     if fn.__code__ not in called and key not in TESTED_ELSEWHERE)
    assert not missing, f"public op functions no case in tests/ops/op_cases*.py calls: {missing}"
