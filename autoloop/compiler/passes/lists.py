"""``l.append(x)`` inside a loop or ``if`` becomes ``l = al__.list_append(l, x)``.

The assignment makes ``l`` a modified name, so the loop or branch carries
it as state; staged as graph control flow, the runtime turns it into a
tensor list (and it stays one afterwards). Appends outside any loop or
``if`` run once, as in Python, and are left alone. Runs before the analyses
so they see the assignment. Records the names in
``ctx.appended_lists[statement]`` for every enclosing loop and ``if``.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.analysis.names import composite_name
from autoloop.compiler.passes.base import StatementPass


class ListAppends(StatementPass):
    def __init__(self, ctx, analysis=None):
        super().__init__(ctx, analysis)
        self.loops = []  # the enclosing loops and ifs, innermost last

    def _visit_loop(self, node):
        if isinstance(node, gast.For):
            node.iter = self.visit(node.iter)
        self.loops.append(node)
        node.body = self._visit_block(node.body)
        self.loops.pop()
        node.orelse = self._visit_block(node.orelse)
        return node

    def visit_If(self, node):
        self.loops.append(node)
        node.body = self._visit_block(node.body)
        node.orelse = self._visit_block(node.orelse)
        self.loops.pop()
        return node

    def _visit_block(self, statements):
        result = []
        for statement in statements:
            new = self.visit(statement)
            result.extend(new if isinstance(new, list) else [new])
        return result

    visit_While = visit_For = _visit_loop

    def visit_FunctionDef(self, node):
        saved, self.loops = self.loops, []
        self.generic_visit(node)
        self.loops = saved
        return node

    visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Expr(self, node):
        call = node.value
        if not self.loops or not isinstance(call, gast.Call):
            return node
        function = call.func
        if not (isinstance(function, gast.Attribute) and function.attr == "append"
                and len(call.args) == 1 and not call.keywords):
            return node
        name = composite_name(function.value)
        if name is None or isinstance(call.args[0], gast.Starred):
            return node
        for loop in self.loops:
            self.ctx.appended_lists.setdefault(loop, []).append(name)
        target = templates.set_ctx(templates.clone(function.value), gast.Store())
        statement = templates.replace("target = runtime.list_append(target_value, element)",
                                      target=target, runtime=self.ctx.runtime_name,
                                      target_value=function.value, element=call.args[0])
        return templates.located(statement, node.lineno)
