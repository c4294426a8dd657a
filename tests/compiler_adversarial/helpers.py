"""Helpers for the adversarial compiler tests: run a program as plain Python and
converted on tensors, and compare."""

from __future__ import annotations

import itertools
import linecache
import textwrap
import traceback

import numpy as np

import autoloop as al


def to_tensors(args, static=()):
    """`args` as constants, except the positions in `static` (kept as Python values)."""
    return [a if i in static else al.constant(a) for i, a in enumerate(args)]


def assert_same(result, expected, context=""):
    """A (nested) converted result equals the (nested) Python result."""
    if isinstance(expected, list) and isinstance(result, al.Tensor):
        expected = np.asarray(expected)  # a stacked list
    if isinstance(expected, (tuple, list)):
        assert isinstance(result, (tuple, list)), f"{context}: expected a sequence, got {result!r}"
        assert len(result) == len(expected), f"{context}: {result!r} vs {expected!r}"
        for r, e in zip(result, expected):
            assert_same(r, e, context)
        return
    if expected is None:
        assert result is None, f"{context}: expected None, got {result!r}"
        return
    assert isinstance(result, al.Tensor), f"{context}: expected a Tensor, got {result!r}"
    got = np.asarray(result.numpy())
    want = np.asarray(expected)
    assert got.shape == want.shape, f"{context}: shape {got.shape} vs {want.shape}"
    if want.dtype.kind == "f" or got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=context)
    else:
        np.testing.assert_array_equal(got, want, err_msg=context)


def check(fn, *args, static=()):
    """`fn(*args)` in Python equals `al.function(fn)` on the tensors of `args`."""
    expected = fn(*args)
    result = al.function(fn)(*to_tensors(args, static))
    assert_same(result, expected, f"{fn.__name__}{args}")
    return result


def graph_ops(fn, *args):
    """Every op name in the traced graph of `al.function(fn)(*args)`, sub-graphs included."""
    graph = al.function(fn).get_concrete_function(*args).graph
    ops = []

    def walk(g):
        for node in g.nodes:
            ops.append(node.op)
            for sub in node.subgraphs():
                walk(sub)
    walk(graph)
    return ops


def user_frames(error, filename):
    """The (filename, line) frames of `error`'s traceback that are in `filename`."""
    return [(f.filename, f.lineno) for f in traceback.extract_tb(error.__traceback__)
            if f.filename == filename]


_serial = itertools.count()


def make_function(source: str, name: str, namespace: dict | None = None):
    """Define the function `name` from `source` as if it came from a file."""
    source = textwrap.dedent(source)
    filename = f"<adversarial source {next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    globals_ = {"__name__": "adversarial_programs", "al": al}
    globals_.update(namespace or {})
    exec(compile(source, filename, "exec"), globals_)
    return globals_[name]
