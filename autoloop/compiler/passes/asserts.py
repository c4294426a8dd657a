"""``assert test, message`` becomes ``al__.assert_(test, lambda: message)``.

In Python the message is built only when the assertion fails, as Python
does; with a tensor test it becomes a graph assertion that raises
AssertionError with the message when the graph runs. A constant message is
passed as it is.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import StatementPass
from autoloop.compiler.passes.conditional_expressions import safe_in_lambda


class Asserts(StatementPass):
    def visit_Assert(self, node):
        self.generic_visit(node)
        args = [node.test]
        if node.msg is not None:
            if isinstance(node.msg, gast.Constant) or not safe_in_lambda(node.msg):
                args.append(node.msg)
            else:
                args.append(templates.replace_expression("lambda: message", message=node.msg))
        call = gast.Call(func=self.runtime("assert_"), args=args, keywords=[])
        return gast.copy_location(gast.Expr(value=call), node)
