"""Assignment expressions in ``if``/``while`` tests and ``for`` iterables are hoisted.

    while (chunk := read()) > 0:      chunk = read()
        total += chunk                while chunk > 0:
                                          total += chunk
                                          chunk = read()

The test then reads plain names, so a staged test function does not lose
the assignment, and the name is an ordinary loop variable. Only ``:=`` that
is always evaluated is hoisted (not under ``and``/``or``, a conditional
expression, a lambda or a comprehension). Runs after the continues pass
(a ``continue`` must not skip the re-evaluation) and before the breaks pass
(a ``break`` must).
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import StatementPass

_LAZY = (gast.BoolOp, gast.IfExp, gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
         gast.GeneratorExp)


class _Hoister(gast.NodeTransformer):
    def __init__(self):
        self.assignments = []

    def visit_NamedExpr(self, node):
        node.value = self.visit(node.value)
        target = templates.set_ctx(templates.clone(node.target), gast.Store())
        self.assignments.append(gast.Assign(targets=[target], value=node.value, type_comment=None))
        return templates.set_ctx(templates.clone(node.target), gast.Load())

    def generic_visit(self, node):
        if isinstance(node, _LAZY):
            return node
        return super().generic_visit(node)


def _hoist(expression):
    hoister = _Hoister()
    expression = hoister.visit(expression)
    return expression, hoister.assignments


class Walrus(StatementPass):
    def visit_If(self, node):
        self.generic_visit(node)
        node.test, assignments = _hoist(node.test)
        return templates.located(assignments, node.lineno) + [node]

    def visit_While(self, node):
        self.generic_visit(node)
        node.test, assignments = _hoist(node.test)
        if not assignments:
            return node
        again = [templates.clone(a) for a in assignments]
        node.body = node.body + templates.located(again, node.lineno)
        return templates.located(assignments, node.lineno) + [node]

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter, assignments = _hoist(node.iter)
        return templates.located(assignments, node.lineno) + [node]
