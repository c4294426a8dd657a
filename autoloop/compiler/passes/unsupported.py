"""Constructs graph control flow cannot express, caught before anything else.

- ``yield``, ``yield from`` and ``await`` anywhere in a converted function:
  NotImplementedError now, naming the construct and its line.
- ``try`` statements and writes to ``global``/``nonlocal`` names inside a
  loop or an ``if``: recorded in ``ctx.unsupported`` as
  ``("contains", construct, line)``; the runtime raises NotImplementedError
  only if that statement is staged as graph control flow (in Python they
  keep working).
- ``if``/``while``/``for`` inside the body of a ``try``: recorded the same way,
  as ``("enclosed by", "a try statement", line)`` (the handlers could never
  see errors raised when the graph runs).
- ``match`` subjects are wrapped in ``al__.match_subject(...)``, which raises
  NotImplementedError for a tensor.
"""

from __future__ import annotations

import gast

from autoloop.compiler.passes.base import StatementPass, walk_scope

_CONTROL = (gast.If, gast.While, gast.For)


class UnsupportedConstructs(StatementPass):
    def visit_FunctionDef(self, node):
        declared, control, has_try = {}, [], False
        for inner in walk_scope(node):  # one walk finds everything this pass looks for
            kind = type(inner)
            if kind in (gast.Yield, gast.YieldFrom):
                self.fail(NotImplementedError, f"'yield' in {node.name}: generator functions cannot "
                          f"be converted; call them outside the converted function", inner)
            elif kind is gast.Await:
                self.fail(NotImplementedError, f"'await' in {node.name}: coroutines cannot be "
                          f"converted", inner)
            elif kind is gast.Global:
                declared.update(dict.fromkeys(inner.names, "global"))
            elif kind is gast.Nonlocal:
                declared.update(dict.fromkeys(inner.names, "nonlocal"))
            elif kind in _CONTROL:
                control.append(inner)
            elif kind is gast.Try or kind.__name__ == "TryStar":
                has_try = True
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
        """Control flow in a ``try`` body: its handlers could not see graph run-time errors."""
        for statement in walk_scope(function):
            if not (isinstance(statement, gast.Try) or type(statement).__name__ == "TryStar"):
                continue
            for child in statement.body:
                for inner in walk_scope(child):
                    if isinstance(inner, _CONTROL) and inner not in self.ctx.unsupported:
                        self.ctx.unsupported[inner] = (
                            "enclosed by", "a try statement", self.ctx.user_line(statement))

    def visit_AsyncFunctionDef(self, node):
        self.fail(NotImplementedError, f"async function {node.name} cannot be converted", node)

    def _unsupported_inside(self, statement, declared):
        blocks = [statement.body, statement.orelse]
        for block in blocks:
            for child in block:
                for inner in walk_scope(child):
                    if isinstance(inner, gast.Try) or type(inner).__name__ == "TryStar":
                        return ("contains", "a try statement", self.ctx.user_line(inner))
                    if isinstance(inner, gast.Name) and isinstance(inner.ctx, gast.Store) \
                            and inner.id in declared:
                        return ("contains", f"an assignment to global or nonlocal '{inner.id}'",
                                self.ctx.user_line(inner))
        return None

    def visit_Match(self, node):
        self.generic_visit(node)
        call = gast.Call(func=self.runtime("match_subject"), args=[node.subject], keywords=[])
        node.subject = gast.copy_location(call, node.subject)
        return node
