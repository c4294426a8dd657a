"""Code generation from small templates written as Python text.

A template is ordinary Python source whose placeholder names are replaced by
AST nodes, so a pass reads like the code it produces::

    replace('''
        def loop_body(loop_vars):
            body
            return results
        ''', loop_body='loop_body', loop_vars=['i', 'n'], body=statements,
        results=gast.Tuple(...))

A replacement may be
- a string: an identifier (a name, a function's name, a parameter);
- an expression node: placed where the placeholder name was;
- a list of statements: spliced where the placeholder stands as a statement;
- a list of strings or nodes: several parameters, or a tuple in an
  expression position.

Templates are parsed once and cloned on every use.
"""

from __future__ import annotations

import ast
import functools
import textwrap

import gast

_LEAF_TYPES = (str, int, float, complex, bytes, bool, type(None), type(Ellipsis))


def clone(node):
    """A deep copy of an AST, much faster than `copy.deepcopy`."""
    if isinstance(node, list):
        return [clone(item) for item in node]
    if not isinstance(node, gast.AST):
        return node
    new = node.__class__()
    for field in node._fields:
        value = getattr(node, field, None)
        setattr(new, field, clone(value) if isinstance(value, (list, gast.AST)) else value)
    for attribute in node._attributes:
        if hasattr(node, attribute):
            setattr(new, attribute, getattr(node, attribute))
    return new


@functools.lru_cache(maxsize=None)
def _parsed(template: str):
    tree = gast.ast_to_gast(ast.parse(textwrap.dedent(template).strip()))
    for node in gast.walk(tree):
        for attribute in node._attributes:  # a template's own lines mean nothing in the user's file:
            if hasattr(node, attribute):     # `located` gives generated statements the user's line
                delattr(node, attribute)
    return tree


def replace(template: str, **replacements) -> list:
    """The statements of `template` with placeholders replaced."""
    tree = clone(_parsed(template).body)
    return _Replacer(replacements).visit_block(tree)


def replace_expression(template: str, **replacements):
    """The single expression `template`, with placeholders replaced."""
    statement = replace(template, **replacements)[0]
    return statement.value


def name(identifier: str, ctx=None):
    return gast.Name(id=identifier, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def set_ctx(node, ctx):
    """`node` (a target) with its store/load context set throughout its top."""
    if isinstance(node, (gast.Name, gast.Attribute, gast.Subscript, gast.Starred)):
        node.ctx = ctx
    if isinstance(node, (gast.Tuple, gast.List)):
        node.ctx = ctx
        for element in node.elts:
            set_ctx(element, ctx)
    if isinstance(node, gast.Starred):
        set_ctx(node.value, ctx)
    return node


def located(statements, lineno):
    """Give every generated node in `statements` the line `lineno`.

    Nodes that already have a line (the user's code spliced into a
    template) keep theirs, and so do the nodes below them.
    """
    stack = list(statements)
    while stack:
        node = stack.pop()
        if getattr(node, "lineno", None) is not None:
            continue
        if isinstance(node, (gast.stmt, gast.expr)):
            node.lineno = lineno
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, gast.AST))
            elif isinstance(value, gast.AST):
                stack.append(value)
    return statements


class _Replacer(gast.NodeTransformer):
    def __init__(self, replacements):
        self.replacements = replacements
        self.used = set()

    def _take(self, key):
        value = self.replacements[key]
        if key in self.used and isinstance(value, (gast.AST, list)):
            return clone(value)
        self.used.add(key)
        return value

    def visit_block(self, statements):
        result = []
        for statement in statements:
            if (isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Name)
                    and statement.value.id in self.replacements):
                value = self._take(statement.value.id)
                if isinstance(value, list):
                    result.extend(value)
                    continue
            new = self.visit(statement)
            result.extend(new if isinstance(new, list) else [new])
        return result

    def generic_visit(self, node):
        # Visits only the template's own nodes: replacement values spliced in
        # are returned as they are, never searched for placeholders.
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                if value and isinstance(value[0], gast.stmt):
                    setattr(node, field, self.visit_block(value))
                else:
                    setattr(node, field, [self.visit(item) if isinstance(item, gast.AST) else item
                                          for item in value])
            elif isinstance(value, gast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_FunctionDef(self, node):
        if node.name in self.replacements:
            node.name = self._take(node.name)
        node.args.args = self._expand_parameters(node.args.args)
        return self.generic_visit(node)

    def _expand_parameters(self, parameters):
        result = []
        for parameter in parameters:
            if parameter.id in self.replacements:
                value = self._take(parameter.id)
                values = value if isinstance(value, (list, tuple)) else [value]
                result.extend(name(v, gast.Param()) if isinstance(v, str) else v for v in values)
            else:
                result.append(parameter)
        return result

    def visit_Name(self, node):
        if node.id not in self.replacements:
            return node
        value = self._take(node.id)
        if isinstance(value, str):
            node.id = value
            return node
        if isinstance(value, (list, tuple)):
            value = gast.Tuple(elts=[name(v) if isinstance(v, str) else v for v in value],
                               ctx=gast.Load())
        return set_ctx(value, node.ctx) if not isinstance(node.ctx, gast.Load) else value

    def visit_Global(self, node):
        node.names = [self._take(n) if n in self.replacements else n for n in node.names]
        return node

    visit_Nonlocal = visit_Global
