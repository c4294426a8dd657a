"""benchmarks/bench_jax.py keeps working: a quick run checks every implementation's result against the
loop written by hand in JAX, and one cold first call runs in a fresh process (speed is not tested)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jax", reason="JAX is not installed: pip install 'autoloop[jax]' runs the JAX backend's tests")

BENCHMARKS = Path(__file__).resolve().parent.parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def bench_jax():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_jax
        yield bench_jax
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_a_quick_steady_run_checks_results_and_makes_the_table(bench_jax):
    sizes = bench_jax.SIZES["quick"]
    results = bench_jax.measure_steady(sizes, rounds=1)
    table = bench_jax.steady_table(results, sizes)
    for row in ("W1 sum_square, n = 2,000", "W2 collatz(27) called 5 times", "W3 RNN d = 16, T = 50",
                "W4 m = m @ w, 32 × 32, 3 steps"):
        assert row in table, row
    assert "| by hand | autoloop on JAX arrays | autoloop on Tensors |" in table


def test_a_cold_first_call_runs_in_a_fresh_process(bench_jax):
    seconds = bench_jax._cold_sample("W1", "quick", "autoloop")
    assert 0 < seconds < 60


def test_the_layers_of_a_cached_call_check_their_results_and_make_the_table(bench_jax):
    import bench_jax_call
    groups = bench_jax_call.layers()  # each layer's result checked against collatz(27)
    table = bench_jax_call.table(groups, bench_jax_call.measure(groups, rounds=2, calls=2))
    for row in ("| by hand: np.asarray(jitted(x)) | ", "| the program by hand | ", "| the Function call: f(x).numpy() | ",
                "| the watched program by hand | ", "| the Function call: f(x).block_until_ready() | "):
        assert row in table, row
    assert table.count("| 1.000x | 1.000x |") == 2  # each group's baseline against itself
