"""benchmarks/bench_gradients.py keeps working: a quick run checks every implementation's result."""

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_a_quick_run_reports_both_tables(capsys):
    sys.path.insert(0, str(BENCHMARKS))
    import harness
    disabled = set(harness._disabled)
    try:
        import bench_gradients
        assert bench_gradients.main(["--quick", "--no-frameworks"]) == 0
    finally:
        sys.path.remove(str(BENCHMARKS))
        harness._disabled.clear()
        harness._disabled.update(disabled)
    out = capsys.readouterr().out
    for row in ("| numpy by hand |", "| autoloop |", "| autoloop, checkpoint=True |",
                "| every value saved |", "| checkpoint=True |"):
        assert row in out, row
