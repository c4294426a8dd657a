"""Reads of locals that may be unbound become ``al__.read(x)``.

Where definedness says a local is bound on some paths but not all (first
assigned inside a loop or one branch of an ``if``), the read is checked:
in Python an unbound value raises UnboundLocalError naming the variable and
line, as Python itself would; after graph control flow the check becomes a
graph op that raises when the graph runs. Every other read is left alone.
Needs the analyses.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import SCOPE_NODES, Pass

_HEADER_FIELDS = {
    gast.If: ("test",), gast.While: ("test",), gast.For: ("iter",), gast.With: ("items",),
    gast.Match: ("subject",), gast.Try: (), gast.FunctionDef: ("decorator_list", "args"),
    gast.ClassDef: ("decorator_list", "bases", "keywords"),
}


class _Wrapper(gast.NodeTransformer):
    def __init__(self, pass_, unbound):
        self.pass_ = pass_
        self.unbound = unbound

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.unbound:
            call = gast.Call(func=self.pass_.runtime("read"), args=[node], keywords=[])
            return gast.copy_location(call, node)
        return node

    def generic_visit(self, node):
        # Zero-argument lambdas are the thunks of and_/or_/if_exp: evaluated at once.
        if isinstance(node, SCOPE_NODES) and not _is_thunk(node):
            return node
        return super().generic_visit(node)


def _is_thunk(node):
    arguments = getattr(node, "args", None)
    return isinstance(node, gast.Lambda) and not (arguments.args or arguments.vararg
                                                  or arguments.kwonlyargs or arguments.kwarg)


class UndefinedReads(Pass):
    def visit_FunctionDef(self, node):
        self._block(node.body)
        return node

    def _block(self, statements):
        for statement in statements:
            self._statement(statement)

    def _statement(self, statement):
        function = self.analysis.of(statement)
        if isinstance(statement, gast.ClassDef):
            return  # not converted
        if isinstance(statement, gast.FunctionDef):
            self.visit_FunctionDef(statement)
            return
        defined = (function.defined_before(statement) if isinstance(statement, gast.For)
                   else function.defined_in.get(statement, frozenset()))
        unbound = {name for name in function.scopes.locals
                   if name not in defined and name not in self.ctx.exempt_reads}
        if unbound:
            fields = _HEADER_FIELDS.get(type(statement))
            if fields is None:
                fields = [f for f in statement._fields if f not in ("targets", "target")]
            if isinstance(statement, gast.AugAssign) and _name_of(statement.target) in unbound:
                statement = self._expand_augmented(statement)
            wrapper = _Wrapper(self, unbound)
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
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            if block and isinstance(block[0], gast.stmt):
                self._block(block)
        for item in getattr(statement, "handlers", None) or getattr(statement, "cases", None) or []:
            self._block(item.body)

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


def _name_of(target):
    return target.id if isinstance(target, gast.Name) else None
