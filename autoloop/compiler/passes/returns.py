"""``return`` anywhere becomes flags, so every function ends in one return.

    def f(x):                         def f(x):
        while x > 0:                      do_return = False
            if x == 5:                    retval_ = al__.Undefined('retval_')
                return x                  while x > 0:
            x -= 1                            if x == 5:
        return -1                                 retval_ = x
                                                  do_return = True
                                                  break
                                              x -= 1
                                          if not do_return:
                                              retval_ = -1
                                              do_return = True
                                          return al__.return_value(retval_)

Inside a loop a return also breaks (the breaks pass then guards what
follows); after a loop nested in another loop, ``if do_return: break``
carries the exit outwards. Functions whose only return is their last
statement are left alone. Each nested function is handled on its own.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import (
    LOOP_NODES, TRY_NODES, StatementPass, containing, guard, jumps_in)


def _returns_value(node) -> bool:
    value = node.value
    return value is not None and not (isinstance(value, gast.Constant) and value.value is None)


class Returns(StatementPass):
    def visit_FunctionDef(self, node):
        self.generic_visit(node)  # nested functions first, each on its own
        body = node.body
        returns = [n for n in _own_returns(body)]
        if not returns or (len(returns) == 1 and body[-1] is returns[0]):
            return node
        self.do_return = self.ctx.namer.new("do_return")
        self.retval = self.ctx.namer.new("retval_")
        self.has_value = any(_returns_value(r) for r in returns)
        self.ctx.jump_flags[self.do_return] = self.retval if self.has_value else None
        lines = tuple(sorted({self.ctx.user_line(r) for r in returns}))
        self.ctx.generated[self.do_return] = ("return", lines)
        self.ctx.generated[self.retval] = ("return value", lines)
        self.ctx.exempt_reads.add(self.do_return)
        self.with_return = containing(body, gast.Return)
        new_body = self._block(body, in_loop=False)
        prefix = templates.replace("do_return = False", do_return=self.do_return)
        if self.has_value:
            self.ctx.exempt_reads.add(self.retval)
            # return_value: after graph control flow the value may be assigned on some
            # paths only, and a function that falls off its end returns None. Bound from
            # the start, so the loops and branches that carry it always find a value.
            prefix += templates.replace("retval = runtime.Undefined(label)", retval=self.retval,
                                        runtime=self.ctx.runtime_name,
                                        label=gast.Constant(value=self.retval, kind=None))
            suffix = templates.replace("return runtime.return_value(retval)",
                                       runtime=self.ctx.runtime_name, retval=self.retval)
        else:
            suffix = []
        first_line = body[0].lineno
        last_line = getattr(body[-1], "lineno", first_line)
        node.body = (templates.located(prefix, first_line) + new_body
                     + templates.located(suffix, last_line))
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def _block(self, statements, in_loop):
        result = []
        for index, statement in enumerate(statements):
            if isinstance(statement, gast.Return):
                result.extend(self._set_return(statement, in_loop))
                return result  # anything after a return is unreachable
            if id(statement) not in self.with_return:
                result.append(statement)
                continue
            jumps = jumps_in([statement], gast.Return, self.with_return)
            result.append(self._convert(statement, in_loop))
            rest = statements[index + 1:]
            if in_loop:
                if isinstance(statement, LOOP_NODES):
                    result.extend(guard(self.ctx, templates.located(templates.replace(
                        "if do_return:\n    break", do_return=self.do_return), statement.lineno), jumps))
                result.extend(self._block(rest, in_loop))  # the breaks pass guards these
                return result
            if rest:
                guarded = templates.replace("if not do_return:\n    rest", do_return=self.do_return,
                                            rest=self._block(rest, in_loop))
                result.extend(guard(self.ctx, templates.located(guarded, rest[0].lineno), jumps,
                                    self.retval if self.has_value else None))
            return result
        return result

    def _convert(self, statement, in_loop):
        if isinstance(statement, LOOP_NODES):
            statement.body = self._block(statement.body, in_loop=True)
            statement.orelse = self._block(statement.orelse, in_loop)
            return statement
        returns_in_body = isinstance(statement, TRY_NODES) and any(
            id(s) in self.with_return for s in statement.body)
        jumps = jumps_in(statement.body, gast.Return, self.with_return) if returns_in_body else ()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            if block:
                block = self._block(block, in_loop)
                if field == "orelse" and returns_in_body:  # a try's else runs only if its body ended
                    block = guard(self.ctx, templates.located(templates.replace(
                        "if not do_return:\n    block", do_return=self.do_return, block=block),
                        block[0].lineno), jumps, self.retval if self.has_value else None)
                setattr(statement, field, block)
        for item in getattr(statement, "handlers", None) or getattr(statement, "cases", None) or []:
            item.body = self._block(item.body, in_loop)
        return statement

    def _set_return(self, node, in_loop):
        if self.has_value:
            value = node.value if node.value is not None else gast.Constant(value=None, kind=None)
            # The value first: if computing it raises, no return is pending.
            statements = templates.replace("retval = value\ndo_return = True",
                                           do_return=self.do_return, retval=self.retval, value=value)
        else:
            statements = templates.replace("do_return = True", do_return=self.do_return)
        if in_loop:
            statements.append(gast.Break())
            self.ctx.return_breaks.add(statements[-1])
        return templates.located(statements, node.lineno)


def _own_returns(statements):
    from autoloop.compiler.passes.base import SCOPE_NODES, walk_scope
    for statement in statements:
        if isinstance(statement, SCOPE_NODES):
            continue  # a nested function's returns are its own
        for node in walk_scope(statement):
            if isinstance(node, gast.Return):
                yield node
