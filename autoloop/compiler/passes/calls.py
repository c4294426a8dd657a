"""Calls: builtins that need tensor versions, and user functions converted recursively.

- ``print``, ``len``, ``range`` (the builtins, when not shadowed) become
  ``al__.print_``, ``al__.len_``, ``al__.range_``.
- A call whose target is known at conversion time to live in numpy, the
  standard library, autoloop or another installed package, or is marked
  ``do_not_convert``, is left as it is.
- Any other call becomes ``al__.converted_call(f, *args, **kwargs)``, which
  converts user functions (once, cached) and calls everything else as is.
- Zero-argument ``super()`` becomes ``super(__class__, self)``, since the
  converted function is not compiled inside its class.

Resolution uses ``ctx.resolve(name)`` (the function's closure, globals and
builtins); names bound inside the converted function are always dynamic.
"""

from __future__ import annotations

import builtins

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import Pass

BUILTIN_REPLACEMENTS = {builtins.print: "print_", builtins.len: "len_", builtins.range: "range_"}
_UNRESOLVED = object()


class Calls(Pass):
    def __init__(self, ctx, analysis=None):
        super().__init__(ctx, analysis)
        self.local_names = set()
        self.defined_functions = set()

    def visit_FunctionDef(self, node):
        if not self.local_names:  # the converted function: collect every name it binds
            for inner in gast.walk(node):
                if isinstance(inner, gast.Name) and not isinstance(inner.ctx, gast.Load):
                    self.local_names.add(inner.id)
                elif isinstance(inner, (gast.FunctionDef, gast.ClassDef)) and inner is not node:
                    self.local_names.add(inner.name)
                    if isinstance(inner, gast.FunctionDef):
                        self.defined_functions.add(inner.name)
                elif isinstance(inner, gast.alias):
                    self.local_names.add((inner.asname or inner.name).split(".")[0])
            self.self_name = node.args.args[0].id if node.args.args else None
        self.generic_visit(node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        function = node.func
        if self._is_runtime(function):
            return node
        target = self._resolve(function)
        if target is builtins.super and not node.args and self.ctx.has_class_cell and self.self_name:
            node.args = [templates.name("__class__"), templates.name(self.self_name)]
            return node
        if target is not _UNRESOLVED:
            replacement = _builtin_replacement(target)
            if replacement is not None:
                node.func = self.runtime(replacement)
                return node
            if self.ctx.is_library(target) and not self._passes_appended_list(node):
                return node
        if isinstance(function, gast.Name) and function.id in self.defined_functions:
            return node  # a nested function, converted along with this one
        call = gast.Call(func=self.runtime("converted_call"), args=[function] + node.args,
                         keywords=node.keywords)
        return gast.copy_location(call, node)

    def _passes_appended_list(self, node):
        """Whether a list built by appending in a loop is an argument (it may be a TensorList)."""
        appended = {name for names in self.ctx.appended_lists.values() for name in names}
        return any(isinstance(a, gast.Name) and a.id in appended for a in node.args)

    def _is_runtime(self, function):
        while isinstance(function, gast.Attribute):
            function = function.value
        return isinstance(function, gast.Name) and function.id == self.ctx.runtime_name

    def _resolve(self, function):
        """The object `function` names at conversion time, or _UNRESOLVED."""
        path = []
        while isinstance(function, gast.Attribute):
            path.append(function.attr)
            function = function.value
        if not isinstance(function, gast.Name) or function.id in self.local_names:
            return _UNRESOLVED
        if self.ctx.resolve is None:
            return _UNRESOLVED
        found, value = self.ctx.resolve(function.id)
        if not found:
            return _UNRESOLVED
        for attribute in reversed(path):
            if not _is_module(value):  # attributes of objects may change; stay dynamic
                return _UNRESOLVED
            try:
                value = getattr(value, attribute)
            except AttributeError:
                return _UNRESOLVED
        return value


def _is_module(value):
    import types
    return isinstance(value, types.ModuleType)


def _builtin_replacement(target):
    try:
        return BUILTIN_REPLACEMENTS.get(target)
    except TypeError:  # unhashable
        return None
