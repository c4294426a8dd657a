"""The compiler's public names: `to_code`, `to_graph`, `do_not_convert`, `set_loop_options`."""

from __future__ import annotations

import sys

from autoloop import source_map
from autoloop.compiler import conversion
from autoloop.errors import raise_at


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


def set_loop_options(shape_invariants=None, maximum_iterations=None, parallel_iterations=None,
                     swap_memory=None, checkpoint=None, capacity=None):
    """Options for the loop whose body this call starts (in converted code).

    As the first statement of a loop body, the compiler moves the call's
    arguments onto that loop, so in converted code a directive is never
    called. Any other call in converted code cannot apply to a loop and
    raises when it runs; in plain, unconverted Python it does nothing.
    `shape_invariants` is a list of ``(variable, TensorShape)`` pairs;
    `checkpoint` is `while_loop`'s (bounded memory for gradients through the
    loop); so is `capacity` (the most iterations the loop may run, where
    ``backend="jax"`` needs a bound for what it appends or saves: one more is
    an error, where ``maximum_iterations`` would stop the loop).

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
