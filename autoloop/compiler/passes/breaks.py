"""``break`` becomes a flag in the loop's state; a loop's ``else`` goes after it.

    while i < n:                      break_ = False
        if x[i] < 0:                  while not break_ and i < n:
            break                         if x[i] < 0:
        i += 1                                break_ = True
    else:                                 if not break_:
        found = False                         i += 1
                                      if not break_:
                                          found = False

A ``for`` loop has no test to extend, so its ``not break_`` is recorded in
``ctx.extra_tests[loop]`` for the loops pass. A loop ``else`` without a
break simply follows the loop. Inner loops are converted first.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes.base import (
    StatementPass, contains, containing, described_jumps, guard, jumps_in, lower_jumps, walk_loop)


def _has_break(statements):
    return contains(statements, gast.Break, walker=walk_loop)


class Breaks(StatementPass):
    def _visit_loop(self, node):
        self.generic_visit(node)
        orelse, node.orelse = node.orelse, []
        if not _has_break(node.body):
            return [node] + orelse
        flag = self.ctx.namer.new("break_")
        self.ctx.jump_flags[flag] = None
        self.ctx.exempt_reads.add(flag)
        self.found = containing(node.body, gast.Break, loops_are_boundaries=True)
        jumps = jumps_in(node.body, gast.Break, self.found)
        self.ctx.generated[flag] = described_jumps(self.ctx, jumps)
        node.body = lower_jumps(self.ctx, node.body, gast.Break, flag, self.found, enter_loop_else=False)
        if isinstance(node, gast.While):
            node.test = templates.replace_expression("not flag and test", flag=flag, test=node.test)
        else:
            # Not in the tree, so no later pass sees it: written in its final form.
            self.ctx.extra_tests[node] = templates.replace_expression(
                "runtime.not_(flag)", runtime=self.ctx.runtime_name, flag=flag)
        before = templates.replace("flag = False", flag=flag)
        after = guard(self.ctx, templates.replace("if not flag:\n    orelse", flag=flag, orelse=orelse),
                      jumps) if orelse else []
        return (templates.located(before, node.lineno) + [node]
                + templates.located(after, orelse[0].lineno if orelse else node.lineno))

    visit_While = visit_For = _visit_loop
