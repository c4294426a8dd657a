"""The gradient benchmarks keep working: a quick run checks every implementation's result."""

import importlib
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _quick_run(module_name: str, capsys) -> str:
    """Run ``benchmarks/<module_name>.py --quick --no-frameworks``; its printed output."""
    sys.path.insert(0, str(BENCHMARKS))
    import harness
    disabled = set(harness._disabled)
    try:
        assert importlib.import_module(module_name).main(["--quick", "--no-frameworks"]) == 0
    finally:
        sys.path.remove(str(BENCHMARKS))
        harness._disabled.clear()
        harness._disabled.update(disabled)
    return capsys.readouterr().out


def test_a_quick_run_reports_both_tables(capsys):
    out = _quick_run("bench_gradients", capsys)
    for row in ("| numpy by hand |", "| autoloop |", "| autoloop, checkpoint=True |",
                "| every value saved |", "| checkpoint=True |"):
        assert row in out, row


def test_the_autodiff_benchmark_runs_and_checks_its_results(capsys):
    out = _quick_run("bench_autodiff", capsys)
    for row in ("| autoloop, backend='numpy' |", "| autoloop, backend='numpy' | tape.jacobian (pfor) |",
                "| autoloop, backend='numpy' | tape.jacobian (row loop) |", "| recompute_grad |",
                "| jvp (tangent carried) |"):
        assert row in out, row
