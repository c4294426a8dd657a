"""The differential fuzzer at scale: generated programs, converted vs plain Python.

    python scripts/fuzz.py --programs 10000 --seed 1 --jobs 2 --out fuzz-failures
    python scripts/fuzz.py --seed 1 --index 4711       # one program, shown in full

Prints how many runs fell in each class (ok, wrong answer, internal error,
documented limitation) per mode, the most frequent error signatures, and
writes up to `--per-signature` minimized failing programs per signature to
`--out` (with `summary.txt` listing every failure as seed-index-mode, so any
one can be regenerated with `--index`). Exits 1 if any run was a wrong
answer or an internal error. See tests/fuzz/ for the generator and classes.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import pathlib
import re
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from tests.fuzz.generator import generate  # noqa: E402
from tests.fuzz.runner import CLASSES, INTERNAL, MODES, OK, WRONG, run_program  # noqa: E402


def _summaries(job):
    """(seed, indices) -> per program: [(mode, kind, signature, description)], Python's result."""
    seed, indices = job
    rows = []
    for index in indices:
        outcome = run_program(generate(seed, index))
        rows.append((index, outcome.expected.describe(),
                     [(m.mode, m.kind, m.signature, m.result.describe()) for m in outcome.modes]))
    return rows


def _minimized(job):
    seed, index, mode = job
    from tests.fuzz.minimize import minimize
    return minimize(generate(seed, index), mode)


def _pool(jobs):
    # Fresh workers now and then: every program defines new functions, and
    # conversion caches hold on to them.
    return multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=20)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index", type=int, help="run only this program and show it in full")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("fuzz-failures"))
    parser.add_argument("--per-signature", type=int, default=2,
                        help="minimized programs written per distinct failure")
    args = parser.parse_args(argv)
    if args.index is not None:
        return _show(args.seed, args.index)

    started = time.perf_counter()
    chunks = [(args.seed, range(start, min(start + 25, args.programs)))
              for start in range(0, args.programs, 25)]
    if args.jobs > 1:
        with _pool(args.jobs) as pool:
            results = [row for rows in pool.imap(_summaries, chunks) for row in rows]
    else:
        results = [row for chunk in chunks for row in _summaries(chunk)]
    elapsed = time.perf_counter() - started

    counts = {mode: collections.Counter() for mode in MODES}
    per_program = collections.Counter()
    groups = collections.defaultdict(list)  # (kind, signature) -> [(index, mode, description, expected)]
    for index, expected, modes in results:
        worst = OK
        for mode, kind, signature, description in modes:
            counts[mode][kind] += 1
            if kind in (WRONG, INTERNAL):
                groups[kind, signature or "(a value)"].append((index, mode, description, expected))
            if CLASSES.index(kind) and (worst == OK or kind in (WRONG, INTERNAL)):
                worst = kind if worst != WRONG else worst
        per_program[worst] += 1

    print(f"{args.programs} programs, seed {args.seed}, {elapsed:.0f} s")
    print(f"{'mode':<8}" + "".join(f"{kind:>23}" for kind in CLASSES))
    for mode in MODES:
        print(f"{mode:<8}" + "".join(f"{counts[mode][kind]:>23}" for kind in CLASSES))
    print(f"{'programs':<8}" + "".join(f"{per_program[kind]:>23}" for kind in CLASSES)
          + "   (each program counted once, by its worst run)")
    ranked = sorted(groups.items(), key=lambda item: -len(item[1]))
    for (kind, signature), members in ranked[:25]:
        modes = collections.Counter(mode for _, mode, _, _ in members)
        print(f"  {len(members):>5}  {kind}: {signature}  [{', '.join(f'{m} {n}' for m, n in modes.items())}]")

    if groups:
        _write_failures(args, ranked)
    return 1 if groups else 0


def _write_failures(args, ranked):
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    jobs, headers = [], []
    lines = []
    for number, ((kind, signature), members) in enumerate(ranked):
        lines.append(f"{len(members)} x {kind}: {signature}")
        lines.extend(f"    {args.seed}-{index}-{mode}: {description} (Python {expected})"
                     for index, mode, description, expected in members)
        for index, mode, description, expected in members[:args.per_signature]:
            jobs.append((args.seed, index, mode))
            headers.append((number, kind, signature, index, mode, description, expected))
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    if args.jobs > 1:
        with _pool(args.jobs) as pool:
            sources = pool.map(_minimized, jobs, chunksize=1)
    else:
        sources = [_minimized(job) for job in jobs]
    for (number, kind, signature, index, mode, description, expected), source in zip(headers, sources):
        slug = re.sub(r"[^a-z]+", "-", kind)
        program = generate(args.seed, index)
        header = [f"# {kind} in the {mode!r} run: {signature}",
                  f"# program {args.seed}-{index}, arguments (a, b, xs) = {program.args}, "
                  f"tensors in the mixed run: {program.mixed}",
                  f"# converted: {description}", f"# Python:    {expected} (on the original program)",
                  f"# regenerate: python scripts/fuzz.py --seed {args.seed} --index {index}", ""]
        (out / f"{number:03d}-{slug}-{args.seed}-{index}-{mode}.py").write_text("\n".join(header) + source)
    print(f"wrote {len(sources)} minimized programs and summary.txt to {out}/")


def _show(seed, index) -> int:
    from autoloop.compiler import conversion
    from tests.fuzz.runner import load
    program = generate(seed, index)
    print(program.source)
    print(f"arguments (a, b, xs) = {program.args}; tensors in the mixed run: {program.mixed}\n")
    outcome = run_program(program)
    print(f"Python: {outcome.expected.describe()}")
    for mode in outcome.modes:
        print(f"  {mode.describe()}")
    print("\nconverted:\n" + conversion.converted_source(load(program.source)))
    return 0 if all(m.kind not in (WRONG, INTERNAL) for m in outcome.modes) else 1


if __name__ == "__main__":
    sys.exit(main())
