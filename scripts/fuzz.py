"""The differential fuzzer at scale: generated programs, converted vs plain Python, in every mode.

    python scripts/fuzz.py --programs 10000 --seed 1 --jobs 2 --out fuzz-failures
    python scripts/fuzz.py --mode jax --programs 500 --seed 3        # one mode (see tests/fuzz/runner.py)
    python scripts/fuzz.py --mode all --programs 500 --seed 3        # every mode, a table each
    python scripts/fuzz.py --seed 1 --index 4711       # one program, shown in full

Modes: numpy (the numpy executor: eager, on Python values, on some and on
all tensor arguments), interpreter (the reference interpreter), jax
(backend="jax"), session (compat.v1 placeholders and Session.run), object
(configs passed as dataclasses, namedtuples, attrs-style and plain objects,
changed between calls) and gradient (traced GradientTape gradients against
the eager tape and finite differences, with and without checkpointing, on
numpy and jax).

Prints, per mode, how many runs fell in each class (ok, wrong answer,
internal error, documented limitation), the most frequent error signatures,
and writes up to `--per-signature` minimized failing programs per signature
to `--out` (with `summary.txt` listing every failure as seed-index-run, so
any one can be regenerated with `--index`). Exits 1 if any run was a wrong
answer or an internal error. See tests/fuzz/ for the generators and classes.
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

from tests.fuzz import gradients  # noqa: E402
from tests.fuzz.generator import generate  # noqa: E402
from tests.fuzz.runner import CLASSES, INTERNAL, OK, RUNS, WRONG, run_program  # noqa: E402


def outcome_of(mode, seed, index):
    """Program `index` of `seed` run in `mode` (an `Outcome`)."""
    if mode == "gradient":
        return gradients.run_gradients(gradients.generate(seed, index))
    return run_program(generate(seed, index), RUNS[mode])


def _summaries(job):
    """(mode, seed, indices) -> per program: [(run, kind, signature, description)], Python's result."""
    mode, seed, indices = job
    rows = []
    for index in indices:
        outcome = outcome_of(mode, seed, index)
        rows.append((index, outcome.expected.describe(),
                     [(m.mode, m.kind, m.signature, m.result.describe()) for m in outcome.modes]))
    return rows


def _minimized(job):
    mode, seed, index, run = job
    if mode == "gradient":  # the minimizer knows the int programs only
        return gradients.generate(seed, index).source
    from tests.fuzz.minimize import minimize
    return minimize(generate(seed, index), run)


def _pool(jobs):
    # Fresh workers now and then: every program defines new functions, and
    # conversion caches hold on to them.
    return multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=20)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=list(RUNS) + ["all"], default="numpy")
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index", type=int, help="run only this program and show it in full")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("fuzz-failures"))
    parser.add_argument("--per-signature", type=int, default=2,
                        help="minimized programs written per distinct failure")
    args = parser.parse_args(argv)
    modes = list(RUNS) if args.mode == "all" else [args.mode]
    if args.index is not None:
        return max(_show(mode, args.seed, args.index) for mode in modes)
    failed = False
    for mode in modes:
        failed |= _run_mode(mode, args)
    return 1 if failed else 0


def _run_mode(mode, args) -> bool:
    """Run `args.programs` programs in `mode`, print its table; whether any run failed."""
    started = time.perf_counter()
    chunks = [(mode, args.seed, range(start, min(start + 25, args.programs)))
              for start in range(0, args.programs, 25)]
    if args.jobs > 1:
        with _pool(args.jobs) as pool:
            results = [row for rows in pool.imap(_summaries, chunks) for row in rows]
    else:
        results = [row for chunk in chunks for row in _summaries(chunk)]
    elapsed = time.perf_counter() - started

    runs = RUNS[mode]
    counts = {run: collections.Counter() for run in runs}
    per_program = collections.Counter()
    groups = collections.defaultdict(list)  # (kind, signature) -> [(index, run, description, expected)]
    for index, expected, outcomes in results:
        worst = OK
        for run, kind, signature, description in outcomes:
            counts[run][kind] += 1
            if kind in (WRONG, INTERNAL):
                groups[kind, signature or "(a value)"].append((index, run, description, expected))
            if CLASSES.index(kind) and (worst == OK or kind in (WRONG, INTERNAL)):
                worst = kind if worst != WRONG else worst
        per_program[worst] += 1

    width = max(len(run) for run in runs + ("programs",)) + 2
    print(f"mode {mode}: {args.programs} programs, seed {args.seed}, {elapsed:.0f} s")
    print(f"{'run':<{width}}" + "".join(f"{kind:>23}" for kind in CLASSES))
    for run in runs:
        print(f"{run:<{width}}" + "".join(f"{counts[run][kind]:>23}" for kind in CLASSES))
    print(f"{'programs':<{width}}" + "".join(f"{per_program[kind]:>23}" for kind in CLASSES)
          + "   (each program counted once, by its worst run)")
    ranked = sorted(groups.items(), key=lambda item: -len(item[1]))
    for (kind, signature), members in ranked[:25]:
        by_run = collections.Counter(run for _, run, _, _ in members)
        print(f"  {len(members):>5}  {kind}: {signature}  [{', '.join(f'{r} {n}' for r, n in by_run.items())}]")
    print()
    if groups:
        _write_failures(args, mode, ranked)
    return bool(groups)


def _write_failures(args, mode, ranked):
    out = args.out / mode
    out.mkdir(parents=True, exist_ok=True)
    jobs, headers = [], []
    lines = []
    for number, ((kind, signature), members) in enumerate(ranked):
        lines.append(f"{len(members)} x {kind}: {signature}")
        lines.extend(f"    {args.seed}-{index}-{run}: {description} (Python {expected})"
                     for index, run, description, expected in members)
        for index, run, description, expected in members[:args.per_signature]:
            jobs.append((mode, args.seed, index, run))
            headers.append((number, kind, signature, index, run, description, expected))
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    if args.jobs > 1:
        with _pool(args.jobs) as pool:
            sources = pool.map(_minimized, jobs, chunksize=1)
    else:
        sources = [_minimized(job) for job in jobs]
    for (number, kind, signature, index, run, description, expected), source in zip(headers, sources):
        slug = re.sub(r"[^a-z]+", "-", kind)
        program = gradients.generate(args.seed, index) if mode == "gradient" else generate(args.seed, index)
        header = [f"# {kind} in the {run!r} run (mode {mode}): {signature}",
                  f"# program {args.seed}-{index}, arguments (a, b, xs) = {program.args}, "
                  f"tensors in the mixed run: {program.mixed}",
                  f"# converted: {description}", f"# Python:    {expected} (on the original program)",
                  f"# regenerate: python scripts/fuzz.py --mode {mode} --seed {args.seed} --index {index}", ""]
        name = f"{number:03d}-{slug}-{args.seed}-{index}-{re.sub(r'[^a-z]+', '-', run)}.py"
        (out / name).write_text("\n".join(header) + source)
    print(f"wrote {len(sources)} minimized programs and summary.txt to {out}/")


def _show(mode, seed, index) -> int:
    from autoloop.compiler import conversion
    from tests.fuzz.runner import load
    program = gradients.generate(seed, index) if mode == "gradient" else generate(seed, index)
    print(program.source)
    print(f"arguments (a, b, xs) = {program.args}; tensors in the mixed run: {program.mixed}\n")
    outcome = outcome_of(mode, seed, index)
    print(f"mode {mode}; Python: {outcome.expected.describe()}")
    for run in outcome.modes:
        print(f"  {run.describe()}")
    print("\nconverted:\n" + conversion.converted_source(load(program.source)))
    return 0 if all(run.kind not in (WRONG, INTERNAL) for run in outcome.modes) else 1


if __name__ == "__main__":
    sys.exit(main())
