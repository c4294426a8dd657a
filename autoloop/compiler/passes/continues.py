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
from autoloop.compiler.passes.base import StatementPass, contains, containing, described_jumps, jumps_in, lower_jumps, walk_loop


def _has_continue(statements):
    return contains(statements, gast.Continue, walker=walk_loop)


class Continues(StatementPass):
    def _visit_loop(self, node):
        self.generic_visit(node)
        if not _has_continue(node.body):
            return node
        self.flag = self.ctx.namer.new("continue_")
        self.ctx.jump_flags[self.flag] = None
        self.ctx.exempt_reads.add(self.flag)
        self.found = containing(node.body, gast.Continue, loops_are_boundaries=True)
        self.ctx.generated[self.flag] = described_jumps(self.ctx, jumps_in(node.body, gast.Continue, self.found))
        reset = templates.located(templates.replace("flag = False", flag=self.flag), node.body[0].lineno)
        node.body = reset + lower_jumps(self.ctx, node.body, gast.Continue, self.flag, self.found, enter_loop_else=True)
        return node

    visit_While = visit_For = _visit_loop
