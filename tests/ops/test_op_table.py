"""Every op against numpy, eagerly and traced, from the table in `op_cases`."""

import pytest

import autoloop  # noqa: F401  (registers every op)
from autoloop.ops import registry
from op_cases import CASES, NOT_NUMPY_COMPARABLE
from ophelpers import assert_same, run_checked, run_eager, run_traced

IDS = [f"{case.op}-{case.id}" for case in CASES]


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
    assert not missing, (f"ops without a numpy comparison case in tests/ops/op_cases.py: {missing}; "
                         f"add a Case (or, for graph plumbing, list the op in NOT_NUMPY_COMPARABLE)")


def test_the_allow_list_names_only_registered_or_planned_ops():
    assert not covered_and_allowed(), "an op is both in the table and in the allow-list"


def covered_and_allowed():
    return {case.op for case in CASES} & NOT_NUMPY_COMPARABLE
