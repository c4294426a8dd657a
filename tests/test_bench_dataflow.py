"""benchmarks/bench_dataflow.py keeps working: a quick run, which checks that the executors agree."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_a_quick_run_reports_both_tables():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_dataflow
        report = bench_dataflow.report(quick=True, rounds=1)  # no TensorFlow: not a dependency
    finally:
        sys.path.remove(str(BENCHMARKS))
    for row in ("| Session, one iteration at a time (parallel_iterations=1), compiled |",
                "| Session, parallel_iterations=10, compiled |",  # the quick sizes are small: compiled
                "| the same, its loop forced to run as frames (compile_loops=False) |",
                "| compiled executor |", "| numpy on 2 threads by hand, whole arrays |",
                "| numpy on 2 threads by hand, block by block (the ceiling) |",
                "reduce_sum(tanh(X ** (1 + i / 1000)))", "| Session (compiled: the cost rule) |",
                "| Session's loop forced to run as frames, parallel_iterations=10 |"):
        assert row in report, row
    assert "load average at start" in report
