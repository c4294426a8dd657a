"""What every benchmark shares: interleaved timing, result checks, optional frameworks, the machine.

Timing rules (one place, so every table means the same thing):

- Every implementation of a workload is timed in the same process, in
  *rounds*: each round runs each implementation once, in a shuffled order
  (seeded), so a burst of load from elsewhere hits all of them alike and no
  implementation always runs after the same one.
- TensorFlow and JAX are timed in rounds of their own against numpy:
  TensorFlow's thread pools keep spinning for a while after a call and slow
  down whatever runs next on a 2-core machine (by 30% in our runs).
- A *ratio* is taken inside one round (implementation time / baseline time
  of that round) and we report the median ratio over the rounds with its
  min–max; times are reported as median with min–max. When a workload has
  several hand-written numpy versions (expressions, ``out=`` buffers), the
  baseline of a round is the fastest of them in that round.
- Every implementation's result is checked against the baseline's before
  anything is timed.
- Garbage is collected before each sample, and what exists when timing
  starts is frozen (`gc.freeze`): with TensorFlow loaded a full collection
  takes 0.4 s, and it would otherwise land on whichever sample happened to
  allocate last.

    >>> stats = interleaved({"numpy": lambda: sum(range(100)), "other": lambda: sum(range(200))}, rounds=5)
    >>> stats["other"].ratio.median > 1
    True
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import gc
import importlib
import inspect
import itertools
import linecache
import os
import platform
import random
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Callable

import numpy as np

BASELINE = "numpy"


@dataclasses.dataclass(frozen=True)
class Spread:
    """The median of some samples with their minimum and maximum."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, samples) -> "Spread":
        samples = list(samples)
        return cls(statistics.median(samples), min(samples), max(samples))

    def scaled(self, factor: float) -> "Spread":
        return Spread(self.median * factor, self.low * factor, self.high * factor)


@dataclasses.dataclass(frozen=True)
class Timing:
    """One implementation's seconds per run, and its same-round ratios to the baseline."""

    seconds: Spread
    ratio: Spread


def interleaved(impls: dict[str, Callable[[], object]], rounds: int, repeat: int = 1,
                baseline: str = BASELINE) -> dict[str, Timing]:
    """Time each zero-argument callable `rounds` times, interleaved; see the module docstring.

    Each sample is `repeat` back-to-back calls divided by `repeat` (for calls
    too short to time one by one). One warm-up call per implementation
    precedes the rounds (traces, compiles, fills caches). The baseline is
    every implementation whose name starts with `baseline`.
    """
    names = list(impls)
    baselines = [name for name in names if name.startswith(baseline)]
    if not baselines:
        raise ValueError(f"no implementation named {baseline!r}... among {names}")
    for fn in impls.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in names}
    order = random.Random(0)
    with _frozen_heap():
        for _ in range(rounds):
            for name in order.sample(names, len(names)):
                samples[name].append(_time_once(impls[name], repeat))
    base = [min(round_samples) for round_samples in zip(*(samples[name] for name in baselines))]
    return {name: Timing(Spread.of(samples[name]), Spread.of(s / b for s, b in zip(samples[name], base)))
            for name in names}


def interleaved_apart(impls: dict[str, Callable[[], object]], rounds: int, repeat: int = 1) -> dict[str, Timing]:
    """`interleaved`, with TensorFlow and JAX timed in rounds of their own against the baseline
    (see the module docstring); the baseline's figures come from the first rounds."""
    core = {name: fn for name, fn in impls.items() if name not in FRAMEWORKS}
    timings = interleaved(core, rounds, repeat)
    others = {name: fn for name, fn in impls.items() if name in FRAMEWORKS}
    if others:
        baselines = {name: fn for name, fn in core.items() if name.startswith(BASELINE)}
        measured = interleaved({**baselines, **others}, rounds, repeat)
        timings.update({name: measured[name] for name in others})
    return {name: timings[name] for name in impls}


def time_each(setups: dict[str, Callable[[], Callable[[], object]]], rounds: int) -> dict[str, Spread]:
    """Seconds of each implementation over `rounds` shuffled rounds, for work that differs on every
    call (first calls, conversions): each sample calls the setup (untimed), then times one call of
    the callable it returns. No warm-up, no baseline."""
    samples: dict[str, list[float]] = {name: [] for name in setups}
    order = random.Random(0)
    with _frozen_heap():
        for _ in range(rounds):
            for name in order.sample(list(setups), len(setups)):
                samples[name].append(_time_once(setups[name](), 1))
    return {name: Spread.of(values) for name, values in samples.items()}


@contextlib.contextmanager
def _frozen_heap():
    """What exists now is left out of garbage collections until the block ends (see the module docstring)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _time_once(fn, repeat: int) -> float:
    gc.collect()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def check_result(workload: str, name: str, got, expected, rtol: float = 0.0, atol: float = 0.0) -> None:
    """AssertionError unless `got` equals `expected` (within `rtol`/`atol` for floats), with dtypes compared."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        raise AssertionError(f"{workload}: {name} gave shape {got.shape}, numpy by hand {expected.shape}")
    if got.dtype != expected.dtype:
        raise AssertionError(f"{workload}: {name} gave dtype {got.dtype}, numpy by hand {expected.dtype}")
    if rtol == 0.0 and atol == 0.0:
        if not np.array_equal(got, expected):
            raise AssertionError(f"{workload}: {name} differs from numpy by hand")
    elif not np.allclose(got, expected, rtol=rtol, atol=atol):
        error = np.max(np.abs(got.astype(np.float64) - expected))
        raise AssertionError(f"{workload}: {name} differs from numpy by hand (max abs error {error:g})")


# -- fresh functions ------------------------------------------------------------------
_fresh_serial = itertools.count()


def fresh_function(fn):
    """A new function object with a code object unequal to any before, compiled from `fn`'s source.

    Converters cache their work per code object (autoloop and AutoGraph
    both); a fresh code object makes them convert from scratch, as on the
    first call in a new process. The source is registered in `linecache`
    under a new name, where `inspect` finds it. `fn` must be a plain
    function (its decorators would be applied again).
    """
    serial = next(_fresh_serial)
    # Code objects compare equal when their code and first line are: each copy starts on a new line.
    source = "\n" * serial + _source_of(fn)
    filename = f"<fresh {fn.__name__} #{serial}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(fn.__globals__)
    exec(compile(source, filename, "exec"), namespace)
    return namespace[fn.__name__]


@functools.lru_cache(maxsize=None)
def _source_of(fn) -> str:
    return textwrap.dedent(inspect.getsource(fn))


# -- optional frameworks --------------------------------------------------------------
FRAMEWORKS = ("tensorflow", "jax")  # implementation names and module names alike
_disabled: set[str] = set()


def disable_frameworks() -> None:
    """Leave TensorFlow and JAX out of this run (``--no-frameworks``: a faster run, autoloop against numpy)."""
    _disabled.update(FRAMEWORKS)


def optional(name: str):
    """The module `name` (``"tensorflow"`` or ``"jax"``) if it imports, else None.

    TensorFlow's start-up logging is silenced; both are imported at most once.
    """
    if name not in FRAMEWORKS:
        raise ValueError(f"unknown optional framework {name!r}")
    if name in _disabled:
        return None
    if name == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        with _quiet_stderr():  # TensorFlow's native start-up lines bypass its log level
            return importlib.import_module(name)
    except ImportError:
        return None


@contextlib.contextmanager
def _quiet_stderr():
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def skipped_frameworks() -> list[str]:
    """One line per optional framework that is not installed (its rows are left out)."""
    return [f"{name} {'is left out (--no-frameworks)' if name in _disabled else 'is not installed'}: its rows are skipped"
            for name in FRAMEWORKS if optional(name) is None]


# -- the machine ----------------------------------------------------------------------
def environment() -> list[str]:
    """Where the numbers come from: machine, Python and library versions."""
    lines = [f"machine: {_cpu_name()}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}",
             f"load average at start: {_load()}",
             f"Python {platform.python_version()}, numpy {np.__version__}, autoloop {_autoloop_version()}"]
    for name in FRAMEWORKS:
        module = optional(name)
        if module is not None:
            lines.append(f"{name} {module.__version__}")
    return lines


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def _autoloop_version() -> str:
    import autoloop
    root = Path(autoloop.__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"(git {commit})" if commit else "(no git checkout)"


def command_line(doc: str, argv, quick_help: str, rounds: int | None = None, parser=None) -> argparse.Namespace:
    """The options every benchmark takes: ``--quick``, ``--no-frameworks`` (applied here) and, with a
    default number of `rounds`, ``--rounds``; added to `parser` when given (a script's own options)."""
    parser = parser or argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--no-frameworks", action="store_true", help="leave out TensorFlow and JAX")
    if rounds is not None:
        parser.add_argument("--rounds", type=int, default=rounds, help=f"interleaved rounds (default {rounds})")
    args = parser.parse_args(argv)
    if args.no_frameworks:
        disable_frameworks()
    return args


def format_seconds(seconds: float) -> str:
    """`seconds` in the unit that keeps 3 significant digits readable (ns, µs, ms, s)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_spread(spread: Spread, formatter=format_seconds) -> str:
    return f"{formatter(spread.median)} ({formatter(spread.low)}–{formatter(spread.high)})"


def format_ratio(spread: Spread) -> str:
    return f"{spread.median:.2f}x ({spread.low:.2f}–{spread.high:.2f})"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return "\n".join(lines)


if __name__ == "__main__":
    print("\n".join(environment()))
    print("\n".join(skipped_frameworks()) or "all optional frameworks installed")
    sys.exit(0)
