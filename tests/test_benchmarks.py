"""The benchmark harness keeps working: a quick run of every benchmark, and the harness's own rules.

Speed itself is not tested here (benchmarks measure it, on a quiet machine);
this runs every workload at small sizes without TensorFlow and JAX, which
checks each implementation's result against numpy by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def harness():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import harness
        harness.disable_frameworks()
        yield harness
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_a_quick_run_of_every_benchmark_checks_results_and_reports_each_table(harness):
    import run_all
    report = run_all.report(quick=True, rounds=1)
    for row in ("W1 sum_square", "W2 collatz", "W3 RNN", "W4 m = m @ w", "W5 m = concat",
                "cached call of add_one", "eager op", "x + 1 (a Python number)", "first call of collatz", "numpy by hand", "autoloop converted",
                "7-line", "40-line", "`import autoloop`", "`import numpy`"):
        assert row in report, row
    assert "Python 3." in report and ("numpy 2." in report or "numpy 1." in report)
    assert "tensorflow is left out (--no-frameworks): its rows are skipped" in report
    assert "| tensorflow |" not in report and "| jax |" not in report


def test_ratios_are_taken_within_a_round_against_the_fastest_numpy_version(harness):
    slow = lambda: sum(range(2000))  # noqa: E731
    fast = lambda: sum(range(200))  # noqa: E731
    timings = harness.interleaved({"numpy": slow, "numpy, out=": fast, "other": slow}, rounds=3)
    assert timings["other"].ratio.median > 2  # against the faster numpy version
    assert timings["numpy, out="].ratio.median == 1.0
    with pytest.raises(ValueError, match="no implementation named 'numpy'"):
        harness.interleaved({"other": slow}, rounds=1)


def test_a_wrong_result_or_dtype_stops_the_benchmark(harness):
    import numpy as np
    harness.check_result("w", "same", np.int32(3), np.int32(3))
    with pytest.raises(AssertionError, match="w: wrong differs from numpy by hand"):
        harness.check_result("w", "wrong", np.int32(4), np.int32(3))
    with pytest.raises(AssertionError, match="dtype int64, numpy by hand int32"):
        harness.check_result("w", "widened", np.int64(3), np.int32(3))
    with pytest.raises(AssertionError, match="max abs error"):
        harness.check_result("w", "far", np.float32(1.1), np.float32(1.0), rtol=1e-3)


def test_fresh_functions_defeat_per_code_caches(harness):
    from bench_loops import sum_square_python
    first, second = harness.fresh_function(sum_square_python), harness.fresh_function(sum_square_python)
    assert first.__code__ != second.__code__ != sum_square_python.__code__
    assert first(10) == second(10) == sum_square_python(10) == 285


def test_the_readme_block_is_replaced_between_its_markers(harness):
    import run_all
    text = f"intro\n{run_all.START}\nold table\n{run_all.END}\nrest\n"
    assert run_all.replace_block(text, "new table", "README.md") == (
        f"intro\n{run_all.START}\nnew table\n{run_all.END}\nrest\n")
    with pytest.raises(SystemExit, match="has no"):
        run_all.replace_block("no markers", "new", "README.md")
