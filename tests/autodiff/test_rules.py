"""Every gradient rule against finite differences, driven by the op registry.

An op must either have a gradient rule or be declared NOT_DIFFERENTIABLE,
and every rule must be exercised by a case of `gradient_cases` (a new op
without one fails here, with the op's name).
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop.ir import control_flow
from autoloop.ops import registry
from autoloop.ops.registry import NOT_DIFFERENTIABLE

from .checks import check_gradient
from .gradient_cases import CASES, OPS_IN_SECOND_ORDER, RESEED

IDS = [f"{c.op}-{c.id}" for c in CASES]


def _arguments(case, index):
    return case.args(np.random.default_rng(1000 + index))


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_rule_matches_finite_differences(index):
    case = CASES[index]
    if case.random:
        check_gradient(case.fn, _arguments(case, index), step=case.step, traced=False, reseed=RESEED)
    else:
        check_gradient(case.fn, _arguments(case, index), step=case.step, seed=index)


def _ops_in_cases() -> set:
    found = set()
    for index, case in enumerate(CASES):
        arguments = _arguments(case, index)
        if case.random:
            found.add(case.op)
            continue
        graph = al.function(case.fn, autograph=False).get_concrete_function(*arguments).graph
        found |= {node.op for node in graph.walk()}
    return found | OPS_IN_SECOND_ORDER


def test_every_op_has_a_rule_or_is_declared_not_differentiable():
    missing = sorted(name for name, op in registry.all_ops().items() if op.gradient is None)
    assert not missing, (f"ops with neither a gradient rule nor gradient=NOT_DIFFERENTIABLE in their "
                         f"registration: {missing}")
    for name, op in control_flow.all_control_flow_ops().items():
        assert op.gradient is not None, f"control-flow op {name} has no gradient rule"


def test_every_rule_is_checked_by_a_case():
    rules = {name for name, op in registry.all_ops().items() if op.gradient not in (None, NOT_DIFFERENTIABLE)}
    unchecked = sorted(rules - _ops_in_cases())
    assert not unchecked, (f"ops whose gradient rule no case in tests/autodiff/gradient_cases.py "
                           f"exercises: {unchecked}; add a GradCase")


def test_not_differentiable_ops_give_no_gradient():
    values = np.array([1.4, -1.3])
    x = al.constant(values)
    with al.GradientTape(persistent=True) as tape:
        tape.watch(x)
        blocked = {  # y: the gradient when the first factor passes no gradient
            "StopGradient": (al.stop_gradient(x) * x, values),
            "Floor": (al.floor(x) * x, np.floor(values)),
            "Sign": (al.sign(x) * x, np.sign(values)),
            "ZerosLike": (al.zeros_like(x) + x, np.ones(2)),
            "comparison": (al.cast(x > 0, al.float64) * x, (values > 0).astype(float)),
            "integer cast": (al.cast(al.cast(x, al.int32), al.float64) * x, np.trunc(values)),
        }
        only_blocked = al.stop_gradient(x) * 2.0
    for name, (y, expected) in blocked.items():
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), expected, err_msg=name)
    assert tape.gradient(only_blocked, x) is None
