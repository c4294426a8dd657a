"""`converted_call`: how converted code calls functions it could not resolve statically.

User functions (and methods, lambdas, callable objects of user classes) are
converted (once, cached) and called. The builtins that have tensor versions
(``print``, ``len``, ``range``) are recognised by value, so ``size = len;
size(t)`` and a ``range`` passed as an argument work on tensors too.
Library functions, other builtins, anything written in C (numpy ufuncs,
Cython functions) and functions marked `do_not_convert` are called as they
are.

    converted_call(helper, x)      # helper converted once, then called
    converted_call(len, tensor)    # al__.len_(tensor)
"""

from __future__ import annotations

import importlib
import types

from autoloop.compiler import conversion
from autoloop.compiler.passes.calls import BUILTIN_REPLACEMENTS
from autoloop.runtime import lists


def converted_call(function, /, *args, **kwargs):
    """``function(*args, **kwargs)``, converting `function` first if it is user code."""
    replacement = _builtin_replacement(function)
    if replacement is not None:
        return replacement(*args, **kwargs)
    if conversion.is_library(function):
        return lists.library_call(function, args, kwargs)
    if isinstance(getattr(function, "__func__", function), types.FunctionType):
        return conversion.convert(function)(*args, **kwargs)
    call = getattr(type(function), "__call__", None)
    if isinstance(call, types.FunctionType) and not conversion.is_library(call):
        return conversion.convert(call)(function, *args, **kwargs)
    return function(*args, **kwargs)


def _builtin_replacement(function):
    """The runtime's version of a builtin that needs one (``len`` -> ``len_``), or None."""
    try:
        name = BUILTIN_REPLACEMENTS.get(function)
    except TypeError:  # unhashable
        return None
    if name is None:
        return None
    return getattr(importlib.import_module("autoloop.runtime"), name)
