"""Generated converted programs over a tensor `x` of any dtype and shape, and a count `n`.

Each program is one source text made into two functions: the plain one runs
on numpy values (``reduce_sum`` is ``np.sum``), the converted one on
autoloop tensors (``reduce_sum`` is ``autoloop.reduce_sum``). Programs nest
``while``/``for``/``if``, assign names first inside loops and branches, and
append to lists; every loop terminates within ``n`` iterations.
"""

from __future__ import annotations

import itertools
import linecache
import random
import textwrap

import numpy as np

import autoloop as al

_serial = itertools.count()


def generate(rng: random.Random) -> str:
    """The source of ``def generated(x, n)``."""
    counters = itertools.count()
    lines = ["def generated(x, n):", "    acc = x * 0", "    t = x + 1", "    out = []", "    i = 0"]
    lines += ["    " + line for line in _block(rng, 0, counters)]
    lines += ["    return acc, t, len(out)"]
    return "\n".join(lines) + "\n"


def _block(rng, depth, counters):
    lines = []
    for _ in range(rng.randint(1, 3)):
        lines += _statement(rng, depth, counters)
    return lines


def _statement(rng, depth, counters):
    kinds = ["assign", "assign", "append", "first"] + (["if", "while", "for"] if depth < 2 else [])
    kind = rng.choice(kinds)
    target = rng.choice(["acc", "t"])
    if kind == "assign":
        return [f"{target} = {_expression(rng)}"]
    if kind == "append":  # items of x's dtype and shape: a graph list holds one of each
        return [f"out.append({_expression(rng, tensor=True)})"]
    if kind == "first":  # a name first bound here; read only where it is bound on every path
        name = f"v{next(counters)}"
        return [f"{name} = {_expression(rng)}", f"acc = acc + {name}"]
    if kind == "if":
        lines = [f"if reduce_sum({rng.choice(['acc', 't', 'x'])}) {rng.choice(['>', '<', '>=', '=='])} "
                 f"{rng.randint(-3, 6)}:"]
        lines += ["    " + line for line in _block(rng, depth + 1, counters)]
        if rng.random() < 0.6:
            lines += ["else:"] + ["    " + line for line in _block(rng, depth + 1, counters)]
        return lines
    counter = f"k{next(counters)}"
    if kind == "while":
        lines = [f"{counter} = 0", f"while {counter} < n:", f"    {counter} += 1"]
    else:
        lines = [f"for {counter} in range(n):"]
    return lines + ["    " + line for line in _block(rng, depth + 1, counters)]


def _expression(rng, tensor=False):
    left = rng.choice(["acc", "t", "x"] + ([] if tensor else ["i"]))
    right = rng.choice(["acc", "t", "x", str(rng.randint(-2, 3))])
    return f"{left} {rng.choice(['+', '-', '*'])} {right}"


def make(source: str):
    """``(plain, converted)``: the program over numpy and over autoloop."""
    source = textwrap.dedent(source)
    filename = f"<generated program {next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    plain_namespace = {"reduce_sum": np.sum}
    converted_namespace = {"reduce_sum": al.reduce_sum}
    exec(code, plain_namespace)
    exec(code, converted_namespace)
    return plain_namespace["generated"], al.function(converted_namespace["generated"])


def outcome(function, *args):
    """What calling `function` gives: its result as numpy values, or the error's type."""
    try:
        result = function(*args)
    except UnboundLocalError:
        return UnboundLocalError
    return tuple(np.asarray(r.numpy() if isinstance(r, al.Tensor) else r) for r in result)


def assert_same_outcome(converted, plain, context):
    if not isinstance(plain, tuple):
        assert converted is plain, f"{context}: expected {plain}, got {converted}"
        return
    assert isinstance(converted, tuple), f"{context}: expected {plain}, got {converted}"
    for got, want in zip(converted, plain):
        assert got.shape == want.shape, f"{context}: shape {got.shape} vs {want.shape}"
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5,
                                   err_msg=context)
