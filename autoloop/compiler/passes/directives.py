"""``set_loop_options(...)`` as the first statement of a loop body is a directive for that loop.

The call is recognised by what it names, found at conversion time:
``autoloop.set_loop_options``, ``al.set_loop_options``,
``tf.autograph.experimental.set_loop_options`` or an alias imported at
module level all resolve to the same function (a name that cannot be
resolved counts when it is spelled ``set_loop_options``). Runs first, on
the user's tree, and records the statement in ``ctx.loop_options[loop]``;
the loops pass moves its arguments onto the loop. A call anywhere else is
left in the code, and raises when it runs.
"""

from __future__ import annotations

import gast

from autoloop.compiler import api
from autoloop.compiler.passes import targets
from autoloop.compiler.passes.base import StatementPass

OPTION_NAMES = ("shape_invariants", "maximum_iterations", "parallel_iterations", "swap_memory", "checkpoint",
                "capacity")


class LoopDirectives(StatementPass):
    def __init__(self, ctx, analysis=None):
        super().__init__(ctx, analysis)
        self.function = None
        self.local = None  # names bound in the converted function (calls through them are dynamic)

    def visit_FunctionDef(self, node):
        if self.function is None:
            self.function = node
        self.generic_visit(node)
        return node

    def _visit_loop(self, node):
        self.generic_visit(node)
        first = node.body[0]
        if isinstance(first, gast.Expr) and isinstance(first.value, gast.Call):
            if self.local is None:  # computed once, and only when a loop starts with a call
                self.local = targets.local_names(self.function)
            if _is_directive(first, self.ctx, self.local):
                self.ctx.loop_options[node] = first
        return node

    visit_While = visit_For = _visit_loop


def _is_directive(statement, ctx, local) -> bool:
    if not (isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Call)):
        return False
    function = statement.value.func
    target = targets.resolve(function, ctx, local)
    if target is not targets.UNRESOLVED:
        return target is api.set_loop_options
    name = function.attr if isinstance(function, gast.Attribute) else getattr(function, "id", None)
    return name == "set_loop_options"


def options_call(statement, runtime_name):
    """``dict(name=value, ...)`` of the directive's arguments (positional ones named)."""
    call = statement.value
    args = list(call.args)
    function = call.func
    if (isinstance(function, gast.Attribute) and function.attr == "converted_call"
            and isinstance(function.value, gast.Name) and function.value.id == runtime_name):
        args = args[1:]  # al__.converted_call(set_loop_options, ...) after the calls pass
    keywords = [gast.keyword(arg=name, value=value) for name, value in zip(OPTION_NAMES, args)]
    return gast.Call(func=gast.Name(id="dict", ctx=gast.Load(), annotation=None, type_comment=None),
                     args=[], keywords=keywords + list(call.keywords))
