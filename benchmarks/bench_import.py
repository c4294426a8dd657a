"""How long a fresh process takes to import autoloop, beside numpy (which autoloop needs) and the command line.

    python benchmarks/bench_import.py            # the table
    python benchmarks/bench_import.py --quick    # fewer processes: a smoke run

Each sample is a fresh Python process that times its own import with
``time.perf_counter`` around the import statement (interpreter start-up is
not counted), so what is measured is the import itself: ``import numpy``,
``import autoloop`` (which imports numpy), the first use of an op after it
(``autoloop.constant(1)``: the op library loads then), and the whole
``autoloop run`` of the sample from the command line, start-up included.
Processes alternate between the kinds; Python's bytecode caches are warm
(a discarded first process writes them). Medians with min–max.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = {
    "import numpy": "import numpy",
    "import autoloop": "import autoloop",
    "import autoloop; autoloop.constant(1)": "import autoloop; autoloop.constant(1)",
}
TIMED = "import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"


def _import_seconds(code: str) -> float:
    result = subprocess.run([sys.executable, "-c", TIMED.format(code=code)], capture_output=True, text=True,
                            cwd=ROOT, check=True)
    return float(result.stdout.split()[-1])


def _command_seconds() -> float:
    import time
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autoloop", "run", "samples/sum_square_autograph.py::sumSquare", "10"],
                   capture_output=True, cwd=ROOT, check=True)
    return time.perf_counter() - started


def measure(processes: int) -> dict:
    """{kind: [seconds per process]}, the kinds sampled in alternation."""
    for code in KINDS.values():
        _import_seconds(code)  # writes bytecode caches; not counted
    samples = {kind: [] for kind in [*KINDS, "autoloop run (the sample, start-up included)"]}
    for _ in range(processes):
        for kind, code in KINDS.items():
            samples[kind].append(_import_seconds(code))
        samples["autoloop run (the sample, start-up included)"].append(_command_seconds())
    return samples


def table(samples: dict) -> str:
    def ms(values):
        return f"{statistics.median(values) * 1e3:.0f} ms ({min(values) * 1e3:.0f}–{max(values) * 1e3:.0f})"
    rows = ["| what | time |", "| --- | ---: |"] + [f"| `{kind}` | {ms(values)} |" for kind, values in samples.items()]
    return "\n".join(rows)


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    print(table(measure(2 if quick else 15)))


if __name__ == "__main__":
    main()
