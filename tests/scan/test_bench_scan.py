"""benchmarks/bench_scan.py keeps working: a quick run checks every workload's result and prints its table."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_a_quick_run_checks_results_and_reports_the_targets():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_scan
        import harness
        harness.disable_frameworks()
        lengths = bench_scan.long_tailed_lengths(64, 1000)
        assert lengths.max() == 1000 and sorted(lengths)[32] < 20  # long-tailed: most short, a few long
        report = bench_scan.table(*bench_scan.measure(quick=True, rounds=1))
    finally:
        sys.path.remove(str(BENCHMARKS))
    for row in ("each entry alone (summed)", "scan, compaction (default)", "scan, compaction=False (masked)",
                "target <= 1.5x", "target >= 3x"):
        assert row in report, row
    assert "JAX" not in report
