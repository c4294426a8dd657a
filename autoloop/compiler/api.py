"""The compiler's public names: `to_code`, `to_graph`, `do_not_convert` (and `set_loop_options`, from its leaf
module `autoloop.loop_options`)."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar, overload

from autoloop.compiler import conversion
from autoloop.compiler.passes.calls import BUILTIN_REPLACEMENTS
from autoloop.loop_options import set_loop_options  # noqa: F401 - a public name of the compiler


def _python_function(fn):
    """`fn`, or the Python function an ``@autoloop.function`` wraps (its ``python_function``)."""
    return getattr(fn, "python_function", fn)


def to_code(fn: Callable[..., Any], recursive: bool = True, experimental_optional_features: Any = None) -> str:
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


def to_graph(fn: Callable[..., Any], recursive: bool = True,
             experimental_optional_features: Any = None) -> Callable[..., Any]:
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


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def do_not_convert(fn: None = None) -> Callable[[_F], _F]: ...


@overload
def do_not_convert(fn: _F) -> _F: ...


def do_not_convert(fn: Callable[..., Any] | None = None) -> Any:
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
