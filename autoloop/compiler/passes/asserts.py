"""``assert`` and ``raise`` become runtime calls that know about graph branches.

    assert test, message      ->  al__.assert_(test, lambda: message)
    raise ValueError('big')   ->  raise al__.raised(ValueError('big'))

In Python the message is built only when the assertion fails, as Python
does; with a tensor test it becomes a graph assertion that raises
AssertionError with the message when the graph runs. A constant message is
passed as it is. Inside a graph branch or loop body (which may not run), a
failed Python-valued assertion and a ``raise`` are held back by the runtime
until the graph runs that path. A bare ``raise`` (re-raising in a handler)
is left alone.
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

    def visit_Raise(self, node):
        if node.exc is not None:
            call = gast.Call(func=self.runtime("raised"), args=[node.exc], keywords=[])
            node.exc = gast.copy_location(call, node.exc)
        return node
