"""Find and parse the source of a function object.

Handles plain, nested and closure functions, methods, lambdas (also several
on one line) and functions defined in ``__main__`` or a notebook cell: the
source comes from `linecache`, which holds files and registered cells alike.

    >>> parsed = parse_function(some_function)
    >>> parsed.node            # a gast.FunctionDef (lambdas become one too)
    >>> parsed.source.user_line(parsed.node.body[0])   # line in the user's file

Lambdas are turned into an equivalent ``def`` so the rest of the compiler sees
one kind of function.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import linecache
import sys

import gast

from autoloop.compiler.context import SourceInfo


class SourceNotFoundError(ValueError):
    """The function's source code cannot be found, so it cannot be converted."""


@dataclasses.dataclass
class ParsedFunction:
    node: gast.FunctionDef
    source: SourceInfo
    is_lambda: bool


def parse_function(fn) -> ParsedFunction:
    """The gast ``FunctionDef`` of `fn` with where it came from."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        raise SourceNotFoundError(f"cannot convert {fn!r}: it is not a Python function")
    filename = code.co_filename
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        raise SourceNotFoundError(
            f"cannot convert {fn.__qualname__}: its source code is not available (defined in "
            f"{filename!r}); define it in a file or a notebook cell")
    if code.co_name == "<lambda>":
        return _parse_lambda(fn, code, filename, lines)
    return _parse_def(fn, code, filename, lines)


def _parse_def(fn, code, filename, lines) -> ParsedFunction:
    start = code.co_firstlineno - 1
    indent = _indentation(lines[start])
    for end in _candidate_ends(lines, start, indent):
        text = "".join(_dedent(lines[start:end], indent))
        try:
            tree = ast.parse(text, filename)
        except SyntaxError:
            continue
        node = tree.body[0] if tree.body else None
        if isinstance(node, ast.AsyncFunctionDef):
            raise NotImplementedError(
                f"{filename}:{code.co_firstlineno}: async function {fn.__name__} cannot be converted")
        if isinstance(node, ast.FunctionDef) and node.name == code.co_name:
            source = SourceInfo(filename, start, code.co_name)
            return ParsedFunction(gast.ast_to_gast(node), source, is_lambda=False)
        break
    raise SourceNotFoundError(
        f"cannot convert {fn.__qualname__}: the source at {filename}:{start + 1} does not hold its "
        f"definition (was the file changed after it was imported?)")


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _candidate_ends(lines, start, indent):
    """Line indices where the block starting at `start` may end, nearest first.

    A block ends before a code line indented no deeper than its first line;
    a parse failure (a string or bracket spanning that line) moves on to the
    next such line.
    """
    for index in range(start + 1, len(lines)):
        line = lines[index]
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and _indentation(line) <= indent:
            yield index
    yield len(lines)


def _dedent(lines, indent):
    return [line[indent:] if line[:indent].strip() == "" else line.lstrip() for line in lines]


# -- lambdas ------------------------------------------------------------------

_MODULE_TREES: dict[str, tuple[int, ast.Module]] = {}


def _module_tree(filename, lines):
    """The whole file parsed, cached while its text is unchanged."""
    key = hash(tuple(lines))
    cached = _MODULE_TREES.get(filename)
    if cached is not None and cached[0] == key:
        return cached[1]
    tree = ast.parse("".join(lines), filename)
    _MODULE_TREES[filename] = (key, tree)
    return tree


def _parse_lambda(fn, code, filename, lines) -> ParsedFunction:
    try:
        tree = _module_tree(filename, lines)
    except SyntaxError:
        raise SourceNotFoundError(f"cannot convert lambda at {filename}:{code.co_firstlineno}: "
                                  f"its file does not parse") from None
    line = code.co_firstlineno
    candidates = [node for node in ast.walk(tree)
                  if isinstance(node, ast.Lambda) and node.lineno == line]
    arg_names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                 + bool(code.co_flags & inspect.CO_VARARGS)
                                 + bool(code.co_flags & inspect.CO_VARKEYWORDS)]
    candidates = [node for node in candidates if _lambda_arg_names(node) == list(arg_names)]
    if len(candidates) > 1:
        candidates = _narrow_by_position(candidates, code, filename, lines)
    if len(candidates) != 1:
        found = "no lambda" if not candidates else f"{len(candidates)} indistinguishable lambdas"
        raise SourceNotFoundError(f"cannot convert lambda at {filename}:{line}: found {found} there")
    node = candidates[0]
    name = "lambda_"
    definition = ast.FunctionDef(name=name, args=node.args, body=[ast.Return(node.body)],
                                 decorator_list=[], returns=None, type_comment=None, type_params=[])
    ast.copy_location(definition, node)
    ast.copy_location(definition.body[0], node.body)
    definition = ast.fix_missing_locations(definition)
    return ParsedFunction(gast.ast_to_gast(definition), SourceInfo(filename, 0, name), is_lambda=True)


def _lambda_arg_names(node: ast.Lambda):
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args]
    names += [a.arg for a in args.kwonlyargs]
    if args.vararg:
        names.insert(len(args.posonlyargs + args.args), args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def _narrow_by_position(candidates, code, filename, lines):
    """Among lambdas on one line, the one whose code object is `code`."""
    if sys.version_info >= (3, 11):
        spans = [(col, end) for (lineno, end_line, col, end) in code.co_positions()
                 if lineno == end_line == code.co_firstlineno and col is not None and end is not None
                 and end > col]
        if spans:
            inside = [node for node in candidates if all(
                node.col_offset <= col and end <= node.end_col_offset for col, end in spans)]
            inside.sort(key=lambda node: node.end_col_offset - node.col_offset)
            return inside[:1]
    text = "".join(lines)
    matches = []
    for node in candidates:
        segment = ast.get_source_segment(text, node)
        compiled = compile(f"({segment})", filename, "eval")
        inner = [c for c in compiled.co_consts if inspect.iscode(c)]
        if inner and inner[0].co_code == code.co_code and inner[0].co_consts == code.co_consts:
            matches.append(node)
    return matches
