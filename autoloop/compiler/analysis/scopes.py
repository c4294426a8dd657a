"""Scopes: which names each statement reads, defines and modifies.

Computes, for every statement of one function (compound statements count
only their own header: an `if`'s test, a `for`'s iterable), an `Effects`
record of composite names (see `names`):
- `reads`: names whose value it uses; a whole-object use (``f(self)``,
  ``self.method()``) also adds ``self.*``, meaning "any part of self";
- `kills`: names it overwrites completely (``x = ...``, ``self.x = ...``);
- `modifies`: names whose value may change, including partial updates
  (``a[i] = ...`` modifies ``a``);
- `deletes`: names a ``del`` unbinds.
Also the names modified anywhere in a block (`modified_in`) and the
function's local and global/nonlocal names. Needs nothing; nested function
bodies are not entered (they are analysed as functions of their own).
"""

from __future__ import annotations

import dataclasses

import gast

from autoloop.compiler.analysis.names import WHOLE, composite_name, prefixes


@dataclasses.dataclass(frozen=True)
class Effects:
    reads: frozenset = frozenset()
    kills: frozenset = frozenset()
    modifies: frozenset = frozenset()
    deletes: frozenset = frozenset()


@dataclasses.dataclass(frozen=True)
class ForTarget:
    """The CFG node that assigns a `for` loop's target before each iteration."""

    loop: gast.For

    def __hash__(self):
        return id(self.loop)

    def __eq__(self, other):
        return isinstance(other, ForTarget) and other.loop is self.loop


class _Collector:
    """Accumulates reads and writes of the expressions and targets it is shown."""

    def __init__(self):
        self.reads, self.kills, self.modifies, self.deletes = set(), set(), set(), set()

    def effects(self) -> Effects:
        return Effects(frozenset(self.reads), frozenset(self.kills), frozenset(self.modifies),
                       frozenset(self.deletes))

    # -- reading ------------------------------------------------------------
    def read(self, node):
        if node is None:
            return
        if isinstance(node, list):
            for item in node:
                self.read(item)
            return
        method = getattr(self, "read_" + type(node).__name__, None)
        if method is not None:
            method(node)
            return
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, (gast.AST, list)):
                self.read(value)

    def _read_whole(self, name):
        self.reads.update(prefixes(name))
        self.reads.update((name, name + WHOLE))

    def read_Name(self, node):
        if isinstance(node.ctx, gast.Load):
            self._read_whole(node.id)
        elif isinstance(node.ctx, gast.Store):
            self.store(node)

    def read_Attribute(self, node):
        name = composite_name(node)
        if name is None or not isinstance(node.ctx, gast.Load):
            if not isinstance(node.ctx, gast.Load):
                self.store(node)
            else:
                self.read(node.value)
            return
        self._read_whole(name)

    def read_Subscript(self, node):
        if not isinstance(node.ctx, gast.Load):
            self.store(node)
            return
        name = composite_name(node)
        if name is None:
            self.read(node.value)
            self.read(node.slice)
        else:
            self._read_whole(name)

    def read_Call(self, node):
        function = node.func
        if isinstance(function, gast.Attribute):
            owner = composite_name(function.value)
            if owner is not None:  # a method may read any part of its object
                self._read_whole(owner)
            else:
                self.read(function.value)
        else:
            self.read(function)
        self.read(node.args)
        self.read(node.keywords)

    def read_NamedExpr(self, node):
        self.read(node.value)
        self.store(node.target)

    def read_Lambda(self, node):
        inner = _Collector()
        inner.read(node.body)
        inner.read(node.args.defaults)
        parameters = _parameter_names(node.args)
        self.reads.update(n for n in inner.reads if _root_of(n) not in parameters)

    def _read_comprehension(self, node):
        inner = _Collector()
        for generator in node.generators:
            inner.read(generator.iter)
            inner.read(generator.ifs)
        for field in ("elt", "key", "value"):
            inner.read(getattr(node, field, None))
        bound = set()
        for generator in node.generators:
            bound.update(n.id for n in gast.walk(generator.target) if isinstance(n, gast.Name))
        self.reads.update(n for n in inner.reads if _root_of(n) not in bound)

    read_ListComp = read_SetComp = read_DictComp = read_GeneratorExp = _read_comprehension

    # -- writing ------------------------------------------------------------
    def store(self, target):
        if isinstance(target, (gast.Tuple, gast.List)):
            for element in target.elts:
                self.store(element)
            return
        if isinstance(target, gast.Starred):
            self.store(target.value)
            return
        name = composite_name(target)
        if name is not None:
            self.kills.add(name)
            self.modifies.add(name)
            self.reads.update(prefixes(name))
            return
        if isinstance(target, gast.Subscript):  # a[i] = ...: a partial update of a
            self.read(target.value)
            self.read(target.slice)
            owner = composite_name(target.value)
            if owner is not None:
                self.modifies.add(owner)
        elif isinstance(target, gast.Attribute):
            self.read(target.value)


def _root_of(name):
    found = prefixes(name)
    name = found[0] if found else name
    return name[:-len(WHOLE)] if name.endswith(WHOLE) else name


def _parameter_names(arguments) -> set[str]:
    parameters = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    names = {p.id for p in parameters}
    for extra in (arguments.vararg, arguments.kwarg):
        if extra is not None:
            names.add(extra.id)
    return names


def statement_effects(node) -> Effects:
    """The effects of `node` itself (for compound statements: their header)."""
    collector = _Collector()
    record = _EFFECTS.get(type(node), _read_every_field)
    record(collector, node)
    return collector.effects()


def _for_target(collector, node):
    collector.store(node.loop.target)


def _assign(collector, node):
    collector.read(node.value)
    for target in node.targets:
        collector.store(target)


def _aug_assign(collector, node):
    collector.read(node.value)
    collector.read(_as_load(node.target))
    collector.store(node.target)


def _ann_assign(collector, node):
    if node.value is not None:
        collector.read(node.value)
        collector.store(node.target)


def _delete(collector, node):
    for target in node.targets:
        name = composite_name(target)
        if name is not None:
            collector.deletes.add(name)
            collector.kills.add(name)
            collector.modifies.add(name)
        collector.read(getattr(target, "value", None))


def _import(collector, node):
    for alias in node.names:
        bound = (alias.asname or alias.name).split(".")[0]
        collector.kills.add(bound)
        collector.modifies.add(bound)


def _definition(collector, node):
    collector.read(node.decorator_list)
    if isinstance(node, gast.ClassDef):
        collector.read(node.bases)
        collector.read(node.keywords)
    else:
        collector.read(node.args.defaults)
        collector.read(node.args.kw_defaults)
    collector.reads.update(_free_reads(node))
    collector.kills.add(node.name)
    collector.modifies.add(node.name)


def _test(collector, node):
    collector.read(node.test)


def _for(collector, node):
    collector.read(node.iter)


def _with(collector, node):
    for item in node.items:
        collector.read(item.context_expr)
        if item.optional_vars is not None:
            collector.store(item.optional_vars)


def _except_handler(collector, node):
    collector.read(node.type)
    if node.name is not None:
        collector.store(node.name)


def _match(collector, node):
    collector.read(node.subject)


def _match_case(collector, node):
    for inner in gast.walk(node.pattern):
        captured = getattr(inner, "name", None) or getattr(inner, "rest", None)
        if isinstance(captured, str):
            collector.kills.add(captured)
            collector.modifies.add(captured)
        if isinstance(inner, gast.MatchValue):
            collector.read(inner.value)
    collector.read(node.guard)


def _no_effects(collector, node):
    """Statements whose own header reads and binds nothing (their blocks are separate)."""


def _read_every_field(collector, node):
    """Expr, Return, Raise, Assert and any other simple statement: reads only."""
    for field in node._fields:
        collector.read(getattr(node, field, None))


_EFFECTS = {
    ForTarget: _for_target, gast.Assign: _assign, gast.AugAssign: _aug_assign,
    gast.AnnAssign: _ann_assign, gast.Delete: _delete, gast.Import: _import, gast.ImportFrom: _import,
    gast.FunctionDef: _definition, gast.AsyncFunctionDef: _definition, gast.ClassDef: _definition,
    gast.If: _test, gast.While: _test, gast.For: _for, gast.AsyncFor: _for,
    gast.With: _with, gast.AsyncWith: _with, gast.ExceptHandler: _except_handler,
    gast.Match: _match, gast.match_case: _match_case,
    gast.Try: _no_effects, gast.Global: _no_effects, gast.Nonlocal: _no_effects,
    gast.Pass: _no_effects, gast.Break: _no_effects, gast.Continue: _no_effects,
}
if hasattr(gast, "TryStar"):  # Python 3.11+
    _EFFECTS[gast.TryStar] = _no_effects


def _as_load(target):
    from autoloop.compiler.templates import clone, set_ctx
    return set_ctx(clone(target), gast.Load())


def _free_reads(function) -> set[str]:
    """Names a nested function or class reads from the enclosing scope (approximately)."""
    collector = _Collector()
    for statement in function.body:
        for node in gast.walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                collector.reads.update((node.id, node.id + WHOLE))
    bound = _parameter_names(function.args) if hasattr(function, "args") else set()
    return {n for n in collector.reads if _root_of(n) not in bound}


COMPOUND_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def child_blocks(node):
    """The statement lists directly inside a compound statement."""
    blocks = []
    for field in COMPOUND_BLOCKS:
        value = getattr(node, field, None)
        if value and isinstance(value, list):
            if isinstance(value[0], (gast.ExceptHandler, gast.match_case)):
                blocks.extend(item.body for item in value)
            else:
                blocks.append(value)
    return blocks


class Scopes:
    """Effects of every statement of one function, and block-level unions."""

    def __init__(self, function: gast.FunctionDef, extra_tests=None):
        self.function = function
        self.extra_tests = extra_tests or {}
        self.effects: dict = {}
        self.declared: set[str] = set()  # global and nonlocal names
        self.locals: set[str] = set(_parameter_names(function.args))
        self.parameters = frozenset(self.locals)
        self._visit_block(function.body)
        self.locals -= self.declared

    def _visit_block(self, statements):
        for statement in statements:
            self._visit(statement)

    def _visit(self, node):
        effects = statement_effects(node)
        if node in self.extra_tests:  # a for loop's `not break_`, evaluated before each iteration
            collector = _Collector()
            collector.read(self.extra_tests[node])
            effects = dataclasses.replace(effects, reads=effects.reads | collector.reads)
        self.effects[node] = effects
        self.locals.update(n for n in effects.kills if n.isidentifier())
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            self.declared.update(node.names)
        if isinstance(node, (gast.For, gast.AsyncFor)):
            target = ForTarget(node)
            self.effects[target] = statement_effects(target)
            self.locals.update(n for n in self.effects[target].kills if n.isidentifier())
        for field in ("handlers", "cases"):
            for item in getattr(node, field, None) or []:
                item_effects = statement_effects(item)
                self.effects[item] = item_effects
                self.locals.update(n for n in item_effects.kills if n.isidentifier())
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            return  # a scope of its own
        for block in child_blocks(node):
            self._visit_block(block)

    def modified_in(self, statements) -> frozenset:
        """Names modified anywhere in `statements` (nested blocks included)."""
        result: set = set()
        for statement in statements:
            self._collect_modified(statement, result)
        return frozenset(result - self.declared)

    def _collect_modified(self, node, result):
        result.update(self.effects[node].modifies)
        if isinstance(node, (gast.For, gast.AsyncFor)):
            result.update(self.effects[ForTarget(node)].modifies)
        for field in ("handlers", "cases"):
            for item in getattr(node, field, None) or []:
                result.update(self.effects[item].modifies)
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            return
        for block in child_blocks(node):
            for statement in block:
                self._collect_modified(statement, result)
