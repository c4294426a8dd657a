"""What every pass shares: the transformer base class and tree queries."""

from __future__ import annotations

import gast

from autoloop.compiler import templates
from autoloop.errors import raise_at

SCOPE_NODES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)
LOOP_NODES = (gast.While, gast.For)
TRY_NODES = (gast.Try, gast.TryStar) if hasattr(gast, "TryStar") else (gast.Try,)


class Pass(gast.NodeTransformer):
    """A transformer with the conversion context at hand.

    Subclasses implement ``visit_*`` methods; `transform` is the entry point
    the pipeline calls.
    """

    def __init__(self, ctx, analysis=None):
        self.ctx = ctx
        self.analysis = analysis

    @classmethod
    def transform(cls, tree, ctx, analysis=None):
        return cls(ctx, analysis).visit(tree)

    def visit(self, node):
        method = getattr(self, "visit_" + node.__class__.__name__, None)
        return self.generic_visit(node) if method is None else method(node)

    def generic_visit(self, node):
        # A leaner version of ast.NodeTransformer.generic_visit: this is the
        # compiler's inner loop, run over the whole tree by every pass.
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                if value and isinstance(value[0], gast.AST):
                    value[:] = self.visit_list(value)
            elif isinstance(value, gast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_list(self, items):
        result = []
        for item in items:
            new = self.visit(item) if isinstance(item, gast.AST) else item
            if isinstance(new, list):
                result.extend(new)
            elif new is not None:
                result.append(new)
        return result

    def runtime(self, attribute: str):
        """The expression ``al__.<attribute>``."""
        return gast.Attribute(value=templates.name(self.ctx.runtime_name), attr=attribute,
                              ctx=gast.Load())

    def fail(self, error_type, message, node):
        """Raise `error_type` with `message`, shown at `node`'s line in the user's file."""
        line = self.ctx.user_line(node)
        error = error_type(f"{message} ({self.ctx.source.filename}, line {line})")
        raise_at(error, (self.ctx.source.filename, line))


class StatementPass(Pass):
    """A pass over statements only: expressions are never entered."""

    BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")

    def visit_ClassDef(self, node):
        return node  # a class body is not converted (its methods are, when called)

    def generic_visit(self, node):
        for field in self.BLOCKS:
            block = getattr(node, field, None)
            if block and type(block) is list:
                block[:] = self.visit_list(block)
        return node


def walk_scope(node):
    """Every node below `node` that is in the same function scope."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in gast.iter_child_nodes(current):
            if not isinstance(child, SCOPE_NODES):
                stack.append(child)


def walk_loop(node):
    """Nodes below `node` whose ``break``/``continue`` belong to `node`'s loop."""
    stack = list(gast.iter_child_nodes(node))
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, SCOPE_NODES + LOOP_NODES):
            if isinstance(current, LOOP_NODES):  # its else belongs to us
                stack.extend(current.orelse)
            continue
        stack.extend(gast.iter_child_nodes(current))


def containing(statements, types, loops_are_boundaries=False) -> set:
    """ids of the nodes in `statements` (at any depth) that contain a node of `types`.

    Nested functions are not looked into; with `loops_are_boundaries`, nested
    loops are not either (their break/continue are theirs), except their
    ``else`` blocks. Computed in one walk, so passes can ask per statement.
    """
    found = set()

    def visit(node):
        has = isinstance(node, types)
        for child in gast.iter_child_nodes(node):
            if isinstance(child, SCOPE_NODES):
                continue
            if loops_are_boundaries and isinstance(child, LOOP_NODES):
                if any([visit(s) for s in child.orelse]):
                    found.add(id(child))
                    has = True
                continue
            has = visit(child) or has
        if has:
            found.add(id(node))
        return has
    for statement in statements:
        if not isinstance(statement, SCOPE_NODES):
            visit(statement)
    return found


def contains(statements, types, walker=walk_scope) -> bool:
    for statement in statements:
        if isinstance(statement, SCOPE_NODES):
            continue
        if isinstance(statement, types):
            return True
        for node in walker(statement):
            if isinstance(node, types):
                return True
    return False


_JUMP_WORDS = {gast.Return: "return", gast.Break: "break", gast.Continue: "continue"}


def jumps_in(statements, jump, found) -> list:
    """The `jump` statements in `statements` that `found` (from `containing`) counts."""
    return [node for statement in statements for node in walk_scope(statement)
            if isinstance(node, jump) and id(node) in found]


def guard(ctx, statements, jumps, retval=None) -> list:
    """`statements`, whose first is an ``if`` guarding what follows the statements `jumps`,
    recorded as such in ``ctx.guards`` (see `ConversionContext`)."""
    ctx.guards[statements[0]] = described_jumps(ctx, jumps) + ((retval,) if retval else ())
    return statements


def described_jumps(ctx, jumps) -> tuple:
    """``(word, lines)``: the user's `jumps` as messages name them, ``("break or return", (7, 9))``
    (a break that a ``return`` in a loop became is that return)."""
    words = sorted({"return" if node in ctx.return_breaks else _JUMP_WORDS[type(node)] for node in jumps})
    return " or ".join(words), tuple(sorted({ctx.user_line(node) for node in jumps}))


def lower_jumps(ctx, statements, jump, flag: str, found: set, enter_loop_else: bool) -> list:
    """`statements` with each `jump` statement (Break or Continue) replaced by ``flag = True``.

    Whatever would run after a jump is guarded by ``if not flag:``, so the
    block ends only through its normal end. `found` is what `containing`
    computed for `jump`: only statements in it are rewritten inside. With
    `enter_loop_else` false, a nested loop's ``else`` block is left as it is.
    """
    result = []
    for index, statement in enumerate(statements):
        if isinstance(statement, jump):
            result.extend(templates.located(templates.replace("flag = True", flag=flag), statement.lineno))
            return result
        if id(statement) not in found:
            result.append(statement)
            continue
        jumps_in_body = isinstance(statement, TRY_NODES) and any(id(s) in found for s in statement.body)
        jumps = jumps_in([statement], jump, found)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            skip = field == "orelse" and not enter_loop_else and isinstance(statement, LOOP_NODES)
            if block and not skip:
                block = lower_jumps(ctx, block, jump, flag, found, enter_loop_else)
                if field == "orelse" and jumps_in_body:  # a try's else runs only if its body ended
                    block = guard(ctx, templates.located(templates.replace(
                        "if not flag:\n    block", flag=flag, block=block), block[0].lineno),
                        jumps_in(statement.body, jump, found))
                setattr(statement, field, block)
        for item in getattr(statement, "handlers", None) or getattr(statement, "cases", None) or []:
            item.body = lower_jumps(ctx, item.body, jump, flag, found, enter_loop_else)
        result.append(statement)
        rest = statements[index + 1:]
        if rest:
            guarded = lower_jumps(ctx, rest, jump, flag, found, enter_loop_else)
            result.extend(guard(ctx, templates.located(templates.replace(
                "if not flag:\n    rest", flag=flag, rest=guarded), rest[0].lineno), jumps))
        return result
    return result
