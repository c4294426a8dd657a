"""Closures: which locals of a function its nested functions refer to (and other names that
must keep one binding).

Computes, for one function, the names it binds that a nested function,
lambda or generator expression (at any depth) reads or assigns through
``nonlocal``: its *captured* names. Such a name must keep one binding (the
function's cell) even inside the loop and branch functions the compiler
makes, so that a closure called there, or later, sees its current value.
Needs nothing; must run on the user's tree, before passes add lambdas of
their own (the thunks of ``and``/``or``/``if_exp``).

    def f(n):
        i = 0
        get = lambda: i       # captured_names(f) == {'i'}
        while i < n:
            i += 1
"""

from __future__ import annotations

import gast

_NESTED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.GeneratorExp)
TRY_TYPES = (gast.Try, gast.TryStar) if hasattr(gast, "TryStar") else (gast.Try,)


def captured_names(function) -> frozenset:
    """The locals of `function` that nested functions refer to."""
    bound, free = set(_parameters(function.args)), set()
    declared = set()
    for node in _own_scope(function):
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            bound.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, gast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        if isinstance(node, _NESTED) and node is not function:
            free |= _free_names(node)
    return frozenset((bound - declared) & free)


def exception_visible_names(function) -> frozenset:
    """Locals that a loop or ``if`` inside a ``try`` (body, handlers or ``else``) assigns.

    Such a statement becomes a function of its own, and an exception
    leaving it would lose what it assigned so far; keeping these names in
    the function's own binding lets the handler, the ``finally`` block and
    the code after them see the values as Python does.

        try:
            for x in xs:
                last = x          # 'last' is exception-visible
                check(x)          # may raise
        except ValueError:
            return last
    """
    names = set()
    for node in _own_scope(function):
        if not isinstance(node, TRY_TYPES):
            continue
        blocks = [node.body, node.orelse] + [handler.body for handler in node.handlers]
        for statement in (s for block in blocks for s in block):
            for inner in [statement] + list(_own_scope_of(statement)):
                if isinstance(inner, (gast.If, gast.While, gast.For)):
                    names |= {n.id for n in _own_scope_of(inner)
                              if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return frozenset(names)


def _own_scope_of(statement):
    """Nodes below `statement` in the same function scope."""
    stack = list(gast.iter_child_nodes(statement))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _NESTED + (gast.ClassDef,)):
            stack.extend(gast.iter_child_nodes(node))


def _own_scope(function):
    """Nodes of `function`'s own scope, nested scopes' headers included but not their bodies."""
    stack = list(function.body) if not isinstance(function, gast.Lambda) else [function.body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _NESTED + (gast.ClassDef,)):
            stack.extend(_header(node))
            continue
        stack.extend(gast.iter_child_nodes(node))


def _header(node):
    """The parts of a nested scope evaluated in the enclosing scope (defaults, decorators)."""
    if isinstance(node, gast.GeneratorExp):
        return [node.generators[0].iter]
    if isinstance(node, gast.ClassDef):
        return node.decorator_list + node.bases
    return node.args.defaults + [d for d in node.args.kw_defaults if d is not None] + getattr(
        node, "decorator_list", [])


def _free_names(scope) -> set:
    """Names `scope` (a nested function) uses but does not bind itself, its own nested scopes included."""
    if isinstance(scope, gast.GeneratorExp):
        bound = {n.id for g in scope.generators for n in gast.walk(g.target) if isinstance(n, gast.Name)}
        body = [scope.elt] + [part for g in scope.generators[1:] for part in [g.iter]] + [
            condition for g in scope.generators for condition in g.ifs]
        used = set()
        for part in body:
            used |= _names_used(part)
        return used - bound
    bound, used, nonlocal_names = set(_parameters(scope.args)), set(), set()
    for node in _own_scope(scope):
        if isinstance(node, gast.Nonlocal):
            nonlocal_names.update(node.names)
        elif isinstance(node, gast.Global):
            bound.update(node.names)
        elif isinstance(node, gast.Name):
            (used if isinstance(node.ctx, gast.Load) else bound).add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            bound.add(node.name)
        if isinstance(node, _NESTED) and node is not scope:
            used |= _free_names(node)
    return (used - bound) | nonlocal_names


def _names_used(expression) -> set:
    used = set()
    for node in gast.walk(expression):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            used.add(node.id)
    return used


def _parameters(arguments) -> list:
    names = [p.id for p in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    return names + [extra.id for extra in (arguments.vararg, arguments.kwarg) if extra is not None]
