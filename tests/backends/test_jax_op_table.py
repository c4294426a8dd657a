"""The op table on the JAX backend: every case against numpy, many cases per compiled function.

Each XLA compilation costs about 0.1 s, so the cases of `tests/ops/op_cases*`
run in batches: one traced function calls the cases of a batch on their
inputs and returns all their results, compiled once. A batch that fails is
run case by case to name the case. Cases whose result shape XLA cannot
know (``NOT_ON_XLA``) are checked to raise a clear `BackendError`.
(``--jax-corpus=full`` also runs every case on its own through the JAX
backend: ``tests/ops/test_op_table.py::test_traced_matches_numpy[...-jax]``.)
"""

from __future__ import annotations

import pathlib
import sys
import traceback

import numpy as np
import pytest

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

import autoloop as al  # noqa: E402
from autoloop.errors import BackendError  # noqa: E402
from tests.backends.differential import assert_close  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent.parent / "ops"))  # where the op tests import their tables from
import op_cases  # noqa: E402
import op_cases_extended  # noqa: E402

CASES = op_cases.CASES + op_cases_extended.CASES
_ROWS = "one row per true element"
NOT_ON_XLA = {  # case -> what the BackendError says: a result whose shape depends on values
    "Fill-ones-dynamic": "Fill takes the shape from the values of its inputs",
    "Range-tensor-limit": "Range takes limit from the values",
    "Range-tensor-start-float": "Range takes start from the values",
    "Reshape-tensor-shape": "Reshape takes the shape from the values",
    "Reshape-list-with-tensor": "Reshape takes the shape from the values",
    "Tile-tensor-multiples": "Tile takes the multiples from the values",
    "BroadcastTo-tensor-shape": "BroadcastTo takes the shape from the values",
    "RandomUniform-tensor-shape-float64": "RandomUniform takes the shape from the values",
    "Where-coordinates": _ROWS, "Where-numeric": _ROWS, "GatherV2-boolean_mask": _ROWS,
    "GatherV2-boolean_mask-2d-mask": _ROWS, "GatherV2-boolean_mask-axis1": _ROWS,
    "TensorListConcat-rows-of-different-lengths": r"elements have shape \(1, 4\) gets one of shape \(2, 4\)",
    "TensorListSplit-rows": "pieces of different",
    "Less-sequence_mask-longest": "Range takes limit from the values",  # maxlen is max(lengths)
    "Unique-first-appearance": r"unique\(x\) gives one element per distinct value",
}
BATCH = 60


def _key(case) -> str:
    return f"{case.op}-{case.id}"


def _expected(case):
    result = case.ref(*case.args)
    return list(result) if isinstance(result, list) else result


def _flat(result) -> list:
    if isinstance(result, list | tuple):
        return [leaf for item in result for leaf in _flat(item)]
    return [result]


def _batch_function(cases):
    """One function running `cases` on their arguments, concatenated; its results, flat per case."""
    counts = [len(case.args) for case in cases]

    def run(*args):
        results, start = [], 0
        for case, count in zip(cases, counts):
            results.append(case.fn(*args[start:start + count]))
            start += count
        return results
    return run


def _run_on_jax(cases):
    args = [arg for case in cases for arg in case.args]
    results = al.function(_batch_function(cases), autograph=False, backend="jax")(*args)
    return [[np.asarray(t.numpy() if isinstance(t, al.Tensor) else t) for t in _flat(r)] for r in results]


def _check(case, found) -> None:
    expected = [np.asarray(e) for e in _flat(_expected(case))]
    assert len(found) == len(expected), _key(case)
    for position, (a, b) in enumerate(zip(expected, found)):
        assert_close(a, b, f"{_key(case)} output {position}")


BATCHES = [[c for c in CASES if _key(c) not in NOT_ON_XLA][i:i + BATCH]
           for i in range(0, len(CASES), BATCH)]
BATCHES = [b for b in BATCHES if b]


@pytest.mark.parametrize("batch", BATCHES, ids=[f"{_key(b[0])}..{_key(b[-1])}" for b in BATCHES])
def test_op_cases_match_numpy_on_jax(batch):
    try:
        results = _run_on_jax(batch)
    except Exception:  # noqa: BLE001 - find the case at fault
        for case in batch:
            _check(case, _run_on_jax([case])[0])
        raise
    for case, found in zip(batch, results):
        _check(case, found)


@pytest.mark.parametrize("key", sorted(NOT_ON_XLA))
def test_ops_with_value_dependent_shapes_are_a_clear_error_on_jax(key):
    (case,) = [c for c in CASES if _key(c) == key]
    with pytest.raises(BackendError, match=NOT_ON_XLA[key]) as raised:
        al.function(case.fn, autograph=False, backend="jax")(*case.args)
    assert "(at " in str(raised.value) and "backend='numpy'" in str(raised.value)  # where, and a way out


def test_every_op_has_a_jax_kernel_but_state_and_what_the_lowering_does_itself():
    import autoloop.compat.v1  # noqa: F401 - registers the TF1 graph ops
    from autoloop.backends.jax.analysis import VARIABLE_OPS
    from autoloop.ops import registry
    without = set()
    for name, opdef in registry.all_ops().items():
        try:
            assert callable(opdef.kernel_for("jax").fn), name
        except KeyError:
            without.add(name)
    # Const and Placeholder are values the lowering passes on; a TF1 graph variable's handle is refused by
    # name (autoloop.backends.jax.analysis.refuse_session_state); reads and updates of eager variables are
    # carried (autoloop.backends.jax.variables).
    assert without == {"Const", "Placeholder", "VarHandleOp"}
    assert "VarHandleOp" in VARIABLE_OPS


def test_an_op_without_a_jax_kernel_is_named(monkeypatch):
    from autoloop.ops import registry
    monkeypatch.delitem(registry.get("Sin").kernels, "jax")

    def f(x):
        return al.sin(x) * 2

    assert al.function(f)(al.constant(0.0)).numpy() == 0.0
    with pytest.raises(BackendError, match=r"^the op Sin \(at .*\) cannot be compiled by XLA \(backend='jax'\): it "
                                           r"has no JAX kernel yet; run this function on backend='numpy'$") as raised:
        al.function(f, backend="jax")(al.constant(0.0))
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in str(raised.value)
    last = traceback.extract_tb(raised.value.__traceback__)[-1]  # raised at the user's line, not in JAX
    assert (last.filename, last.lineno) == (__file__, f.__code__.co_firstlineno + 1)
    assert raised.value.__cause__ is None and not getattr(raised.value, "__notes__", None)
