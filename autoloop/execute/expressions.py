"""Python expressions of generated code: templates filled with nested expressions, and where each op sits.

The code generator writes a value that is used once inside the expression
that uses it (``(lv2 + (lv1 * lv1))``) instead of binding it to a name. Two
things make that safe, and this module provides both:

- `placeholders(template)` says where an op's template may take a nested
  expression: a placeholder that appears once and is always evaluated
  (``({0} * {0})`` would evaluate a nested ``{0}`` twice; ``({1} if {0}
  else {2})`` would skip ``{1}`` or ``{2}``), and the order in which Python
  evaluates those placeholders, so the generator can keep every op running
  in graph order (the order in which errors surface).
- `fill(template, args, node)` substitutes the arguments and records the
  column span of every op written into the text (`Expr.spans`), so a
  failure on a line holding several ops is traced back to the one that
  failed (`locate`, from the failing instruction's columns, Python 3.11+).

    >>> inner = fill("({0} * {1})", ["lv1", "lv1"], mul_node)
    >>> outer = fill("({0} + {1})", ["lv2", inner], add_node)
    >>> outer.text, [(start, end) for start, end, _ in outer.spans]
    ('(lv2 + (lv1 * lv1))', [(7, 18), (0, 19)])
"""

from __future__ import annotations

import ast
import re
import string
from typing import NamedTuple

_FORMATTER = string.Formatter()


class Expr(NamedTuple):
    """Generated expression text, with the ops written in it and the named values it reads.

    `spans` holds ``(start, end, node)`` for every op in `text`, inner ops
    first; `reads` the values the expression reads by name, one entry per
    graph edge (the generator counts uses with them to release names).
    """

    text: str
    spans: tuple = ()
    reads: tuple = ()

    def __str__(self):
        return self.text


class Template:
    """A template split once into literal text and fields, for filling many times."""

    __slots__ = ("text", "parts", "_nestable")

    def __init__(self, text: str):
        self.text = text
        self.parts = [(literal, None if field is None else int(field))
                      for literal, field, _, _ in _FORMATTER.parse(text)]
        self._nestable = None

    def nestable(self) -> tuple[int, ...]:
        """`placeholders(self.text)`, worked out once."""
        if self._nestable is None:
            self._nestable = placeholders(self.text)
        return self._nestable

    def fill(self, args, node=None, reads=()) -> Expr:
        """The text with `args` (names or Exprs) in its fields; see `fill`."""
        pieces, spans, position = [], [], 0
        for literal, field in self.parts:
            pieces.append(literal)
            position += len(literal)
            if field is None:
                continue
            arg = args[field]
            if isinstance(arg, Expr):
                spans.extend((start + position, end + position, inner) for start, end, inner in arg.spans)
                arg = arg.text
            pieces.append(arg)
            position += len(arg)
        text = "".join(pieces)
        if node is not None:
            spans.append((0, len(text), node))
        return Expr(text, tuple(spans), tuple(reads))


def fill(template: str, args, node=None, reads=()) -> Expr:
    """`template` (``str.format`` fields ``{0}``, ``{1}``...) filled with `args` (names or Exprs).

    The spans of Expr arguments move to where they land; `node`, when
    given, spans the whole text (it is the op `template` writes).
    """
    return Template(template).fill(args, node, reads)


def locate(spans, start: int, end: int):
    """The op of the smallest span holding columns ``start..end`` (innermost first on ties), or None."""
    best = None
    for span_start, span_end, node in spans:
        if span_start <= start and end <= span_end and (best is None or span_end - span_start < best[0]):
            best = (span_end - span_start, node)
    return best[1] if best is not None else None


# -- where a template may take nested expressions -----------------------------------------------
def placeholders(template: str) -> tuple[int, ...]:
    """The placeholders of `template` that may hold a nested expression, in Python's evaluation order.

    A placeholder qualifies when it appears exactly once and Python always
    evaluates it: not in the branches of a conditional expression, after
    the first operand of ``and``/``or`` or of a chained comparison, nor
    inside anything this analysis does not know (lambdas, comprehensions,
    dicts). ``({1} if {0} else {2})`` gives ``(0,)``.

        >>> placeholders("({0} + {1})"), placeholders("({0} * {0})")
        ((0, 1), ())
    """
    fields = [int(field) for _, field, _, _ in _FORMATTER.parse(template) if field is not None]
    counts = {field: fields.count(field) for field in fields}
    if not _MAY_REORDER.search(template) and len(_COMPARISON.findall(template)) < 2:
        # Python evaluates such a template left to right, each part once: no need to parse it
        # (parsing every template would make compiling a graph several times slower).
        return tuple(field for field in dict.fromkeys(fields) if counts[field] == 1)
    names = {field: f"_placeholder_{field}_" for field in counts}
    source = template.format(*[names.get(i, "None") for i in range(max(counts, default=-1) + 1)])
    order: list[int] = []
    fields_by_name = {name: field for field, name in names.items()}
    _Evaluation(order, fields_by_name).visit(ast.parse(source, mode="eval").body)
    return tuple(field for field in order if counts[field] == 1)


# What can make Python skip or postpone a part of an expression, or evaluate it out of text order.
_MAY_REORDER = re.compile(r"\b(if|else|and|or|lambda|for|async|await|yield)\b|:=|\{\{|\}\}")
_COMPARISON = re.compile(r"<=|>=|==|!=|<|>|\b(?:in|is)\b")  # two of them may chain (a < b < c)


class _Evaluation:
    """Collects placeholder names in the order Python evaluates them, skipping conditional ones."""

    # Node kinds whose children Python evaluates in field order, each exactly once.
    _IN_ORDER = (ast.BinOp, ast.UnaryOp, ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Slice,
                 ast.Tuple, ast.List, ast.Starred)

    def __init__(self, order, fields_by_name):
        self.order = order
        self.fields_by_name = fields_by_name

    def visit(self, node, conditional: bool = False) -> None:
        if isinstance(node, ast.Name):
            if not conditional and node.id in self.fields_by_name:
                self.order.append(self.fields_by_name[node.id])
        elif isinstance(node, ast.IfExp):
            self.visit(node.test, conditional)
            self.visit(node.body, True)
            self.visit(node.orelse, True)
        elif isinstance(node, ast.BoolOp):
            self.visit(node.values[0], conditional)
            for value in node.values[1:]:
                self.visit(value, True)
        elif isinstance(node, ast.Compare):
            self.visit(node.left, conditional)
            for position, value in enumerate(node.comparators):
                self.visit(value, conditional or position > 0)
        elif isinstance(node, self._IN_ORDER):
            for child in ast.iter_child_nodes(node):
                self.visit(child, conditional)
        elif not isinstance(node, ast.Constant | ast.expr_context | ast.operator | ast.unaryop):
            for child in ast.iter_child_nodes(node):  # unknown evaluation order: nothing nests here
                self.visit(child, True)
