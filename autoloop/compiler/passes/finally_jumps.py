"""A jump in a ``finally`` block cancels what was pending; an error caught after a jump cancels the jump.

In Python such a jump discards the exception the ``try`` raised, and the
``return``/``break``/``continue`` the ``try`` (or a handler) was taking. The
flag passes turn every jump into ``flag = True``, so this happens in two
steps around them:

- `mark` (before the flag passes) puts a marker statement before each jump
  of a ``finally`` block that leaves it (a return, or a break/continue of a
  loop around the ``try``);
- `FinallyJumps` (after them) replaces each marker by
  ``finally_jumped = True``. The ``finally`` block first sets aside the jump
  flags the ``try`` body, handlers and ``else`` may have set (so its own
  code is not skipped by them) and puts them back at its end unless it
  jumped itself; a ``with al__.suppress_if(...)`` drops the exception the
  ``try`` raised when the ``finally`` block jumped::

      for k in ks:                          finally_jumped = False
          try:                              with al__.suppress_if(lambda: finally_jumped) as finally_block:
              return k                          try:
          finally:                                  retval_ = k
              break                                 do_return = True
                                                    break_ = True
                                                finally:
                                                    al__.entering_finally(finally_block)
                                                    pending_jumps = (do_return, break_, retval_)
                                                    do_return, break_, retval_ = (False, False, al__.Undefined('retval_'))
                                                    finally_jumped = True
                                                    break_ = True
                                                    if not finally_jumped:
                                                        do_return, break_, retval_ = pending_jumps

The mirror rule, `CaughtJumps`: an error raised after a jump (by a
``finally`` block or a ``with`` statement's exit) cancels that jump, so
every ``except`` handler first clears the flags its ``try`` body may have
set; it also starts with ``al__.caught()``, which raises again an error
that stopped conversion (a documented limitation is never the program's
to handle, even when a ``finally`` block's error replaced it).

``finally_jumped`` is read by a closure, so it is a shared name (see
`analysis.closures`): branches and loops inside the ``finally`` block write
it back to the function's own binding.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes import undefined
from autoloop.compiler.passes.base import LOOP_NODES, SCOPE_NODES, StatementPass, described_jumps


def mark(tree, ctx):
    """Put a marker before every jump that leaves a ``finally`` block."""
    _Marker(ctx).visit(tree)
    return tree


class _InFunctions(StatementPass):
    """A statement pass that knows the function definitions around the current statement."""

    def __init__(self, ctx, analysis=None):
        super().__init__(ctx, analysis)
        self.functions = []

    def visit_FunctionDef(self, node):
        self.functions.append(node)
        self.generic_visit(node)
        self.functions.pop()
        return node


class _Marker(_InFunctions):

    def visit_Try(self, node):
        self.generic_visit(node)
        flag = None
        for block, jump, index in leaving_jumps(node.finalbody):
            if flag is None:
                flag = self.ctx.namer.new("finally_jumped")
                self.ctx.generated[flag] = described_jumps(self.ctx, [j for _, j, _ in leaving_jumps(node.finalbody)])
                self.ctx.finally_flags[node] = flag
                self.ctx.exempt_reads.add(flag)
                function = self.functions[-1]
                self.ctx.captured[function] = self.ctx.captured.get(function, frozenset()) | {flag}
            marker = gast.Expr(value=templates.name(flag))
            block.insert(index, templates.located([marker], jump.lineno)[0])
        return node

    visit_TryStar = visit_Try


def leaving_jumps(statements):
    """``(block, jump, index)`` of every statement in `statements` that jumps out of them.

    Listed last-first, so inserting before one keeps the other indices valid.
    """
    found = []

    def visit(block, in_loop):
        for index, statement in enumerate(block):
            if isinstance(statement, gast.Return) or (
                    isinstance(statement, (gast.Break, gast.Continue)) and not in_loop):
                found.append((block, statement, index))
            if isinstance(statement, SCOPE_NODES):
                continue
            inner_loop = in_loop or isinstance(statement, LOOP_NODES)
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if inner and isinstance(inner[0], gast.stmt):
                    # a loop's else runs after it: its break/continue are ours
                    visit(inner, in_loop if field == "orelse" and isinstance(statement, LOOP_NODES)
                          else inner_loop if field == "body" else in_loop)
            for handler in getattr(statement, "handlers", None) or []:
                visit(handler.body, in_loop)
    visit(statements, False)
    return list(reversed(found))


class FinallyJumps(_InFunctions):
    def visit_Try(self, node):
        self.generic_visit(node)
        flag = self.ctx.finally_flags.get(node)
        if flag is None:
            return node
        jumped = templates.replace("flag = True", flag=flag)
        node.finalbody = _replace_markers(node.finalbody, flag, jumped)
        pending = sorted(_flags_set(node.body + node.orelse + node.handlers, self.ctx))
        self.retvals = set()
        if pending:
            first = node.finalbody[0]
            node.finalbody = templates.located(self._set_aside(pending, flag, node.finalbody), first.lineno)
            self.ctx.guards[node.finalbody[-1]] = ("jump out of the finally block", (self.ctx.user_line(first),))
        block = self.ctx.namer.new("finally_block")
        node.finalbody = templates.located(templates.replace("runtime.entering_finally(block)", block=block,
                                                             runtime=self.ctx.runtime_name),
                                           node.finalbody[0].lineno) + node.finalbody
        statements = templates.located(templates.replace("""
            flag = False
            with runtime.suppress_if(lambda: flag) as block:
                try_statement
            """, flag=flag, runtime=self.ctx.runtime_name, block=block, try_statement=[node]), node.lineno)
        # the finally block reads the pending flags and the return value to set them aside,
        # maybe before the try body bound them
        undefined.bind_later(self.ctx, self.functions[-1], statements[-1], set(pending) | self.retvals)
        return statements

    visit_TryStar = visit_Try

    def _set_aside(self, pending, flag, final):
        """`final` run with the pending jump flags cleared, and restored unless it jumped."""
        names, cleared = _cleared(pending, self.ctx)
        self.retvals |= set(names) - set(pending)  # a return cancelled by the finally block leaves no value
        return templates.replace("""
            saved = flags
            flags = cleared
            final
            if not flag:
                flags = saved
            """, saved=self.ctx.namer.new("pending_jumps"), flags=names, flag=flag, cleared=cleared, final=final)


class CaughtJumps(_InFunctions):
    """What every ``except`` handler does first: ``al__.caught()`` (an error that stopped conversion
    is never the program's to handle, even replaced by one a ``finally`` block raised), then cancel
    the jumps the ``try`` body had set.

    A ``return`` in the body whose ``finally`` block (or a ``with``
    statement's exit) then raises never returns: the error replaces it, and
    the handler runs, then the code after the ``try``. The flag passes set
    ``do_return = True`` at the ``return``, so each handler first clears the
    flags the body may set (a jump is taken only from a ``try`` that starts
    with them clear: code after a jump does not run)::

        try:                                try:
            try:                                try:
                return 1                            retval_ = 1
            finally:                                    do_return = True
                raise ValueError                finally:
        except ValueError:                          raise ValueError
            pass                            except ValueError:
                                                al__.caught()
                                                do_return, retval_ = (False, al__.Undefined('retval_'))
    """

    def visit_Try(self, node):
        self.generic_visit(node)
        for handler in node.handlers:
            first = templates.replace("runtime.caught()", runtime=self.ctx.runtime_name)
            handler.body = templates.located(first, handler.body[0].lineno) + handler.body
        pending = sorted(_flags_set(node.body, self.ctx))
        if not pending or not node.handlers:
            return node
        names, cleared = _cleared(pending, self.ctx)
        for handler in node.handlers:
            clear = templates.replace("flags = cleared", flags=names, cleared=cleared)
            handler.body[1:1] = templates.located(clear, handler.body[0].lineno)
        return node

    visit_TryStar = visit_Try


def _cleared(pending, ctx):
    """``(names, values)``: the jump flags `pending` and the return values they carry, and a tuple
    expression of what they hold before any jump (False; an unbound return value)."""
    names, cleared = [], []
    for name in pending:
        names.append(name)
        cleared.append(gast.Constant(value=False, kind=None))
        retval = ctx.jump_flags.get(name)
        if retval is not None:
            names.append(retval)
            cleared.append(templates.replace_expression(
                "runtime.Undefined(label)", runtime=ctx.runtime_name, label=gast.Constant(value=retval, kind=None)))
    return names, gast.Tuple(elts=cleared, ctx=gast.Load())


def _flags_set(statements, ctx) -> set:
    """Jump flags that `statements` may set (``break_ = True``), nested functions excluded.

    An enclosing ``finally`` block's own flag counts too (its marker, or ``finally_jumped = True`` once
    replaced): a ``return`` that leaves that block from inside this ``try`` is cancelled with the
    other jumps when this ``try``'s ``finally`` block jumps or a handler catches an error, and then it
    did not leave the block."""
    finally_flags = set(ctx.finally_flags.values())
    found = set()
    stack = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, SCOPE_NODES):
            continue
        if (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)
                and (node.targets[0].id in ctx.jump_flags or node.targets[0].id in finally_flags)
                and isinstance(node.value, gast.Constant) and node.value.value is True):
            found.add(node.targets[0].id)
        if isinstance(node, gast.Expr) and isinstance(node.value, gast.Name) and node.value.id in finally_flags:
            found.add(node.value.id)  # a marker, `flag = True` once replaced
        stack.extend(gast.iter_child_nodes(node))
    return found


def _replace_markers(statements, flag, replacement):
    result = []
    for statement in statements:
        if (isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Name)
                and statement.value.id == flag):
            result.extend(templates.located(templates.clone(replacement), statement.lineno))
            continue
        if not isinstance(statement, SCOPE_NODES):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(statement, field, None)
                if block and isinstance(block[0], gast.stmt):
                    setattr(statement, field, _replace_markers(block, flag, replacement))
            for handler in getattr(statement, "handlers", None) or []:
                handler.body = _replace_markers(handler.body, flag, replacement)
        result.append(statement)
    return result
