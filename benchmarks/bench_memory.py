"""Peak memory of a loop over a 4096 × 4096 float32 tensor: ``x = tanh(x * 0.5 + 0.25)``.

    python benchmarks/bench_memory.py            # 4096 × 4096, 3 steps
    python benchmarks/bench_memory.py --quick    # 512 × 512

numpy reports every array it allocates to `tracemalloc`, so the peak of
traced memory during one run, less what was traced before the input was
made, is the most memory the loop held at once, the input included. We give
it in MiB and in full-size tensors (64 MiB each at 4096²). "numpy by hand"
is the loop written with expressions (numpy reuses the temporary of
``x * 0.5`` for ``+ 0.25``, then ``tanh`` needs a new array while ``x`` is
still bound: 3 tensors); "numpy in place" updates one buffer through
``out=`` (1 tensor). TensorFlow and JAX allocate outside numpy's allocator,
where tracemalloc cannot see them, so they have no rows here.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import tracemalloc

import numpy as np

import autoloop as al
from harness import environment, markdown_table


@dataclasses.dataclass(frozen=True)
class Peak:
    name: str
    bytes: int
    seconds: float


def numpy_by_hand(x, steps):
    half, quarter = np.float32(0.5), np.float32(0.25)
    for _ in range(steps):
        x = np.tanh(x * half + quarter)
    return x


def numpy_in_place(x, steps):
    half, quarter = np.float32(0.5), np.float32(0.25)
    x = x.copy()  # the caller's input stays as it was, as in every other implementation
    for _ in range(steps):
        np.multiply(x, half, out=x)
        np.add(x, quarter, out=x)
        np.tanh(x, out=x)
    return x


@al.function(autograph=False)
def autoloop_graph(x, steps):
    return al.while_loop(lambda i, x: i < steps, lambda i, x: (i + 1, al.tanh(x * 0.5 + 0.25)), (al.constant(0), x))[1]


@al.function
def autoloop_converted(x, steps):
    for _ in al.range(steps):
        x = al.tanh(x * 0.5 + 0.25)
    return x


def numpy_input(size):
    return np.full((size, size), 0.5, np.float32)


def autoloop_input(size):
    return al.constant(numpy_input(size))


# name: (make the input, run the loop on it and give back a numpy array)
IMPLEMENTATIONS = {
    "numpy by hand": (numpy_input, numpy_by_hand),
    "numpy in place": (numpy_input, numpy_in_place),
    "autoloop while_loop": (autoloop_input, lambda x, steps: autoloop_graph(x, steps).numpy()),
    "autoloop converted": (autoloop_input, lambda x, steps: autoloop_converted(x, steps).numpy()),
}


def peak_of(make_input, run, size: int, steps: int) -> tuple[int, float, np.ndarray]:
    """(peak traced bytes during the run, the input included; seconds; result).

    The input is made in each implementation's own form before the peak is
    reset, so a copy made while converting it is not counted.
    """
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        x = make_input(size)
        tracemalloc.reset_peak()
        start = time.perf_counter()
        result = run(x, steps)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return peak, seconds, result


def measure(size: int = 4096, steps: int = 3) -> list[Peak]:
    """Each implementation's peak, after one unmeasured run (traces and compiles)."""
    expected = numpy_by_hand(numpy_input(size), steps)
    peaks = []
    for name, (make_input, run) in IMPLEMENTATIONS.items():
        run(make_input(size), steps)
        peak, seconds, result = peak_of(make_input, run, size, steps)
        if not np.array_equal(result, expected):
            raise AssertionError(f"{name} differs from numpy by hand")
        peaks.append(Peak(name, peak, seconds))
    return peaks


def table(peaks: list[Peak], size: int) -> str:
    tensor = size * size * 4
    rows = [[peak.name, f"{peak.bytes / 2**20:.0f} MiB", f"{peak.bytes / tensor:.2f}"] for peak in peaks]
    return markdown_table(["implementation", "peak traced memory", f"in {size}² float32 tensors"], rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="512 × 512: a smoke run")
    args = parser.parse_args(argv)
    size = 512 if args.quick else 4096
    print("\n".join(environment()))
    print(table(measure(size), size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
