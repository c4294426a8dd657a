"""Converting a function: the pass pipeline, the cache, and `convert(fn)`.

    converted = convert(sum_square)     # same signature; loops now call al__.while_stmt
    converted(al.constant(10))          # runs (and, while tracing, stages) the loops

Each code object is converted once; each function object gets its own
converted function (same closure cells, globals and defaults) once. Both
are freed with the function: nothing kept for a function outlives it.
Conversion never falls back to the original function: what cannot be
converted raises.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import os
import sys
import sysconfig
import threading
import types
import weakref

import gast

from autoloop import source_map
from autoloop.compiler import emit, parse
from autoloop.compiler.analysis import analyze
from autoloop.compiler.analysis.closures import captured_names, exception_visible_names
from autoloop.compiler.context import RUNTIME_NAME, ConversionContext, Namer, names_in
from autoloop.compiler.passes.asserts import Asserts
from autoloop.compiler.passes.breaks import Breaks
from autoloop.compiler.passes.calls import Calls
from autoloop.compiler.passes.conditional_expressions import ConditionalExpressions
from autoloop.compiler.passes import finally_jumps
from autoloop.compiler.passes.conditionals import Conditionals
from autoloop.compiler.passes.continues import Continues
from autoloop.compiler.passes.directives import LoopDirectives
from autoloop.compiler.passes.lists import ListAppends
from autoloop.compiler.passes.logical import LogicalExpressions
from autoloop.compiler.passes.loops import Loops
from autoloop.compiler.passes.returns import Returns
from autoloop.compiler.passes import undefined
from autoloop.compiler.passes.undefined import UndefinedReads
from autoloop.compiler.passes.unsupported import UnsupportedConstructs
from autoloop.compiler.passes.walrus import Walrus
from autoloop.errors import raise_at

RUNTIME_MODULE = "autoloop.runtime"  # imported when a converted function is made, not before


def transform(tree, ctx):
    """The pipeline: a parsed function in, the converted function out."""
    ctx.root = tree
    tree = UnsupportedConstructs.transform(tree, ctx)  # first: reject what cannot be converted at all
    tree = LoopDirectives.transform(tree, ctx)  # on the user's tree: set_loop_options first in a loop body
    if ctx.has_nested_scopes or ctx.has_try:  # names that keep one binding; before passes add lambdas
        for node in gast.walk(tree):
            if isinstance(node, gast.FunctionDef):
                ctx.captured[node] = captured_names(node) if ctx.has_nested_scopes else frozenset()
                ctx.exception_visible[node] = exception_visible_names(node) if ctx.has_try else frozenset()
    if ctx.has_finally:
        tree = finally_jumps.mark(tree, ctx)  # before the flag passes: the jumps that leave a finally block
    tree = Returns.transform(tree, ctx)  # before breaks: a return in a loop becomes a break
    tree = Continues.transform(tree, ctx)  # before walrus: a continue must not skip a hoisted test
    tree = Walrus.transform(tree, ctx)  # before breaks: a break must skip the hoisted test
    tree = Breaks.transform(tree, ctx)  # last flag pass: loops now end only through their test
    if ctx.has_try:
        tree = finally_jumps.CaughtJumps.transform(tree, ctx)  # a caught error cancels the body's jumps
    if ctx.has_finally:
        tree = finally_jumps.FinallyJumps.transform(tree, ctx)  # a jump in finally cancels pending ones
    # After the flag passes (an append after a `return` is now inside their `if`), before the
    # analyses (they must see `l = list_append(l, x)`).
    tree = ListAppends.transform(tree, ctx)
    # Expression passes run while the tree is still the user's size (before
    # loops and branches become functions); they also lower the `not break_`
    # tests the flag passes made.
    tree = ConditionalExpressions.transform(tree, ctx)  # a if c else b -> al__.if_exp
    tree = LogicalExpressions.transform(tree, ctx)  # and/or/not/chains -> al__.and_/or_/not_
    tree = Asserts.transform(tree, ctx)
    tree = Calls.transform(tree, ctx)  # print/len/range and user calls
    analysis = analyze(tree, ctx.extra_tests)  # once: scopes, cfg, liveness, definedness
    tree = UndefinedReads.transform(tree, ctx, analysis)  # before statements move into functions
    tree = Loops.transform(tree, ctx, analysis)  # while/for -> loop_cond/loop_body + while_stmt/for_stmt
    tree = Conditionals.transform(tree, ctx, analysis)  # if -> if_true/if_false + if_stmt
    tree = undefined.bind_at_entry(tree, ctx, analysis)  # last: names generated functions may read unbound
    return tree


# -- which functions are converted ---------------------------------------------------------

_DO_NOT_CONVERT: weakref.WeakSet = weakref.WeakSet()
_CONVERTED: weakref.WeakSet = weakref.WeakSet()
_LIBRARY_ROOTS = {"autoloop", "numpy", "builtins", "gast", "pytest", "_pytest", "hypothesis"}
_LIBRARY_DIRS = tuple({os.path.normcase(os.path.realpath(p)) + os.sep for p in (
    sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
    sysconfig.get_paths().get("platlib")) if p})


def mark_do_not_convert(fn):
    _DO_NOT_CONVERT.add(getattr(fn, "__func__", fn))
    return fn


def is_library(target) -> bool:
    """Whether calls to `target` run as they are (not user code to convert)."""
    target = getattr(target, "__func__", target)
    try:
        if target in _DO_NOT_CONVERT or target in _CONVERTED:
            return True
    except TypeError:
        pass
    if isinstance(target, (type, types.BuiltinFunctionType, types.ModuleType)):
        return True
    if isinstance(target, functools.partial):
        return False
    if not isinstance(target, types.FunctionType):
        if not isinstance(getattr(type(target), "__call__", None), types.FunctionType):
            return True  # written in C (numpy ufuncs, Cython functions): nothing to convert
        return _is_library_module(getattr(type(target), "__module__", None), None)
    code = target.__code__
    if source_map.is_generated(code.co_filename):
        return True
    return _is_library_module(getattr(target, "__module__", None), code.co_filename)


def _is_library_module(module_name, filename) -> bool:
    if module_name:
        root = module_name.split(".")[0]
        if root in _LIBRARY_ROOTS or root in getattr(sys, "stdlib_module_names", ()):
            return True
    if filename:
        path = os.path.normcase(os.path.realpath(filename))
        return path.startswith(_LIBRARY_DIRS) or "site-packages" in path or "dist-packages" in path
    return module_name is None


# -- converting ------------------------------------------------------------------------------

class _ConvertedCode:
    """What converting one code object produced, from the source in `user_file`."""

    def __init__(self, emitted, name, user_file):
        self.emitted = emitted
        self.name = name
        self.user_file = user_file


# Freed with its code object (a _ConvertedCode refers only to the converted code). A function's
# converted function lives in the function's own __dict__, as (function, converted): it shares the
# function's globals, which usually hold the function, so any table outside would keep it alive.
_CODES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # code object -> _ConvertedCode
_CONVERTED_ATTRIBUTE = "__autoloop_converted__"


def _resolver(fn):
    namespace = fn.__globals__
    builtin_names = namespace.get("__builtins__", builtins)
    if isinstance(builtin_names, types.ModuleType):
        builtin_names = builtin_names.__dict__

    def resolve(name):
        if name in fn.__code__.co_freevars:
            return False, None  # closures may differ between functions sharing this code
        if name in namespace:
            return True, namespace[name]
        if name in builtin_names:
            return True, builtin_names[name]
        return False, None
    return resolve


def convert_code(fn) -> _ConvertedCode:
    """Parse, transform and emit `fn`'s code (cached per code object)."""
    cached = _CODES.get(fn.__code__)
    # Code objects compare equal without their file: the same function in two files must not
    # share one conversion, whose source map points at one of them.
    if cached is not None and cached.user_file == fn.__code__.co_filename:
        return cached
    result = _convert_uncached(fn)
    _CODES[fn.__code__] = result
    return result


def _convert_uncached(fn) -> _ConvertedCode:
    parsed = parse.parse_function(fn)
    node = parsed.node
    node.decorator_list = []
    ctx = ConversionContext(source=parsed.source, namer=Namer(names_in(node) | {RUNTIME_NAME}),
                            runtime_name=RUNTIME_NAME)
    ctx.resolve = _resolver(fn)
    ctx.is_library = is_library
    ctx.has_class_cell = "__class__" in fn.__code__.co_freevars
    ctx.has_nested_scopes = any(isinstance(constant, types.CodeType) for constant in fn.__code__.co_consts)
    node = transform(node, ctx)
    emitted = emit.emit(node, ctx, fn.__code__.co_freevars)
    return _ConvertedCode(emitted, node.name, fn.__code__.co_filename)


def converted_source(fn) -> str:
    """The converted source of `fn` (what `to_code` returns)."""
    fn = _plain_function(fn)
    return convert_code(fn).emitted.source


def _plain_function(fn):
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"expected a Python function, lambda or method, got {type(fn).__name__}: {fn!r}")
    return fn


def convert(fn):
    """`fn` converted: a function with the same signature whose control flow is staged.

    Bound methods come back bound to the same object. Functions marked
    `do_not_convert`, and converted functions, come back as they are.
    """
    if isinstance(fn, types.MethodType):
        return types.MethodType(convert(fn.__func__), fn.__self__)
    fn = _plain_function(fn)
    if fn in _DO_NOT_CONVERT or fn in _CONVERTED:
        return fn
    cached = fn.__dict__.get(_CONVERTED_ATTRIBUTE)
    if cached is not None and cached[0] is fn:  # not a copy functools.wraps made for a wrapper
        return cached[1]
    converted_code = convert_code(fn)
    inner = _instantiate(converted_code, fn)
    result = _with_user_frames(inner, fn)
    fn.__dict__[_CONVERTED_ATTRIBUTE] = (fn, result)
    _CONVERTED.add(result)
    _CONVERTED.add(inner)
    return result


def _instantiate(converted_code, fn):
    code = converted_code.emitted.code
    runtime = importlib.import_module(RUNTIME_MODULE)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells[RUNTIME_NAME] = types.CellType(runtime)
    closure = tuple(cells[name] for name in code.co_freevars)
    function = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    function.__kwdefaults__ = fn.__kwdefaults__
    function.__qualname__ = fn.__qualname__
    function.__module__ = fn.__module__
    function.__doc__ = fn.__doc__
    function.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    return function


def _with_user_frames(converted, original):
    """`converted`, re-raising its errors from a frame at the user's line."""

    @functools.wraps(original)
    def converted_function(*args, **kwargs):
        _calls.depth += 1
        try:
            return converted(*args, **kwargs)
        except Exception as error:
            location = _innermost_user_location(error.__traceback__)
            if _calls.depth == 1 and _exceptions().held_back_at_top(error, location):
                return None  # its graph raises the error when it runs (after earlier effects)
            visible = _user_visible(error)
            if location is None and visible is error:
                raise
            raise_at(visible, location)
        finally:
            _calls.depth -= 1
    # The signature is the converted function's (the same); pointing at the original instead
    # would keep it alive from the cache value that it keys.
    converted_function.__wrapped__ = converted
    return converted_function


class _CallDepth(threading.local):
    depth = 0  # how deep in converted functions this thread is (a class default: no getattr per call)


_calls = _CallDepth()


def _exceptions():
    return importlib.import_module(RUNTIME_MODULE + ".exceptions")


def _user_visible(error):
    # The runtime's deferred errors (a raise or unbound read that a graph path
    # holds back until it runs) reach the user as the error they stand for.
    return _exceptions().user_visible(error)


def _innermost_user_location(traceback):
    # None where a frame already shows the error at the user's line (`raise_at`).
    return source_map.innermost_location(traceback, stop=lambda frame: "__autoloop_error__" in frame.f_globals)
