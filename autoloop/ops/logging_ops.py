"""Printing and assertions: stateful ops that act when they run.

Eagerly they act at once; in a graph they act each time the graph runs, in
program order (the executor never prunes or reorders stateful ops). Both
have no outputs.

Non-tensor arguments (strings, Python numbers) are kept in the node's
attributes as a *template*: a tuple of pieces, each either a string or
``("input", k)`` for the k-th tensor input. Tensors print as numpy prints
them (``[1 2 3]``), strings as they are.

    >>> print_("x is", constant([1, 2]))
    x is [1 2]
"""

from __future__ import annotations

import sys

import numpy as np

from autoloop import dtypes
from autoloop.errors import InvalidArgumentError
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, register
from autoloop.tensor import Tensor


def _template(value, tensors: list, top_level: bool = True) -> list:
    """The pieces printing `value`; tensors found are appended to `tensors`."""
    if hasattr(type(value), "_as_autoloop_tensor"):  # a variable prints its value, read here
        value = convert(value)
    if isinstance(value, Tensor):
        tensors.append(value)
        return [("input", len(tensors) - 1)]
    if isinstance(value, list | tuple) and any(isinstance(item, Tensor) for item in value):
        pieces: list = ["[" if isinstance(value, list) else "("]
        for position, item in enumerate(value):
            if position:
                pieces.append(", ")
            pieces.extend(_template(item, tensors, top_level=False))
        if isinstance(value, tuple) and len(value) == 1:
            pieces.append(",")
        pieces.append("]" if isinstance(value, list) else ")")
        return pieces
    if isinstance(value, np.ndarray | np.generic):
        return [str(value)]
    return [str(value) if top_level else repr(value)]


def _render(template, arrays, summarize=None, format_value=None) -> str:
    format_value = format_value or _format_value
    return "".join(piece if isinstance(piece, str) else format_value(arrays[piece[1]], summarize)
                   for piece in template)


def _format_value(value, summarize=None) -> str:
    """`value` as numpy prints it; with `summarize`, only its first `summarize` elements."""
    array = np.asarray(value)
    if summarize is None or array.size <= summarize:
        return str(value)
    shown = " ".join(str(v) for v in array.reshape(-1)[:summarize])
    return f"[{shown} ...] (first {summarize} of {array.size} elements of shape {array.shape})"


def summarized(value, summarize: int) -> str:
    """`value` as ``tf.print(..., summarize=n)`` shows it: the first and last `summarize` entries of each
    axis (all of them for -1), ``...`` between, rows on their own lines.

        >>> summarized(np.arange(10), 2)
        '[0 1 ... 8 9]'
        >>> print(summarized(np.arange(20).reshape(4, 5), 1))
        [[0 ... 4]
         ...
         [15 ... 19]]
    """
    array = np.asarray(value)

    def block(part, depth: int) -> str:
        if part.ndim == 0:
            return element(part[()])
        size = len(part)
        cut = 0 <= summarize and 2 * summarize < size
        shown = list(range(summarize)) + [None] + list(range(size - summarize, size)) if cut else list(range(size))
        separator = " " if part.ndim == 1 else "\n" * (part.ndim - 1) + " " * (depth + 1)
        return "[" + separator.join("..." if i is None else block(part[i], depth + 1) for i in shown) + "]"
    return block(array, 0)


def element(item) -> str:
    """One entry as TensorFlow prints it: floats without a trailing ``.0``, booleans as 1 and 0."""
    if isinstance(item, np.floating):
        return np.format_float_positional(item, trim="-")
    if isinstance(item, np.bool_ | bool):
        return str(int(item))
    return str(item)


def _no_outputs(*specs, **attrs):
    return []


# -- PrintV2 ---------------------------------------------------------------------
def _print_kernel(*arrays, template, stream, flush=False, summarize=None):
    output = getattr(sys, stream)  # looked up when run, so redirecting sys.stdout works
    if summarize is None:
        output.write(_render(template, arrays))
    else:
        output.write(_render(template, arrays, summarize, summarized))
    if flush:
        output.flush()
    return ()


register(OpDef("PrintV2", kernel=_print_kernel, infer=_no_outputs, stateful=True, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.effects:print_"}))


def print_(*values, sep=" ", end="\n", output_stream="stdout", file=None, flush=False, summarize=None, name=None):
    """Print `values` like Python's ``print`` when the op runs (``autoloop.print``).

    Tensors print as numpy prints their values; other values print with
    ``str``. With `summarize` (an int), tensors print as ``tf.print`` shows
    them: the first and last `summarize` entries of each axis with ``...``
    between (-1: every entry; `summarized`). Eagerly this prints at once; in a traced function, each time the
    graph runs, in program order. `output_stream` (or Python's `file`) is
    ``"stdout"``, ``"stderr"``, ``sys.stdout`` or ``sys.stderr``.
    """
    if file is not None:
        output_stream = file
    if output_stream in (sys.stdout, sys.stderr):
        output_stream = "stdout" if output_stream is sys.stdout else "stderr"
    if output_stream not in ("stdout", "stderr"):
        raise ValueError(f"print: output_stream must be 'stdout' or 'stderr', got {output_stream!r}")
    tensors: list = []
    template: list = []
    for position, value in enumerate(values):
        if position:
            template.append(str(sep))
        template.extend(_template(value, tensors))
    template.append(str(end))
    attrs = {"template": _merge_strings(template), "stream": output_stream, "flush": bool(flush)}
    if summarize is not None:
        if not isinstance(summarize, int) or summarize < -1:
            raise ValueError(f"print: summarize must be an int >= -1 (-1: every entry), got {summarize!r}")
        attrs["summarize"] = summarize
    apply("PrintV2", tensors, attrs, name=name)


def _merge_strings(template) -> tuple:
    merged: list = []
    for piece in template:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        elif piece != "":
            merged.append(piece)
    return tuple(merged)


# -- Assert ---------------------------------------------------------------------
def _assert_infer(condition, *data, template, summarize):
    infer.check_dtype("Assert", condition, (dtypes.bool_,))
    if condition.shape.rank not in (0, None):
        raise ValueError(f"Assert: the condition must be a scalar, got shape {condition.shape}; "
                         f"use autoloop.reduce_all(condition)")
    return []


def _assert_kernel(condition, *data, template, summarize):
    if not condition:
        raise InvalidArgumentError("assertion failed: " + _render(template, data, summarize))
    return ()


register(OpDef("Assert", kernel=_assert_kernel, infer=_assert_infer, stateful=True, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.effects:assert_"}))


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - the TF name
    """Raise `InvalidArgumentError` when the scalar bool `condition` is false.

    The message lists `data` (tensors and strings), each in brackets:
    ``assertion failed: [x must be positive] [-1 2]``. In a traced function the
    check happens when the graph runs. `summarize` limits how many elements
    of each tensor are shown.
    """
    condition = convert(condition)
    if isinstance(data, Tensor | str) or not isinstance(data, list | tuple):
        data = [data]
    tensors: list = []
    template: list = []
    for position, item in enumerate(data):
        template.append(" [" if position else "[")
        template.extend(_template(item, tensors))
        template.append("]")
    summarize = None if summarize is None else int(summarize)
    apply("Assert", [condition, *tensors], {"template": _merge_strings(template), "summarize": summarize},
          name=name)
