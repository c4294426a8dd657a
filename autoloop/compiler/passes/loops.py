"""``while`` and ``for`` become functions of the loop variables and a runtime call.

    while i < n:                      def loop_cond(i, result):
        result += i * i                   return i < n
        i += 1                        def loop_body(i, result):
                                          result += i * i
                                          i += 1
                                          return i, result
                                      i, result = al__.while_stmt(loop_cond, loop_body, (i, result), ('i', 'result'))

    for x in xs:                      def loop_body(x, total):
        total += x                        total += x
                                          return total
                                      total = al__.for_stmt(xs, loop_body, (total,), ('total',))

Loop variables are exactly the names modified in the body that are live at
the loop's head (read by the test, by a later iteration, or after the loop);
a name first assigned in the loop starts as ``al__.Undefined('name')``. A
``set_loop_options(...)`` directive (see `directives`) becomes the
``options=`` of the runtime call. Needs the analyses; runs after the flag
passes (no break/continue/return is left in a loop body).
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.analysis.names import composite_name, is_composite, is_live
from autoloop.compiler.passes import directives, state, undefined
from autoloop.compiler.passes.base import StatementPass


class Loops(StatementPass):
    # Each visitor reads the analyses before converting the statements inside
    # (the side tables describe the tree as it was analysed).
    def visit_While(self, node):
        function = self.analysis.of(node)
        modified = function.modified(node) | state.nonlocal_writes(self.ctx, function, node.body)
        live = function.live_in[node]
        carried = state.carried_names(self.ctx, function.scopes.function)
        loop_vars = [n for n in modified if is_live(n, live) or n in carried]
        return self._convert(node, function, loop_vars, target_names=())

    def visit_For(self, node):
        function = self.analysis.of(node)
        target_names = {composite_name(n) for n in gast.walk(node.target)} - {None}
        modified = function.modified(node) | target_names | state.nonlocal_writes(self.ctx, function, node.body)
        live = function.live_out[node]
        extra_test = self.ctx.extra_tests.get(node)
        extra_reads = {n.id for n in gast.walk(extra_test) if isinstance(n, gast.Name)} if extra_test else set()
        carried = state.carried_names(self.ctx, function.scopes.function)
        loop_vars = [n for n in modified if is_live(n, live) or n in extra_reads or n in carried]
        return self._convert(node, function, loop_vars, target_names)

    def _convert(self, node, function, loop_vars, target_names):
        ctx = self.ctx
        loop_vars = state.without_covered(state.in_source_order(loop_vars, function.first_seen))
        maybe_before = function.maybe_defined_before(node)
        shared = state.shared_names(ctx, function.scopes.function)
        declared = state.declared_in(ctx, function.scopes.function)
        self.generic_visit(node)
        names = state.StateNames(loop_vars, ctx.namer, shared)
        options, body = self._take_options(node)
        prelude = names.prelude()
        inits = [n for n in loop_vars if not is_composite(n) and n not in maybe_before and function.is_local(n)]
        undefined.initialized_before(ctx, function, node, inits)
        # Bound on some paths only: the loop functions must find at least al__.Undefined.
        undefined.bind_later(ctx, function.scopes.function, node, [n for n in loop_vars if not is_composite(n)
                                                   and n in maybe_before and n not in function.defined_before(node)])
        statements = state.undefined_inits(inits, ctx.runtime_name)

        keywords = []
        if isinstance(node, gast.While):
            cond_name = ctx.reserved("loop_cond")
            cond_body = state.declarations(prelude, declared) + prelude + [gast.Return(value=node.test)]
            statements.append(state.function_def(cond_name, names.parameters, cond_body))
            parameters = names.parameters
        else:
            parameters, unpack = self._target_parameter(node.target, loop_vars, shared)
            body = unpack + body
            parameters = [parameters] + names.parameters
        body_name = ctx.reserved("loop_body")
        body = (state.declarations(prelude + body, declared) + state.prelude_copy(prelude) + body
                + state.return_statement(names))
        statements.append(state.function_def(body_name, parameters, body))
        extra_test = ctx.extra_tests.get(node)
        if extra_test is not None:
            test_name = ctx.reserved("loop_test")
            test_body = (state.declarations(prelude, declared) + state.prelude_copy(prelude)
                         + [gast.Return(value=extra_test)])
            statements.append(state.function_def(test_name, names.parameters, test_body))
            keywords.append(gast.keyword(arg="extra_test", value=templates.name(test_name)))
        appended = [n for n in ctx.appended_lists.get(node, ()) if n in loop_vars]
        if appended:
            keywords.append(gast.keyword(arg="appended", value=state.StateNames(
                dict.fromkeys(appended)).labels()))
        if options is not None:
            keywords.append(gast.keyword(arg="options", value=options))
        if node in ctx.unsupported:
            keywords.append(gast.keyword(arg="unsupported", value=gast.Constant(
                value=ctx.unsupported[node], kind=None)))

        if isinstance(node, gast.While):
            call = templates.replace_expression(
                "runtime.while_stmt(loop_cond, loop_body, loop_vars, labels)",
                runtime=ctx.runtime_name, loop_cond=cond_name, loop_body=body_name,
                loop_vars=names.values(), labels=names.labels())
        else:
            call = templates.replace_expression(
                "runtime.for_stmt(iterable, loop_body, loop_vars, labels)",
                runtime=ctx.runtime_name, iterable=node.iter, loop_body=body_name,
                loop_vars=names.values(), labels=names.labels())
        call.keywords = keywords
        statements.append(state.assign_or_call(names, call))
        return templates.located(statements, node.lineno)

    def _take_options(self, node):
        """The loop's ``set_loop_options`` arguments as a ``dict(...)`` call, and the body without it."""
        directive = self.ctx.loop_options.get(node)
        body = node.body
        for index, statement in enumerate(body):
            if statement is directive:
                return directives.options_call(statement, self.ctx.runtime_name), body[:index] + body[index + 1:]
        return None, body

    def _target_parameter(self, target, loop_vars, shared):
        """The body's first parameter, and statements unpacking it into the target."""
        if isinstance(target, gast.Name) and target.id not in loop_vars and target.id not in shared:
            return target.id, []
        parameter = self.ctx.reserved("iterate")
        target = templates.set_ctx(target, gast.Store())
        return parameter, [gast.Assign(targets=[target], value=templates.name(parameter),
                                       type_comment=None)]
