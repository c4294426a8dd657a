"""Read-only analyses, run once per conversion; results live in side tables.

`analyze(tree)` runs, for every function definition in `tree` (nested ones
included), scopes -> cfg -> liveness -> definedness, and returns an
`Analysis` that answers the questions the passes ask about a statement:
which names it modifies, which are live after it, which are defined before.
"""

from __future__ import annotations

import dataclasses

import gast

from autoloop.compiler.analysis import definedness, liveness
from autoloop.compiler.analysis.cfg import CFG
from autoloop.compiler.analysis.names import composite_name, is_live
from autoloop.compiler.analysis.scopes import Scopes


@dataclasses.dataclass
class FunctionAnalysis:
    """Every analysis result for one function."""

    scopes: Scopes
    cfg: CFG
    live_in: dict
    live_out: dict
    defined_in: dict
    maybe_defined_in: dict
    defined_out: dict
    maybe_defined_out: dict
    blocks: dict = dataclasses.field(default_factory=dict)  # (statement, field) -> BlockFacts
    first_seen: dict = dataclasses.field(default_factory=dict)  # name -> order of first appearance

    # -- questions the passes ask -------------------------------------------------
    # Passes rewrite blocks after asking, so block facts are computed up front,
    # keyed by the statement that owns the block.
    def modified(self, statement, field: str = "body") -> frozenset:
        """Names modified anywhere in `statement`'s `field` block."""
        return self.blocks[statement, field].modified

    def live_after(self, statement) -> frozenset:
        """Names live on the edges that leave `statement` for the code after it."""
        result = set()
        for _, successor in self.cfg.exits(statement):
            result |= self.live_in[successor]
        return frozenset(result)

    def live_at_start(self, statement, field: str) -> frozenset:
        """Names live at the start of `statement`'s `field` block."""
        return self.blocks[statement, field].live_at_start

    def defined_before(self, statement) -> frozenset:
        entries = self.cfg.entries(statement)
        if not entries:
            return self.defined_in.get(statement, frozenset())
        return frozenset.intersection(*(self.defined_out[p] for p in entries))

    def maybe_defined_before(self, statement) -> frozenset:
        return frozenset().union(*(self.maybe_defined_out[p] for p in self.cfg.entries(statement)))

    def defined_after(self, statement) -> frozenset:
        exits = self.cfg.exits(statement)
        if not exits:
            return self.scopes.locals
        return frozenset.intersection(*(self.defined_out[node] for node, _ in exits))

    def is_local(self, name: str) -> bool:
        return name in self.scopes.locals


@dataclasses.dataclass(frozen=True)
class BlockFacts:
    modified: frozenset
    live_at_start: frozenset


def _block_facts(result: FunctionAnalysis):
    for statement in list(result.scopes.effects):
        if not isinstance(statement, (gast.If, gast.While, gast.For)):
            continue
        for field in ("body", "orelse"):
            block = getattr(statement, field)
            live = result.live_in[block[0]] if block else result.live_after(statement)
            result.blocks[statement, field] = BlockFacts(result.scopes.modified_in(block), live)


def is_live_in(name, live) -> bool:
    return is_live(name, live)


class Analysis:
    """The analyses of every function in a tree, looked up by statement."""

    def __init__(self):
        self.functions: dict = {}  # FunctionDef -> FunctionAnalysis
        self._owner: dict = {}  # statement -> FunctionAnalysis

    def of(self, statement) -> FunctionAnalysis:
        return self._owner[statement]

    def function(self, definition) -> FunctionAnalysis:
        return self.functions[definition]


def analyze_function(function: gast.FunctionDef, extra_tests=None) -> FunctionAnalysis:
    scopes = Scopes(function, extra_tests)
    cfg = CFG(function)
    live_in, live_out = liveness.compute(cfg, scopes.effects)
    defined = definedness.compute(cfg, scopes.effects, scopes.locals, scopes.parameters)
    result = FunctionAnalysis(scopes, cfg, live_in, live_out, *defined)
    _block_facts(result)
    result.first_seen = _first_appearances(function)
    return result


def _first_appearances(function) -> dict:
    """Composite name -> rank of its first appearance in `function`, in source order."""
    order = {}
    stack = [function]
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)):
            name = composite_name(node)
            if name is not None and name not in order:
                order[name] = len(order)
        children = []
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                children.extend(v for v in value if isinstance(v, gast.AST))
            elif isinstance(value, gast.AST):
                children.append(value)
        stack.extend(reversed(children))
    return order


def analyze(tree, extra_tests=None) -> Analysis:
    """Analyse every function definition in `tree`.

    `extra_tests` maps ``for`` loops to the test the breaks pass added to
    them (``not break_``), which reads names before every iteration.
    """
    analysis = Analysis()
    for node in gast.walk(tree):
        if isinstance(node, gast.FunctionDef):
            result = analyze_function(node, extra_tests)
            analysis.functions[node] = result
            for statement in result.scopes.effects:
                analysis._owner[statement] = result
    return analysis
