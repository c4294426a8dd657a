"""The state a converted loop or branch passes around: helpers shared by the
loops and conditionals passes.

State variables are composite names (``i``, ``self.x``, ``a[0]``). Plain
names are parameters as they are; a composite one is received under an
identifier (``self_x``) and written back first thing
(``al__.ref(self).x = self_x``), so the function body reads it exactly as
the user wrote it. State code reaches a composite through ``al__.ref``, so
one that does not exist yet (first assigned inside the statement) reads as
undefined instead of raising, and is removed again where no path assigned it.
A name that a closure captures (see `analysis.closures`) is *shared*: it
keeps the one binding of the enclosing function, so it is received as
``i_`` and written back through ``nonlocal i`` (``i = i_``), and a closure
called in the body sees the current value.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.analysis.names import is_composite, parameter_name, prefixes
from autoloop.compiler.context import RUNTIME_NAME


def in_source_order(names, first_seen: dict) -> list[str]:
    """`names` ordered by where they first appear in the function (then alphabetically)."""
    return sorted(set(names), key=lambda name: (first_seen.get(name, 1 << 30), name))


def without_covered(names) -> list[str]:
    """Drop composite names whose object is itself in `names` (``a`` covers ``a[0]``)."""
    chosen = set(names)
    return [n for n in names if not any(p in chosen for p in prefixes(n))]


def expression(name: str, ctx=None):
    """The state expression for composite name `name` (``self.x`` -> ``al__.ref(self).x``)."""
    if not is_composite(name):
        return templates.name(name, ctx)
    node = templates.replace_expression(name)
    node.value = gast.Call(func=templates.replace_expression(f"{RUNTIME_NAME}.ref"), args=[node.value],
                           keywords=[])
    return templates.set_ctx(node, ctx or gast.Load())


class StateNames:
    """Parameter identifiers for a list of state names (`shared` ones are received renamed)."""

    def __init__(self, names, namer=None, shared=frozenset()):
        self.names = list(names)
        self.parameters = []
        for name in self.names:
            if is_composite(name) or name in shared:
                identifier = parameter_name(name) + ("_" if name in shared else "")
                self.parameters.append(namer.new(identifier) if namer else identifier)
            else:
                self.parameters.append(name)

    def prelude(self):
        """``self.x = self_x`` for every composite name, ``i = i_`` for every shared one."""
        statements = []
        for name, parameter in zip(self.names, self.parameters):
            if name != parameter:
                statements.append(gast.Assign(targets=[expression(name, gast.Store())],
                                              value=templates.name(parameter), type_comment=None))
        return statements

    def result(self):
        """What a function returns: nothing, the single value, or a tuple."""
        if not self.names:
            return None
        if len(self.names) == 1:
            return expression(self.names[0])
        return gast.Tuple(elts=[expression(n) for n in self.names], ctx=gast.Load())

    def target(self):
        if len(self.names) == 1:
            return expression(self.names[0], gast.Store())
        return gast.Tuple(elts=[expression(n, gast.Store()) for n in self.names], ctx=gast.Store())

    def values(self):
        """The current values, always as a tuple."""
        return gast.Tuple(elts=[expression(n) for n in self.names], ctx=gast.Load())

    def labels(self):
        return gast.Tuple(elts=[gast.Constant(value=n, kind=None) for n in self.names], ctx=gast.Load())


def return_statement(state: StateNames):
    result = state.result()
    return [] if result is None else [gast.Return(value=result)]


def assign_or_call(state: StateNames, call):
    """``targets = call`` or, with no state, the bare call as a statement."""
    if not state.names:
        return gast.Expr(value=call)
    return gast.Assign(targets=[state.target()], value=call, type_comment=None)


def undefined_inits(names, runtime_name):
    return [templates.replace("name = runtime.Undefined(label)", name=n, runtime=runtime_name,
                              label=gast.Constant(value=n, kind=None))[0] for n in names]


def declarations(statements, declared: dict):
    """``global``/``nonlocal`` statements for declared names written in `statements`.

    `declared` maps names to ``'global'`` or ``'nonlocal'``: the user's
    declarations, and the shared names (see `declared_in`).
    """
    if not declared:
        return []
    written = set()
    for statement in statements:
        for node in gast.walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
                written.add(node.id)
    result = []
    for kind, node_type in (("global", gast.Global), ("nonlocal", gast.Nonlocal)):
        names = sorted(n for n in written if declared.get(n) == kind)
        if names:
            result.append(node_type(names=names))
    return result


def shared_names(ctx, function) -> frozenset:
    """Names that keep one binding in `function`'s generated functions: the `carried_names`, and
    those a loop or branch inside a ``try`` assigns (an exception must not lose them)."""
    return carried_names(ctx, function) | ctx.exception_visible.get(function, frozenset())


def carried_names(ctx, function) -> frozenset:
    """Shared names that every loop or branch changing them carries as state, live or not:
    those `function`'s closures capture (read at any time), and its ``nonlocal`` names (read by
    the enclosing function after it returns)."""
    return ctx.captured.get(function, frozenset()) | _nested_nonlocals(ctx, function)


def _nested_nonlocals(ctx, function) -> set:
    """``nonlocal`` names of a function nested in the converted one (the converted function's
    own refer to cells that outlive the trace: writing them in graph control flow is unsupported)."""
    if function is ctx.root:
        return set()
    return {n for n, kind in ctx.globals_of.get(function, {}).items() if kind == "nonlocal"}


def nonlocal_writes(ctx, analysis, statements) -> frozenset:
    """The ``nonlocal`` names of `analysis`'s function that `statements` assign.

    Read from the tree, which inner statements may already have converted.
    """
    from autoloop.compiler.passes.base import SCOPE_NODES, walk_scope
    nonlocal_names = _nested_nonlocals(ctx, analysis.scopes.function)
    if not nonlocal_names:
        return frozenset()
    return frozenset(node.id for statement in statements if not isinstance(statement, SCOPE_NODES)
                     for node in walk_scope(statement) if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load)
                     and node.id in nonlocal_names)


def declared_in(ctx, function) -> dict:
    """What generated functions inside `function` declare: its global/nonlocal names and
    the names its closures capture (kept in `function`'s own cell through ``nonlocal``)."""
    declared = dict.fromkeys(ctx.captured.get(function, frozenset())
                             | ctx.exception_visible.get(function, frozenset()), "nonlocal")
    declared.update(ctx.globals_of.get(function, {}))
    return declared


def function_def(name, parameters, body):
    arguments = gast.arguments(args=[templates.name(p, gast.Param()) for p in parameters],
                               posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                               kwarg=None, defaults=[])
    return gast.FunctionDef(name=name, args=arguments, body=body or [gast.Pass()], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])


def prelude_copy(statements):
    return [templates.clone(s) for s in statements]
