"""Constructs graph control flow cannot express, caught before anything else.

- ``yield``, ``yield from`` and ``await`` anywhere in a converted function:
  NotImplementedError now, naming the construct and its line.
- ``try`` statements with ``except`` clauses, and writes to ``global``
  names and to the converted function's own ``nonlocal`` names (cells that
  outlive the trace), inside a loop or an ``if``: recorded in
  ``ctx.unsupported`` as ``("contains", construct, line)``; the runtime
  raises NotImplementedError only if that statement is staged as graph
  control flow (in Python they keep working).
  A nested function's ``nonlocal`` name is loop state like a local (see
  `state.shared_names`).
- ``if``/``while``/``for`` inside the body of a ``try`` with ``except``
  clauses: recorded the same way, as ``("enclosed by", construct, line)``
  (the handlers could never see errors raised when the graph runs). Other
  ``try``/``finally`` statements are fine: the ``finally`` block simply
  follows; one that returns or breaks discards the errors raised while
  tracing, not those the graph raises when it runs (as in TensorFlow).
- ``match`` subjects are wrapped in ``al__.match_subject(...)``, which raises
  NotImplementedError for a tensor.
- The body of a ``try`` that catches errors runs in ``with
  al__.try_body(line):``, so a ``raise`` reached through a call, in graph
  control flow staged inside that body, is a NotImplementedError too.
"""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.compiler.passes import finally_jumps
from autoloop.compiler.passes.base import TRY_NODES, StatementPass, walk_scope

_CONTROL = (gast.If, gast.While, gast.For)


def _catches(node) -> str | None:
    """How a ``try`` statement catches errors (its handlers could not see graph run-time
    errors), or None: an ``except`` clause, or a ``finally`` block that returns, breaks or
    raises (which discards or replaces any error)."""
    if not isinstance(node, TRY_NODES):
        return None
    if node.handlers:
        return "a try statement with an except clause"
    if finally_jumps.leaving_jumps(node.finalbody):
        return "a try statement whose finally block returns, breaks or continues"
    if any(isinstance(inner, gast.Raise) for statement in node.finalbody for inner in walk_scope(statement)):
        return "a try statement whose finally block raises"
    return None


def _catching_blocks(node) -> list:
    """The blocks of a catching ``try`` whose errors it catches: the body, and also the handlers
    and ``else`` when its ``finally`` block jumps (which discards any error)."""
    blocks = [node.body]
    if finally_jumps.leaving_jumps(node.finalbody):
        blocks += [handler.body for handler in node.handlers] + ([node.orelse] if node.orelse else [])
    return blocks


class UnsupportedConstructs(StatementPass):
    def visit_FunctionDef(self, node):
        self.current = node
        declared, control, has_try = {}, [], False
        assigned = self.ctx.user_locals.setdefault(node, set())
        for inner in walk_scope(node):  # one walk finds everything this pass looks for
            kind = type(inner)
            if kind is gast.Name:
                if not isinstance(inner.ctx, gast.Load):
                    assigned.add(inner.id)
            elif kind in (gast.Yield, gast.YieldFrom):
                self.fail(NotImplementedError, f"'yield' in {node.name}: generators are not supported "
                          f"(a generator function cannot be converted); call it outside the converted "
                          f"function", inner)
            elif kind is gast.Await:
                self.fail(NotImplementedError, f"'await' in {node.name}: coroutines cannot be "
                          f"converted", inner)
            elif kind is gast.Global:
                declared.update(dict.fromkeys(inner.names, "global"))
            elif kind is gast.Nonlocal:
                declared.update(dict.fromkeys(inner.names, "nonlocal"))
            elif kind in _CONTROL:
                control.append(inner)
            elif _catches(inner):
                has_try = True
            if isinstance(inner, TRY_NODES):
                self.ctx.has_try = True
                if inner.finalbody:
                    self.ctx.has_finally = True  # the finally-jump passes have work to do
        self.ctx.globals_of[node] = declared
        if declared or has_try:
            for inner in control:
                found = self._unsupported_inside(inner, declared)
                if found:
                    self.ctx.unsupported[inner] = found
        if has_try:
            self._mark_inside_try(node)
        self.generic_visit(node)
        return node

    def _mark_inside_try(self, function):
        """Control flow in a ``try`` body: its handlers could not see graph run-time errors.

        A ``try`` without handlers whose ``finally`` block jumps converts the control flow in its
        body, as TensorFlow does: the jump discards the errors raised while tracing, as in Python,
        but not those the graph raises when it runs (a ``raise`` staged there is still refused, by
        ``try_body``).
        """
        for statement in walk_scope(function):
            if not _catches(statement) or not statement.handlers:
                continue
            for child in (child for block in _catching_blocks(statement) for child in block):
                for inner in walk_scope(child):
                    if isinstance(inner, _CONTROL) and inner not in self.ctx.unsupported:
                        self.ctx.unsupported[inner] = (
                            "enclosed by", _catches(statement), self.ctx.user_line(statement))

    def visit_AsyncFunctionDef(self, node):
        self.fail(NotImplementedError, f"async function {node.name} cannot be converted", node)

    def _unsupported_inside(self, statement, declared):
        outlives = self.ctx.root is None or self.ctx.root is self.current  # its nonlocals outlive the trace
        blocks = [statement.body, statement.orelse]
        for block in blocks:
            for child in block:
                for inner in walk_scope(child):
                    if _catches(inner):
                        return ("contains", _catches(inner), self.ctx.user_line(inner))
                    if isinstance(inner, gast.Name) and isinstance(inner.ctx, gast.Store) \
                            and inner.id in declared and (declared[inner.id] == "global" or outlives):
                        return ("contains", f"an assignment to {declared[inner.id]} '{inner.id}'",
                                self.ctx.user_line(inner))
        return None

    def visit_Try(self, node):
        """A try that catches errors marks its body: see `runtime.exceptions.try_body`."""
        self.generic_visit(node)
        if _catches(node):
            line = gast.Constant(value=self.ctx.user_line(node), kind=None)
            for block in _catching_blocks(node):
                block[:] = templates.located(templates.replace(
                    "with runtime.try_body(line):\n    body", runtime=self.ctx.runtime_name, line=line,
                    body=list(block)), block[0].lineno)
        return node

    visit_TryStar = visit_Try

    def visit_Match(self, node):
        self.generic_visit(node)
        call = gast.Call(func=self.runtime("match_subject"), args=[node.subject], keywords=[])
        node.subject = gast.copy_location(call, node.subject)
        return node
