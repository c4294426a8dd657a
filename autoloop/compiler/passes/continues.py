"""``continue`` becomes a flag that guards the rest of the loop body.

    while i < n:                      while i < n:
        i += 1                            continue_ = False
        if i % 2:                         i += 1
            continue                      if i % 2:
        s += i                                continue_ = True
                                          if not continue_:
                                              s += i

The flag is reset at the top of every iteration, so it is never a loop
variable. Inner loops are converted first; their ``continue``s are theirs.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import StatementPass, contains, containing, walk_loop


def _has_continue(statements):
    return contains(statements, gast.Continue, walker=walk_loop)


class Continues(StatementPass):
    def _visit_loop(self, node):
        self.generic_visit(node)
        if not _has_continue(node.body):
            return node
        self.flag = self.ctx.namer.new("continue_")
        self.found = containing(node.body, gast.Continue, loops_are_boundaries=True)
        reset = templates.located(templates.replace("flag = False", flag=self.flag), node.body[0].lineno)
        node.body = reset + self._block(node.body)
        return node

    visit_While = visit_For = _visit_loop

    def _block(self, statements):
        result = []
        for index, statement in enumerate(statements):
            if isinstance(statement, gast.Continue):
                result.extend(templates.located(
                    templates.replace("flag = True", flag=self.flag), statement.lineno))
                return result
            if id(statement) not in self.found:
                result.append(statement)
                continue
            for field in ("body", "orelse", "finalbody"):
                block = getattr(statement, field, None)
                if block:
                    setattr(statement, field, self._block(block))
            for item in getattr(statement, "handlers", None) or getattr(statement, "cases", None) or []:
                item.body = self._block(item.body)
            result.append(statement)
            rest = statements[index + 1:]
            if rest:
                result.extend(templates.located(templates.replace(
                    "if not flag:\n    rest", flag=self.flag, rest=self._block(rest)), rest[0].lineno))
            return result
        return result
