"""Reads of locals that may be unbound become ``al__.read(x)``.

Where definedness says a local is bound on some paths but not all (first
assigned inside a loop or one branch of an ``if``), the read is checked:
in Python an unbound value raises UnboundLocalError naming the variable and
line, as Python itself would; after graph control flow the check becomes a
graph op that raises when the graph runs. Every other read is left alone.
Needs the analyses.

A checked read inside what becomes a function of its own (a loop or branch
body, a ``while`` test, the lazy operand of ``and``/``or``/``if_exp``) would
find an empty closure cell and raise NameError before the check runs, so
such a read is recorded in ``ctx.entry_undefined``; `bind_at_entry` (run
last) starts the name as ``x = al__.Undefined('x')`` at the top of the
function if a path can reach the read with the name unbound. The loops and
conditionals passes record there the state they pass around that may be
unbound, and in ``ctx.undefined_inits`` the ``al__.Undefined`` they bind
before a statement.
"""

from __future__ import annotations

import dataclasses

import gast

from autoloop.compiler import templates
from autoloop.compiler.analysis import definedness
from autoloop.compiler.passes import state
from autoloop.compiler.passes.base import SCOPE_NODES, Pass, walk_scope

_HEADER_FIELDS = {
    gast.If: ("test",), gast.While: ("test",), gast.For: ("iter",), gast.With: ("items",),
    gast.Match: ("subject",), gast.Try: (), gast.FunctionDef: ("decorator_list", "args"),
    gast.ClassDef: ("decorator_list", "bases", "keywords"),
}


class _Wrapper(gast.NodeTransformer):
    def __init__(self, pass_, unbound, nested):
        self.pass_ = pass_
        self.unbound = unbound
        self.nested = nested  # in code that becomes a function of its own
        self.in_thunk = 0
        self.nested_reads = set()
        self.top_reads = set()

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.unbound:
            (self.nested_reads if self.nested or self.in_thunk else self.top_reads).add(node.id)
            call = gast.Call(func=self.pass_.runtime("read"), args=[node], keywords=[])
            return gast.copy_location(call, node)
        return node

    def visit_Call(self, node):
        function = node.func
        if (isinstance(function, gast.Attribute) and function.attr == "bind_" and len(node.args) == 2
                and isinstance(node.args[1], gast.Lambda)):  # a chained comparison: called at once
            node.args[0] = self.visit(node.args[0])
            self.in_thunk += 1
            node.args[1].body = self.visit(node.args[1].body)
            self.in_thunk -= 1
            return node
        return self.generic_visit(node)

    def generic_visit(self, node):
        # Zero-argument lambdas are the thunks of and_/or_/if_exp: evaluated at once.
        if isinstance(node, SCOPE_NODES):
            if not _is_thunk(node):
                return node
            self.in_thunk += 1
            result = super().generic_visit(node)
            self.in_thunk -= 1
            return result
        return super().generic_visit(node)


def _is_thunk(node):
    arguments = getattr(node, "args", None)
    return isinstance(node, gast.Lambda) and not (arguments.args or arguments.vararg
                                                  or arguments.kwonlyargs or arguments.kwarg)


class UndefinedReads(Pass):
    def __init__(self, ctx, analysis=None):
        super().__init__(ctx, analysis)
        # In a finally block: names the try body, handlers or else may not have assigned
        # because an error left them early (the statement CFG does not see those exits).
        self.finally_unbound = frozenset()

    def visit_FunctionDef(self, node):
        saved, self.finally_unbound = self.finally_unbound, frozenset()
        self._block(node.body, nested=False)
        self.finally_unbound = saved
        return node

    def _block(self, statements, nested):
        for statement in statements:
            self._statement(statement, nested)

    def _statement(self, statement, nested):
        function = self.analysis.of(statement)
        if isinstance(statement, gast.ClassDef):
            return  # not converted
        if isinstance(statement, gast.FunctionDef):
            self.visit_FunctionDef(statement)
            return
        defined = (function.defined_before(statement) if isinstance(statement, gast.For)
                   else function.defined_in.get(statement, frozenset()))
        # Also the user's locals whose every assignment the flag passes dropped as unreachable
        # (after an always-taken break): Python still reads them as unbound locals.
        locals_ = function.scopes.locals | (self.ctx.user_locals.get(function.scopes.function, set())
                                            - function.scopes.declared)
        unbound = {name for name in locals_ if name not in defined and name not in self.ctx.exempt_reads}
        unbound |= self.finally_unbound
        if unbound:
            fields = _HEADER_FIELDS.get(type(statement))
            if fields is None:
                fields = [f for f in statement._fields if f not in ("targets", "target")]
            if isinstance(statement, gast.AugAssign) and _name_of(statement.target) in unbound:
                statement = self._expand_augmented(statement)
            wrapper = _Wrapper(self, unbound, nested or isinstance(statement, gast.While))
            for field in fields:
                value = getattr(statement, field, None)
                if isinstance(value, list):
                    setattr(statement, field, [wrapper.visit(v) if isinstance(v, gast.AST) else v
                                               for v in value])
                elif isinstance(value, gast.AST):
                    setattr(statement, field, wrapper.visit(value))
            for target_field in ("targets", "target"):
                targets = getattr(statement, target_field, None)
                for target in (targets if isinstance(targets, list) else [targets] if targets else []):
                    if isinstance(target, (gast.Attribute, gast.Subscript)):
                        target.value = wrapper.visit(target.value)
                    if isinstance(target, gast.Subscript):
                        target.slice = wrapper.visit(target.slice)
            if wrapper.nested_reads:
                bind_later(self.ctx, function.scopes.function, statement, wrapper.nested_reads - self.finally_unbound)
                bind_later(self.ctx, function.scopes.function, None, wrapper.nested_reads & self.finally_unbound)
            if wrapper.top_reads:
                self.ctx.top_level_reads.setdefault(function.scopes.function, set()).update(wrapper.top_reads)
        becomes_function = isinstance(statement, (gast.If, gast.While, gast.For))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            if block and isinstance(block[0], gast.stmt):
                if field == "finalbody":
                    self._finally_block(statement, function, nested)
                else:
                    self._block(block, nested or becomes_function)
        for item in getattr(statement, "handlers", None) or getattr(statement, "cases", None) or []:
            self._block(item.body, nested)

    def _finally_block(self, statement, function, nested):
        """A finally block: names its try assigns may be unbound there (an error left it early)."""
        tried = statement.body + statement.orelse + [s for handler in statement.handlers for s in handler.body]
        maybe_skipped = {name for name in function.scopes.modified_in(tried) if name.isidentifier()}
        maybe_skipped -= function.defined_before(statement)
        maybe_skipped -= function.scopes.modified_in(statement.finalbody)  # assigned there: Python order
        maybe_skipped -= self.ctx.exempt_reads
        saved, self.finally_unbound = self.finally_unbound, self.finally_unbound | maybe_skipped
        self._block(statement.finalbody, nested)
        self.finally_unbound = saved

    def _expand_augmented(self, statement):
        """``x += e`` with a maybe-unbound ``x`` -> ``x = x + e`` (``x`` then checked)."""
        load = templates.set_ctx(templates.clone(statement.target), gast.Load())
        statement.__class__ = gast.Assign
        value = gast.BinOp(left=load, op=statement.op, right=statement.value)
        gast.copy_location(value, statement)
        statement.targets = [statement.target]
        statement.value = value
        statement.type_comment = None
        del statement.target, statement.op
        return statement


def bind_later(ctx, function, statement, names):
    """Record that generated code for `statement` reads `names` (locals of the FunctionDef
    `function`), maybe unbound (with `statement` None: unbound on a path the CFG misses)."""
    if names:
        ctx.entry_undefined.setdefault(function, []).append((statement, set(names)))


def initialized_before(ctx, function, statement, names):
    """Record that converted code binds `names` to al__.Undefined right before `statement`."""
    if names:
        ctx.undefined_inits.setdefault(function.scopes.function, {})[statement] = set(names)


def bind_at_entry(tree, ctx, analysis):
    """``x = al__.Undefined('x')`` at the top of each function, for the recorded names that some
    path reaches their statement with unbound (no assignment and no al__.Undefined before it)."""
    shared = {function for function, names in ctx.exception_visible.items() if names}
    for function in set(ctx.entry_undefined) | set(ctx.top_level_reads) | shared:
        facts = analysis.function(function)
        initialized = ctx.undefined_inits.get(function, {})
        # Each recorded name was unbound on some path to its statement; only an al__.Undefined
        # bound before it on every such path spares it: one bound before a statement around it
        # (the usual case), else definedness rerun counting those inits.
        reads = ctx.entry_undefined.get(function, ())
        always = {name for statement, read in reads if statement is None for name in read}
        uncovered = [(statement, {name for name in read if not _initialized_around(
            facts.cfg, initialized, statement, name)}) for statement, read in reads if statement is not None]
        initialized_names = set().union(*initialized.values()) if initialized else set()
        if any(name in initialized_names for _, read in uncovered for name in read):
            bound_before = _bound_before(facts, initialized)
        else:
            bound_before = facts.defined_before
        names = {name for statement, read in uncovered for name in read if name not in bound_before(statement)}
        names |= always
        # A checked read in the function itself needs the name to be one of its locals; a
        # name now assigned only inside generated functions would be looked up as a global.
        top_reads = ctx.top_level_reads.get(function, set()) - names
        # A shared name that only generated functions assign (through nonlocal) needs a binding.
        unbound_shared = ctx.exception_visible.get(function, frozenset()) - names
        if top_reads or unbound_shared:
            own = _assigned_in_own_scope(function)
            names |= (top_reads - own) | (unbound_shared - own)
        if not names:
            continue
        ordered = state.in_source_order(names, facts.first_seen)
        inits = templates.located(state.undefined_inits(ordered, ctx.runtime_name), function.lineno)
        docstring = (function.body and isinstance(function.body[0], gast.Expr)
                     and isinstance(function.body[0].value, gast.Constant)
                     and isinstance(function.body[0].value.value, str))
        function.body[int(bool(docstring)):int(bool(docstring))] = inits
    return tree


def _initialized_around(cfg, initialized, statement, name) -> bool:
    """Whether `name` is bound to al__.Undefined right before a statement that contains `statement`."""
    return any(name in names and statement in cfg.inside.get(around, ())
               for around, names in initialized.items())


def _assigned_in_own_scope(function) -> set:
    return {node.id for statement in function.body if not isinstance(statement, SCOPE_NODES)
            for node in walk_scope(statement)
            if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del))}


def _bound_before(facts, initialized):
    """``statement -> names bound on every path to it``, counting the al__.Undefined inits."""
    effects = dict(facts.scopes.effects)
    for statement, names in initialized.items():
        effects[statement] = dataclasses.replace(effects[statement], kills=effects[statement].kills | names)
    defined_in, _, defined_out, _ = definedness.compute(facts.cfg, effects, facts.scopes.locals,
                                                        facts.scopes.parameters)

    def bound_before(statement):
        entries = facts.cfg.entries(statement)
        if not entries:
            return defined_in.get(statement, frozenset())
        return frozenset.intersection(*(defined_out[p] for p in entries))
    return bound_before


def _name_of(target):
    return target.id if isinstance(target, gast.Name) else None
