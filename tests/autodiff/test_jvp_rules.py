"""Every op's forward-mode rule against finite differences, driven by the op registry.

The cases are the reverse rules' (`gradient_cases`): every op with a
gradient has a forward rule (its own, or derived from the gradient), and
each case checks it traced and eagerly.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop.autodiff.jvp_rules import jvp_rule_for
from autoloop.autodiff.rules import rule_for
from autoloop.ir import control_flow
from autoloop.ops import registry

from .gradient_cases import CASES, RESEED
from .jvp_checks import check_jvp

# Ops whose forward mode raises by design, each with its test below.
NO_FORWARD_MODE = {"PyFunction"}
IDS = [f"{c.op}-{c.id}" for c in CASES]


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_forward_rule_matches_finite_differences(index):
    case = CASES[index]
    if case.op in NO_FORWARD_MODE:
        pytest.skip(f"forward mode through {case.op} raises by design (test_py_function_refuses_forward_mode_by_name_and_line)")
    arguments = case.args(np.random.default_rng(1000 + index))
    # Through float32 the differences along a random direction carry float32 rounding.
    tolerance = {"rtol": 1e-4, "atol": 1e-5} if "float32" in case.id else {}
    if case.random:
        check_jvp(case.fn, arguments, step=case.step, traced=False, reseed=RESEED, **tolerance)
    else:
        check_jvp(case.fn, arguments, step=case.step, seed=index, **tolerance)


def test_every_op_with_a_gradient_has_a_forward_rule():
    """Its own jvp, a derived one (LINEAR, ELEMENTWISE) or the gradient's transpose."""
    for name in registry.all_ops():
        assert jvp_rule_for(name) is not None or rule_for(name) is not None, name
    for name, op in control_flow.all_control_flow_ops().items():
        assert op.jvp is not None, f"control-flow op {name} has no forward rule"


def test_an_op_without_rules_names_itself_and_the_line(monkeypatch):
    opdef = registry.get("Sin")
    monkeypatch.setattr(opdef, "gradient", None)
    monkeypatch.setattr(opdef, "jvp", None)
    x = al.constant(1.0)
    with al.autodiff.ForwardAccumulator(x, al.constant(1.0)):
        with pytest.raises(LookupError, match=r"no forward-mode rule for op Sin"):
            al.sin(x)

    @al.function
    def traced(x):
        with al.autodiff.ForwardAccumulator(x, al.constant(1.0)) as acc:
            y = al.sin(x)
        return acc.jvp(y)
    with pytest.raises(LookupError, match=r"op Sin \(created at .*test_jvp_rules.py:\d+\)"):
        traced(x)


# (TensorArray and stack ops have only their declared rule: the derived one refuses lists.)
_DECLARED = [index for index, case in enumerate(CASES)
             if case.op in registry.all_ops() and registry.get(case.op).jvp is not None and not case.random
             and not case.op.startswith(("TensorList", "Stack"))]


@pytest.mark.parametrize("index", _DECLARED, ids=[IDS[k] for k in _DECLARED])
def test_a_declared_rule_agrees_with_the_one_derived_from_the_gradient(index, monkeypatch):
    """The declared rule is a fast path: without it, the transposed gradient rule gives the same."""
    case = CASES[index]
    arguments = case.args(np.random.default_rng(1000 + index))
    declared = check_jvp(case.fn, arguments, step=case.step, seed=index, traced=False, rtol=1e-4, atol=1e-5)
    monkeypatch.setattr(registry.get(case.op), "jvp", None)
    derived = check_jvp(case.fn, arguments, step=case.step, seed=index, traced=False, rtol=1e-4, atol=1e-5)
    for one, other in zip(declared["eager"], derived["eager"]):
        if one is not None and other is not None:
            np.testing.assert_allclose(one, other, rtol=1e-12, atol=1e-14)


def test_py_function_refuses_forward_mode_by_name_and_line():
    """Eagerly the accumulator sees the ops `func` runs; in a graph, py_function is one op whose forward rule
    cannot be derived from its gradient (a call of `func` under a tape), so it raises instead of giving None."""
    def forward(x, t):
        with al.autodiff.ForwardAccumulator(x, t) as acc:
            y = al.py_function(lambda v: al.sin(v) * v, [x], al.float32)
        return acc.jvp(y)

    x, t = al.constant([0.5, 1.0]), al.constant([1.0, 0.0])
    np.testing.assert_allclose(forward(x, t).numpy(), [np.cos(0.5) * 0.5 + np.sin(0.5), 0.0], rtol=1e-6)
    with pytest.raises(NotImplementedError, match=r"forward mode .* cannot pass through py_function \(created "
                                                  r"at .*test_jvp_rules.py:\d+\).*GradientTape"):
        al.function(forward)(x, t)
