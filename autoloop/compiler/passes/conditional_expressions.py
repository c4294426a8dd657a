"""``a if c else b`` becomes ``al__.if_exp(c, lambda: a, lambda: b)``.

Both arms stay lazy: in Python only the chosen one runs; with a tensor
condition each becomes a branch of a graph ``cond``. Arms holding ``:=``,
``yield`` or ``await`` are left alone (a lambda would change their meaning).
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import Pass

UNSAFE_IN_LAMBDA = (gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await)


def safe_in_lambda(*nodes) -> bool:
    return not any(isinstance(inner, UNSAFE_IN_LAMBDA) for node in nodes for inner in gast.walk(node))


class ConditionalExpressions(Pass):
    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not safe_in_lambda(node.body, node.orelse):
            return node
        call = templates.replace_expression(
            "runtime.if_exp(test, lambda: body, lambda: orelse)", runtime=self.ctx.runtime_name,
            test=node.test, body=node.body, orelse=node.orelse)
        return gast.copy_location(call, node)
