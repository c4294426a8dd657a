"""Converted trees to source text and code objects, with a map back to the user's lines.

`emit(node, ctx, free_names)` unparses the converted function with
`ast.unparse`, compiles it inside a factory function whose parameters are
the runtime name and the original closure names (so the converted function
refers to them as free variables, and can be given the original cells), and
registers the text in `linecache` under a ``<autoloop ...>`` filename with a
generated line -> user ``(file, line)`` map, so tracebacks show the
generated line and frames can be translated to the user's.

    >>> source_map.lookup("<autoloop f at /src/model.py:12>", 5)
    ('/src/model.py', 14)
"""

from __future__ import annotations

import ast
import dataclasses
import linecache
import weakref

import gast

from autoloop import source_map

FACTORY = "__autoloop_factory__"


@dataclasses.dataclass
class Emitted:
    source: str  # the converted function, as readable Python
    filename: str  # where its code says it lives (registered in linecache)
    code: object  # the code object of the converted function
    line_map: dict  # generated line -> (user file, user line)


_AST_CLASSES: dict = {}


def to_ast(node):
    """A gast tree as a standard `ast` tree (a faster `gast.gast_to_ast` for Python >= 3.10).

    The two differ only where gast made things uniform: parameters are
    ``Name``s (``ast.arg`` in ast) and an except handler's name is a
    ``Name`` (a string in ast).
    """
    if type(node) is list:
        return [to_ast(item) for item in node]
    if not isinstance(node, gast.AST):
        return node
    kind = type(node)
    if kind is gast.arguments:
        return ast.arguments(
            posonlyargs=[_parameter(p) for p in node.posonlyargs], args=[_parameter(p) for p in node.args],
            vararg=_parameter(node.vararg), kwonlyargs=[_parameter(p) for p in node.kwonlyargs],
            kw_defaults=to_ast(node.kw_defaults), kwarg=_parameter(node.kwarg), defaults=to_ast(node.defaults))
    cls = _AST_CLASSES.get(kind)
    if cls is None:
        cls = _AST_CLASSES[kind] = getattr(ast, kind.__name__)
    new = cls()
    fields = cls._fields
    for field in fields:
        value = getattr(node, field, None)
        if type(value) is list:
            setattr(new, field, [to_ast(item) for item in value])
        elif isinstance(value, gast.AST):
            setattr(new, field, to_ast(value))
        else:
            setattr(new, field, value)
    if kind is gast.ExceptHandler and node.name is not None:
        new.name = node.name.id
    if isinstance(node, gast.stmt):  # only statement lines are used (by the line map)
        new.lineno = getattr(node, "lineno", None)
    return new


def _parameter(name):
    if name is None:
        return None
    return ast.arg(arg=name.id, annotation=to_ast(name.annotation),
                   type_comment=getattr(name, "type_comment", None))


def emit(node: gast.FunctionDef, ctx, free_names) -> Emitted:
    tree = to_ast(node)
    unparser = _MappingUnparser(ctx.user_line(node) - ctx.source.line_offset)
    source = unparser.visit(tree)
    user_file, user_name = ctx.source.filename, ctx.source.function_name
    filename = f"<autoloop {user_name} at {user_file}:{ctx.user_line(node)}>"
    parameters = ", ".join([ctx.runtime_name, *free_names])
    indented = "".join("    " + line if line.strip() else line
                       for line in source.splitlines(keepends=True))
    # The factory is only compiled, never called. Its ``def`` would make the function's own name a
    # local of the factory, so a recursive call would read a closure cell the original function
    # never had: declared global, the name is looked up where the original looks it up.
    own_name = "" if node.name in free_names else f"    global {node.name}\n"
    text = f"def {FACTORY}({parameters}):\n{own_name}{indented}\n    return {node.name}\n"
    line_map, previous = {}, (user_file, ctx.user_line(node))
    first = 2 if own_name else 1  # line n of `source` is line n + first of `text`
    for line in range(1, source.count("\n") + 2):
        parsed_line = unparser.line_map.get(line)
        if parsed_line is not None:
            previous = (user_file, parsed_line + ctx.source.line_offset)
        line_map[line + first] = previous
    code = compile(text, filename, "exec")
    factory = next(c for c in code.co_consts if getattr(c, "co_name", None) == FACTORY)
    function_code = next(c for c in factory.co_consts if getattr(c, "co_name", None) == node.name)
    entry = linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    kept = source_map.register(filename, line_map, ctx.generated)
    weakref.finalize(function_code, _forget, filename, entry, kept)  # no growth per function converted
    return Emitted(source, filename, function_code, line_map)


def _forget(filename, entry, kept):
    """Drop what `emit` registered for code that is gone (unless a newer conversion replaced it)."""
    if linecache.cache.get(filename) is entry:
        del linecache.cache[filename]
    source_map.forget(filename, kept)


class _MappingUnparser(ast._Unparser):
    """`ast.unparse` that also records, for each line it starts, the statement's line.

    Every line begins with `fill`; it is mapped to the innermost statement
    being written (generated statements carry the line of the user
    statement they came from).
    """

    def __init__(self, first_line=1, **options):
        # ast.unparse makes a fresh unparser of our type for f-string parts, with options
        super().__init__(**options)
        self.current_line = 1
        self.statement_lines = [first_line]
        self.line_map = {}

    # Lines are counted where unparse starts them (maybe_newline) and where a
    # docstring may span several; no other text holds a newline.
    def maybe_newline(self):
        if self._source:
            self._source.append("\n")
            self.current_line += 1

    def _write_docstring(self, node):
        start = len(self._source)
        super()._write_docstring(node)
        self.current_line += sum(piece.count("\n") for piece in self._source[start:])

    def fill(self, text=""):
        self.maybe_newline()
        self.line_map[self.current_line] = self.statement_lines[-1]
        self.write("    " * self._indent + text)

    def traverse(self, node):
        if isinstance(node, ast.stmt):
            line = getattr(node, "lineno", None)
            self.statement_lines.append(line if line is not None else self.statement_lines[-1])
            super().traverse(node)
            self.statement_lines.pop()
        else:
            super().traverse(node)
