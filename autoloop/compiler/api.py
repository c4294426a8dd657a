"""The compiler's public names: `to_code`, `to_graph`, `do_not_convert` (and `set_loop_options`, from its leaf
module `autoloop.loop_options`)."""

from __future__ import annotations


from autoloop.compiler import conversion
from autoloop.loop_options import set_loop_options  # noqa: F401 - a public name of the compiler


def _python_function(fn):
    """`fn`, or the Python function an ``@autoloop.function`` wraps (its ``python_function``)."""
    return getattr(fn, "python_function", fn)


def to_code(fn) -> str:
    """The converted source of `fn` (a function or an ``@autoloop.function``) as readable Python.

        >>> print(to_code(sum_square))
        def sum_square(n):
            ...
            i, result = al__.while_stmt(loop_cond, loop_body, (i, result), ('i', 'result'))
            return result
    """
    return conversion.converted_source(_python_function(fn))


def to_graph(fn):
    """The converted Python function itself (not traced); call it inside a trace to stage it.

    For an ``@autoloop.function`` this converts the function it wraps.
    """
    return conversion.convert(_python_function(fn))


def do_not_convert(fn=None):
    """Mark `fn` to be called as it is from converted code, never converted.

    Usable as ``@do_not_convert`` or ``do_not_convert(fn)``; returns `fn`.
    """
    if fn is None:
        return do_not_convert
    return conversion.mark_do_not_convert(fn)
