"""A statement-level control-flow graph of one function.

Computes successor and predecessor lists over nodes that are statements
(compound statements stand for their header: an `if` or `while` node is its
test, a `for` node fetches the next item and `ForTarget(loop)` assigns the
target), `ExceptHandler`s and `match_case`s, plus `ENTRY` and `EXIT`. Also
`inside[statement]`: the nodes a compound statement contains (itself
included), used to tell edges leaving a statement from edges within it.
Needs nothing. `try` is approximated: any statement of a `try` body may jump
to any of its handlers.
"""

from __future__ import annotations

import gast

from autoloop.compiler.analysis.scopes import ForTarget


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


ENTRY = _Marker("ENTRY")
EXIT = _Marker("EXIT")


class CFG:
    def __init__(self, function: gast.FunctionDef):
        self.successors: dict = {ENTRY: [], EXIT: []}
        self.predecessors: dict = {ENTRY: [], EXIT: []}
        self.order: list = []  # nodes in creation order
        self.inside: dict = {}
        self._handlers: list = []  # innermost try's handlers last
        first = self._block(function.body, EXIT, loop=None)
        self._edge(ENTRY, first)

    # -- construction -----------------------------------------------------------
    def _add(self, node):
        if node not in self.successors:
            self.successors[node] = []
            self.predecessors[node] = []
            self.order.append(node)

    def _edge(self, source, target):
        self._add(source)
        self._add(target)
        if target not in self.successors[source]:
            self.successors[source].append(target)
            self.predecessors[target].append(source)

    def _block(self, statements, follow, loop):
        entry = follow
        for statement in reversed(statements):
            entry = self._statement(statement, entry, loop)
        return entry

    def _statement(self, node, follow, loop):
        start = len(self.order)
        self._add(node)
        build = getattr(self, "_build_" + type(node).__name__, None)
        if build is None:
            self._edge(node, follow)
        else:
            build(node, follow, loop)
        for handler in (self._handlers[-1] if self._handlers else ()):
            self._edge(node, handler)
        if build is not None:
            self.inside[node] = set(self.order[start:])
        return node

    def _build_Return(self, node, follow, loop):
        self._edge(node, EXIT)

    _build_Raise = _build_Return

    def _build_Break(self, node, follow, loop):
        self._edge(node, loop[0] if loop else EXIT)

    def _build_Continue(self, node, follow, loop):
        self._edge(node, loop[1] if loop else EXIT)

    def _build_If(self, node, follow, loop):
        self._edge(node, self._block(node.body, follow, loop))
        self._edge(node, self._block(node.orelse, follow, loop))

    def _build_While(self, node, follow, loop):
        after = self._block(node.orelse, follow, loop)
        self._edge(node, self._block(node.body, node, (follow, node)))
        self._edge(node, after)

    def _build_For(self, node, follow, loop):
        after = self._block(node.orelse, follow, loop)
        target = ForTarget(node)
        self._edge(node, target)
        self._edge(target, self._block(node.body, node, (follow, node)))
        self._edge(node, after)

    _build_AsyncFor = _build_For

    def _build_With(self, node, follow, loop):
        self._edge(node, self._block(node.body, follow, loop))

    _build_AsyncWith = _build_With

    def _build_Try(self, node, follow, loop):
        final = self._block(node.finalbody, follow, loop)
        for handler in node.handlers:
            self._add(handler)
            self._edge(handler, self._block(handler.body, final, loop))
        orelse = self._block(node.orelse, final, loop)
        self._handlers.append(list(node.handlers))
        body = self._block(node.body, orelse, loop)
        self._handlers.pop()
        self._edge(node, body)
        for handler in node.handlers:
            self._edge(node, handler)
        if not node.handlers:
            self._edge(node, final)

    _build_TryStar = _build_Try

    def _build_Match(self, node, follow, loop):
        for case in node.cases:
            self._edge(node, case)
            self._edge(case, self._block(case.body, follow, loop))
        self._edge(node, follow)

    def _build_FunctionDef(self, node, follow, loop):
        self._edge(node, follow)  # its body is a function of its own

    _build_AsyncFunctionDef = _build_ClassDef = _build_FunctionDef

    # -- queries --------------------------------------------------------------------
    def exits(self, statement):
        """Edges ``(inside, outside)`` leaving `statement` to the code after it."""
        inside = self.inside.get(statement, {statement})
        return [(node, successor) for node in inside for successor in self.successors.get(node, ())
                if successor not in inside and successor is not EXIT]

    def entries(self, statement):
        """Nodes outside `statement` that jump to its first node."""
        inside = self.inside.get(statement, {statement})
        return [p for p in self.predecessors.get(statement, ()) if p not in inside]
