"""What a call in the user's function calls, when it is known at conversion time.

`local_names(function)` is every name the function (nested scopes included)
binds: a call through one of them is dynamic. `resolve(node, ctx, locals)`
follows a name and module attributes (``np.random.seed``) through the
function's globals, closure-free builtins and modules to the object, or
gives `UNRESOLVED`. Attributes of objects other than modules may change, so
they stay dynamic.

    resolve(parse_expr("al.set_loop_options"), ctx, set())   # autoloop's function
"""

from __future__ import annotations

import types

import gast

UNRESOLVED = object()


def local_names(function, nested_functions=None) -> set:
    """Names bound anywhere inside `function` (assignments, parameters, defs, imports).

    The names of the functions defined inside it are also added to `nested_functions`.
    """
    names = set()
    for inner in gast.walk(function):
        if isinstance(inner, gast.Name) and not isinstance(inner.ctx, gast.Load):
            names.add(inner.id)
        elif isinstance(inner, (gast.FunctionDef, gast.ClassDef)) and inner is not function:
            names.add(inner.name)
            if nested_functions is not None and isinstance(inner, gast.FunctionDef):
                nested_functions.add(inner.name)
        elif isinstance(inner, gast.alias):
            names.add((inner.asname or inner.name).split(".")[0])
    return names


def resolve(node, ctx, local):
    """The object expression `node` names at conversion time, or UNRESOLVED."""
    path = []
    while isinstance(node, gast.Attribute):
        path.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name) or node.id in local or ctx.resolve is None:
        return UNRESOLVED
    found, value = ctx.resolve(node.id)
    if not found:
        return UNRESOLVED
    for attribute in reversed(path):
        if not isinstance(value, types.ModuleType):  # attributes of objects may change
            return UNRESOLVED
        try:
            value = getattr(value, attribute)
        except AttributeError:
            return UNRESOLVED
    return value
