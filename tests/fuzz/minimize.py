"""Shrink a failing program to a small one that fails the same way.

Greedy reduction over the syntax tree: delete a statement, replace a compound
statement by one of its blocks, drop an ``else``, replace an expression by
one of its operands; keep each change after which the program still fails
in the same mode with the same class (and, for errors, the same
signature). Stops at a fixpoint or after `max_runs` trials.

    >>> small = minimize(program, "tensor")     # source text
"""

from __future__ import annotations

import ast

from tests.fuzz.runner import MODES, OK, WRONG, run_program

_BLOCKS = ("body", "orelse", "finalbody")


def minimize(program, mode: str, max_runs: int = 300) -> str:
    """The smallest source found that fails like `program` does in `mode`."""
    modes = MODES[:MODES.index(mode) + 1] if mode in MODES else (mode,)
    original = run_program(program, modes)
    target = original.modes[-1]
    if target.kind == OK:
        return program.source
    python_did = _what_python_did(original.expected)
    runs = [0]

    def still_fails(source) -> bool:
        runs[0] += 1
        try:
            compile(source, "<candidate>", "exec")
        except SyntaxError:
            return False
        outcome = run_program(program, modes, source=source, timeout_s=2)
        if _what_python_did(outcome.expected) != python_did:
            return False  # a different program (or an endless loop): not the same failure
        found = outcome.modes[-1]
        return found.kind == target.kind and (found.kind == WRONG or found.signature == target.signature)

    source = ast.unparse(ast.parse(program.source))
    for reductions in (_statement_reductions, _expression_reductions):
        changed = True
        while changed and runs[0] < max_runs:
            changed = False
            position = 0
            while runs[0] < max_runs:
                candidates = reductions(source, position)
                if candidates is None:
                    break
                for candidate in candidates:
                    if candidate != source and still_fails(candidate):
                        source, changed = candidate, True
                        break
                else:
                    position += 1
    return source + "\n"


def _what_python_did(result):
    """Python's outcome up to its value: returned, or the exception type it raised."""
    return "returned" if result.error is None else type(result.error)


def _statement_reductions(source, position):
    """Variants of `source` with its `position`-th statement reduced, or None past the end."""
    slots = _statement_slots(ast.parse(source))
    if position >= len(slots):
        return None
    variants = []
    for change in range(5):
        tree = ast.parse(source)
        parent, field, index = _statement_slots(tree)[position]
        block = getattr(parent, field)
        statement = block[index]
        if _is_counter_step(statement):
            break  # a while loop's counter step: without it the loop never ends
        if change == 0:
            replacement = []
        elif change in (1, 2, 3):
            inner = getattr(statement, _BLOCKS[change - 1], None)
            if not inner or isinstance(statement, ast.FunctionDef):
                continue
            replacement = inner
        else:
            if not getattr(statement, "orelse", None):
                continue
            statement.orelse = []
            replacement = [statement]
        block[index:index + 1] = replacement
        if not block:
            block.append(ast.Pass())
        variants.append(ast.unparse(tree))
    return variants


def _is_counter_step(statement) -> bool:
    """``k3 += 1``: the generator bounds every while loop with such a counter."""
    return (isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name)
            and statement.target.id[:1] == "k" and statement.target.id[1:].isdigit())


def _statement_slots(tree):
    """``(parent, field, index)`` for every statement inside a function, outermost first."""
    slots = []
    stack = [definition for definition in tree.body if isinstance(definition, ast.FunctionDef)]
    while stack:
        parent = stack.pop(0)
        for field in _BLOCKS:
            block = getattr(parent, field, None)
            if not isinstance(block, list):
                continue
            for index, statement in enumerate(block):
                slots.append((parent, field, index))
                stack.append(statement)
        for handler in getattr(parent, "handlers", ()):
            stack.append(handler)
    return slots


def _expression_reductions(source, position):
    """Variants of `source` with its `position`-th expression replaced by a part of it."""
    count = len(_expressions(ast.parse(source)))
    if position >= count:
        return None
    variants = []
    for choice in range(3):
        tree = ast.parse(source)
        holder, field, index, node = _expressions(tree)[position]
        parts = _parts(node)
        if choice >= len(parts):
            break
        if index is None:
            setattr(holder, field, parts[choice])
        else:
            getattr(holder, field)[index] = parts[choice]
        variants.append(ast.unparse(tree))
    return variants


def _parts(node):
    """Simpler expressions that could stand for `node`."""
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.BoolOp):
        return list(node.values[:2])
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Compare) and len(node.ops) > 1:
        return [ast.Compare(left=node.left, ops=node.ops[:1], comparators=node.comparators[:1])]
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("abs", "helper"):
        return list(node.args)
    return []


def _expressions(tree):
    """``(holder, field, index, node)`` for every reducible expression in a function."""
    found = []
    while_tests = {id(node.test) for node in ast.walk(tree) if isinstance(node, ast.While)}
    for holder in ast.walk(tree):
        for field, value in ast.iter_fields(holder):
            if isinstance(holder, ast.While) and field == "test":
                continue  # keep the counter bound ``k1 < 3 and (...)``
            if id(holder) in while_tests and field == "values":
                value = value[1:]
            items = value if isinstance(value, list) else [value]
            for index, item in enumerate(items):
                if isinstance(item, ast.expr) and _parts(item):
                    position = index + 1 if id(holder) in while_tests else index
                    found.append((holder, field, position if isinstance(value, list) else None, item))
    return found
