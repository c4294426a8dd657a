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

import ast
import builtins

import gast

from autoloop.compiler import templates
from autoloop.compiler.context import RUNTIME_NAME
from autoloop.compiler.passes import targets
from autoloop.compiler.passes.base import Pass

BUILTIN_REPLACEMENTS = {builtins.print: "print_", builtins.len: "len_", builtins.range: "range_"}


def as_written(node):
    """An `ast` expression read back from converted code with this pass undone, for messages:
    ``al__.converted_call(f, x)`` is ``f(x)`` and ``al__.len_(x)`` is ``len(x)``."""
    return _AsWritten().visit(node) if node is not None else None


class _AsWritten(ast.NodeTransformer):
    BUILTINS = {replacement: function.__name__ for function, replacement in BUILTIN_REPLACEMENTS.items()}

    def visit_Call(self, node):
        self.generic_visit(node)
        function = node.func
        if not (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)
                and function.value.id == RUNTIME_NAME):
            return node
        if function.attr == "converted_call" and node.args:
            return ast.Call(func=node.args[0], args=node.args[1:], keywords=node.keywords)
        if function.attr in self.BUILTINS:
            return ast.Call(func=ast.Name(id=self.BUILTINS[function.attr], ctx=ast.Load()), args=node.args,
                            keywords=node.keywords)
        return node


class Calls(Pass):
    def __init__(self, ctx, analysis=None):
        super().__init__(ctx, analysis)
        self.local_names = set()
        self.defined_functions = set()

    def visit_FunctionDef(self, node):
        if not self.local_names:  # the converted function: collect every name it binds
            self.local_names = targets.local_names(node, self.defined_functions)
            self.self_name = node.args.args[0].id if node.args.args else None
        self.generic_visit(node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        function = node.func
        if self._is_runtime(function):
            return node
        target = targets.resolve(function, self.ctx, self.local_names)
        if target is builtins.super and not node.args and self.ctx.has_class_cell and self.self_name:
            node.args = [templates.name("__class__"), templates.name(self.self_name)]
            return node
        if target is not targets.UNRESOLVED:
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


def _builtin_replacement(target):
    try:
        return BUILTIN_REPLACEMENTS.get(target)
    except TypeError:  # unhashable
        return None
