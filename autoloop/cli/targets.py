"""``FILE::FUNC``: loading the function a command names, with errors that say what exists.

``FUNC`` is a function of the file (``sum_square``), an ``@autoloop.function``
(used with its own options), or a static method (``Model.helper``). A plain
method needs an instance, a class is not a function, and an unknown name is
answered with the names that exist: each is a `BadInput`.
"""

from __future__ import annotations

import importlib.util
import inspect
import linecache
import os
import sys


class BadInput(Exception):
    """The command line names something that cannot be used; `location` is the user's
    ``(file, line)`` it is about, when there is one (the reports end with it)."""

    def __init__(self, message: str, location=None):
        super().__init__(message)
        self.autoloop_location = location


def definition(value):
    """``(file, line)`` where the function or class `value` is defined, or None."""
    value = getattr(value, "python_function", value)
    value = getattr(value, "__func__", value)
    try:
        return inspect.getsourcefile(value), inspect.getsourcelines(value)[1]
    except (OSError, TypeError):
        return None


def load(target: str):
    """The function or ``autoloop.Function`` that `target` (``FILE::FUNC``) names."""
    if "::" not in target:
        raise BadInput(f"expected FILE::FUNC, got {target!r}")
    path, name = target.rsplit("::", 1)
    if not os.path.isfile(path):
        raise BadInput(f"no such file: {path}")
    module = _import(path)
    owner, value = None, module
    for part in name.split("."):
        if not hasattr(value, part):
            raise BadInput(_missing(path, module, value, part))
        owner, value = value, getattr(value, part)
    if inspect.isclass(value):
        raise BadInput(f"{name} is a class, not a function; name a function, or a static method as "
                       f"{name}.METHOD", definition(value))
    if inspect.isclass(owner) and _is_plain_method(owner, name.split(".")[-1]):
        raise BadInput(f"{name} is a method: it needs an instance of {owner.__name__} (self). Name a "
                       f"function that creates one and calls the method, or make the method a "
                       f"@staticmethod", definition(value))
    if not callable(value):
        raise BadInput(f"{name!r} in {path} is not a function")
    return value


def _import(path: str):
    module_name = "__autoloop_cli__" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, os.path.abspath(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    linecache.checkcache(os.path.abspath(path))
    spec.loader.exec_module(module)
    return module


def _is_plain_method(owner, attribute: str) -> bool:
    """Whether `attribute` of class `owner` is called on an instance (not static, not a classmethod)."""
    for klass in inspect.getmro(owner):
        if attribute in vars(klass):
            return not isinstance(vars(klass)[attribute], staticmethod | classmethod)
    return False


def _missing(path: str, module, value, part: str) -> str:
    """What to say when `value` (the module or a class in it) has no attribute `part`."""
    if inspect.isclass(value):
        methods = sorted(n for n, v in vars(value).items() if not n.startswith("_") and
                         (callable(v) or isinstance(v, staticmethod | classmethod)))
        listing = f"its methods are: {', '.join(methods)}" if methods else "it defines no methods"
        return f"class {value.__name__} in {path} has no method {part!r}; {listing}"
    if value is not module:
        return f"{part!r} is not an attribute of {getattr(value, '__name__', value)!r} in {path}"
    functions = sorted(n for n, v in vars(module).items()
                       if not n.startswith("_") and _defined_in(v, module) and
                       (inspect.isfunction(v) or hasattr(v, "python_function")))
    listing = f"its functions are: {', '.join(functions)}" if functions else "it defines no functions"
    return f"{os.path.basename(path)} has no function {part!r}; {listing}"


def _defined_in(value, module) -> bool:
    function = getattr(value, "python_function", value)
    return getattr(function, "__module__", None) == module.__name__


def parameters(function):
    """The names of the parameters a caller must give `function` (no defaults, no self)."""
    python_function = getattr(function, "python_function", function)
    try:
        signature = inspect.signature(python_function)
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in signature.parameters.values()
            if p.kind in kinds and p.default is inspect.Parameter.empty]
