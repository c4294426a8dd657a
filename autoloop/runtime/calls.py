"""`converted_call`: how converted code calls functions it could not resolve statically.

User functions (and methods, lambdas, callable objects of user classes) are
converted (once, cached) and called; library functions, builtins and
functions marked `do_not_convert` are called as they are.
"""

from __future__ import annotations

import types

from autoloop.compiler import conversion
from autoloop.runtime import lists


def converted_call(function, /, *args, **kwargs):
    """``function(*args, **kwargs)``, converting `function` first if it is user code."""
    if conversion.is_library(function):
        return lists.library_call(function, args, kwargs)
    if isinstance(function, (types.FunctionType, types.MethodType)):
        return conversion.convert(function)(*args, **kwargs)
    call = getattr(type(function), "__call__", None)
    if isinstance(call, types.FunctionType) and not conversion.is_library(call):
        return conversion.convert(call)(function, *args, **kwargs)
    return function(*args, **kwargs)
