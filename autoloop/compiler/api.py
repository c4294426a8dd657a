"""The compiler's public names: `to_code`, `to_graph`, `do_not_convert`, `set_loop_options`."""

from __future__ import annotations

import functools
import sys

from autoloop import source_map
from autoloop.compiler import conversion
from autoloop.compiler.passes.calls import BUILTIN_REPLACEMENTS
from autoloop.errors import raise_at


def _python_function(fn):
    """`fn`, or the Python function an ``@autoloop.function`` wraps (its ``python_function``)."""
    return getattr(fn, "python_function", fn)


def to_code(fn, recursive=True, experimental_optional_features=None) -> str:
    """The converted source of `fn` (a function or an ``@autoloop.function``) as readable Python.

    `recursive` and `experimental_optional_features` are TensorFlow's
    arguments (`_tensorflow_options`).

        >>> print(to_code(sum_square))
        def sum_square(n):
            ...
            i, result = al__.while_stmt(loop_cond, loop_body, (i, result), ('i', 'result'))
            return result
    """
    _tensorflow_options(recursive, experimental_optional_features)
    return conversion.converted_source(_python_function(fn))


def to_graph(fn, recursive=True, experimental_optional_features=None):
    """The converted Python function itself (not traced); call it inside a trace to stage it.

    For an ``@autoloop.function`` this converts the function it wraps.
    `recursive` and `experimental_optional_features` are TensorFlow's
    arguments (`_tensorflow_options`).
    """
    _tensorflow_options(recursive, experimental_optional_features)
    return conversion.convert(_python_function(fn))


def _tensorflow_options(recursive, features) -> None:
    """TensorFlow's conversion options, checked: calls to your functions are always converted
    (``recursive=True``), and every optional feature is always on (`autograph.features`)."""
    from autoloop.autograph.features import check_features  # autoloop.autograph imports this module
    if not recursive:
        raise ValueError("recursive=False: autoloop always converts the functions a converted function "
                         "calls (they keep Python's semantics wherever values are Python values); leave "
                         "recursive out, or mark a function autoloop.do_not_convert")
    check_features(features, "experimental_optional_features")


def do_not_convert(fn=None):
    """Mark `fn` to be called as it is from converted code, never converted.

    Usable as ``@do_not_convert`` or ``do_not_convert(fn)``; returns `fn`. A
    builtin that converted code replaces (``print``, ``len``, ``range``)
    comes back as a new function that calls it as it is, so that only
    calls through that name stay Python's: ``trace_print =
    do_not_convert(print)`` prints while tracing only, as TensorFlow's
    ``print`` does, and ``print`` itself still prints on every call.
    """
    if fn is None:
        return do_not_convert
    if any(fn is builtin for builtin in BUILTIN_REPLACEMENTS):
        fn = _called_as_is(fn)
    return conversion.mark_do_not_convert(fn)


def _called_as_is(builtin):
    @functools.wraps(builtin)
    def called_as_is(*args, **kwargs):
        return builtin(*args, **kwargs)
    return called_as_is


def set_loop_options(shape_invariants=None, maximum_iterations=None, parallel_iterations=None,
                     swap_memory=None, checkpoint=None):
    """Options for the loop whose body this call starts (in converted code).

    As the first statement of a loop body, the compiler moves the call's
    arguments onto that loop, so in converted code a directive is never
    called. Any other call in converted code cannot apply to a loop and
    raises when it runs; in plain, unconverted Python it does nothing.
    `shape_invariants` is a list of ``(variable, TensorShape)`` pairs;
    `checkpoint` is `while_loop`'s (bounded memory for gradients through the
    loop).

        while i < n:
            autoloop.set_loop_options(shape_invariants=[(x, autoloop.TensorShape([None]))])
            x = autoloop.concat([x, [i]], 0)
            i += 1
    """
    caller = sys._getframe(1)
    if source_map.is_generated(caller.f_code.co_filename):
        location = source_map.lookup(caller.f_code.co_filename, caller.f_lineno)
        where = f" at {location[0]}, line {location[1]}" if location else ""
        raise_at(ValueError(
            f"set_loop_options(...){where} is not the first statement of a loop body, so it applies "
            f"to no loop; make it the first statement of the body of the loop it is meant for"), location)
    return None
