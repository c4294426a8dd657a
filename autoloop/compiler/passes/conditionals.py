"""``if``/``elif``/``else`` become two branch functions and a runtime call.

    if x > 0:                         def if_true():
        y = x                             y = x
    else:                                 return y
        y = -x                        def if_false():
                                          y = -x
                                          return y
                                      y = al__.if_stmt(x > 0, if_true, if_false, ('y',))

The outputs are the names modified in either branch that are live after the
statement. A branch that reads an output before assigning it receives the
current values as parameters (``al__.if_stmt(..., ('y',), (y,))``); an
output bound on no path before the statement starts as
``al__.Undefined('y')``. ``elif`` chains are nested ``if``s and come out
nested. An ``if`` the flag passes made to skip the code after a jump
passes what `ConversionContext.guards` says of it (``guard=('break',
(12,))``). Needs the analyses.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.analysis.names import is_composite, is_live
from autoloop.compiler.passes import state, undefined
from autoloop.compiler.passes.base import StatementPass


class Conditionals(StatementPass):
    def visit_If(self, node):
        ctx = self.ctx
        function = self.analysis.of(node)
        live_after = function.live_after(node)
        modified = (function.modified(node, "body") | function.modified(node, "orelse")
                    | state.nonlocal_writes(ctx, function, node.body + node.orelse))
        # A shared name keeps one binding: received by both branches when a branch changes it,
        # so each starts from its value; a carried one (closures may read it any time) is also
        # an output.
        shared = state.shared_names(ctx, function.scopes.function)
        carried = state.carried_names(ctx, function.scopes.function)
        outputs = [n for n in modified if is_live(n, live_after) or n in carried]
        outputs = state.without_covered(state.in_source_order(outputs, function.first_seen))
        # A branch that assigns a name makes it local to the branch function, so it
        # must receive the current value if it may read it first (output or not).
        read_first = {n for field in ("body", "orelse") for n in function.modified(node, field)
                      if not is_composite(n) and (is_live(n, function.live_at_start(node, field))
                                                  or n in shared)} | {n for n in modified if n in shared}
        inputs = state.in_source_order(
            [n for n in outputs if is_composite(n)] + sorted(read_first), function.first_seen)
        maybe_before = function.maybe_defined_before(node)
        defined_after = function.defined_after(node)
        needs_value = [n for n in dict.fromkeys(outputs + inputs) if not is_composite(n)
                       and (n not in defined_after or n in inputs)]
        inits = [n for n in needs_value if n not in maybe_before and function.is_local(n)]
        # Bound on some paths only: the branch functions must find at least al__.Undefined.
        defined_before = function.defined_before(node)
        undefined.initialized_before(ctx, function, node, inits)
        undefined.bind_later(ctx, function.scopes.function, node, [n for n in needs_value if n in maybe_before
                                                   and n not in defined_before])
        declared = state.declared_in(ctx, function.scopes.function)
        self.generic_visit(node)  # after reading the analyses, which describe the tree before

        names = state.StateNames(outputs)
        received = state.StateNames(inputs, ctx.namer, shared)
        parameters = received.parameters
        prelude = received.prelude()

        statements = state.undefined_inits(inits, ctx.runtime_name)
        true_name, false_name = ctx.reserved("if_true"), ctx.reserved("if_false")
        for name, branch in ((true_name, node.body), (false_name, node.orelse)):
            if not branch and not outputs:
                continue
            body = (state.declarations(prelude + branch, declared) + state.prelude_copy(prelude) + branch
                    + state.return_statement(names))
            statements.append(state.function_def(name, parameters, body))
        false_function = templates.name(false_name) if (node.orelse or outputs) else gast.Constant(
            value=None, kind=None)
        call = templates.replace_expression(
            "runtime.if_stmt(test, if_true, if_false, labels)", runtime=ctx.runtime_name,
            test=node.test, if_true=true_name, if_false=false_function, labels=names.labels())
        if inputs:
            call.args.append(gast.Tuple(elts=[state.expression(n) for n in inputs], ctx=gast.Load()))
        for keyword, table in (("unsupported", ctx.unsupported), ("guard", ctx.guards)):
            if node in table:
                call.keywords.append(gast.keyword(arg=keyword, value=gast.Constant(value=table[node], kind=None)))
        statements.append(state.assign_or_call(names, call))
        return templates.located(statements, node.lineno)
