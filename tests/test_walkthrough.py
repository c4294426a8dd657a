"""docs/walkthrough.py runs: its own assertions check every step it shows."""

import pathlib
import subprocess
import sys

WALKTHROUGH = pathlib.Path(__file__).parent.parent / "docs" / "walkthrough.py"


def test_walkthrough_runs_and_ends_with_the_result():
    result = subprocess.run([sys.executable, str(WALKTHROUGH)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "sum_square(10) = 285" in result.stdout
    assert "== 6. rewrite" in result.stdout and "count:0: int32()" in result.stdout
