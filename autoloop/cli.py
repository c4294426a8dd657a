"""The ``autoloop`` command: ``dump``, ``run`` and ``graph`` a function of a file.

    autoloop dump model.py::sum_square          # the converted source
    autoloop run model.py::sum_square 10        # 285
    autoloop run model.py::sum_square 10 --explain
    autoloop graph model.py::sum_square --args '[10]' --format dot

Arguments are JSON literals; numbers and nested lists become tensors. Bad
input (missing file, unknown function, syntax error, unsupported construct)
prints one line on stderr and exits with status 2; an error raised by the
user's function exits with status 1. ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import linecache
import os
import sys

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


class BadInput(Exception):
    """The command line names something that cannot be used."""


def _parser():
    parser = argparse.ArgumentParser(prog="autoloop", description="Convert, trace and run Python "
                                     "functions with loops and branches as graphs.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump", help="print the converted source of a function")
    dump.add_argument("target", metavar="FILE::FUNC")
    run = commands.add_parser("run", help="convert, trace and run a function on arguments")
    run.add_argument("target", metavar="FILE::FUNC")
    run.add_argument("args", nargs="*", metavar="ARG", help="JSON literals")
    run.add_argument("--explain", action="store_true",
                     help="say for each loop and branch whether it was staged or ran as Python")
    graph = commands.add_parser("graph", help="print the traced graph of a function")
    graph.add_argument("target", metavar="FILE::FUNC")
    graph.add_argument("--args", default="[]", metavar="JSON_LIST")
    graph.add_argument("--lowered", action="store_true")
    graph.add_argument("--format", choices=("text", "dot", "svg"), default="text")
    for sub in (dump, run, graph):
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help="show tracebacks")
    return parser


def main(argv=None) -> int:
    arguments = _parser().parse_args(argv)
    try:
        return COMMANDS[arguments.command](arguments)
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stdout = None
        return 0
    except BadInput as error:
        return _fail(arguments, error, EXIT_BAD_INPUT)
    except (SyntaxError, NotImplementedError, FileNotFoundError, ImportError) as error:
        return _fail(arguments, error, EXIT_BAD_INPUT)
    except Exception as error:  # the user's function failed: still one line
        from autoloop.compiler.parse import SourceNotFoundError
        code = EXIT_BAD_INPUT if isinstance(error, SourceNotFoundError) else EXIT_FAILED
        return _fail(arguments, error, code)


def _fail(arguments, error, code) -> int:
    if arguments.debug:
        raise error
    if isinstance(error, SyntaxError) and error.filename:
        message = f"syntax error in {error.filename}, line {error.lineno}: {error.msg}"
    else:
        message = str(error).splitlines()[0] if str(error) else ""
        if not isinstance(error, BadInput):
            message = f"{type(error).__name__}: {message}"
    print(f"autoloop: error: {message}", file=sys.stderr)
    return code


# -- loading ---------------------------------------------------------------------------------

def load_function(target: str):
    """The function ``FUNC`` (``name`` or ``Class.method``) of ``FILE::FUNC``."""
    if "::" not in target:
        raise BadInput(f"expected FILE::FUNC, got {target!r}")
    path, name = target.rsplit("::", 1)
    if not os.path.isfile(path):
        raise BadInput(f"no such file: {path}")
    module_name = "__autoloop_cli__" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, os.path.abspath(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    linecache.checkcache(os.path.abspath(path))
    spec.loader.exec_module(module)
    value = module
    for part in name.split("."):
        if not hasattr(value, part):
            raise BadInput(f"{path} has no function {name!r}")
        value = getattr(value, part)
    function = getattr(value, "python_function", value)  # an @autoloop.function
    if not callable(function):
        raise BadInput(f"{name!r} in {path} is not a function")
    return function


def _json_arguments(texts):
    values = []
    for text in texts:
        try:
            values.append(json.loads(text))
        except json.JSONDecodeError:
            raise BadInput(f"argument {text!r} is not a JSON literal") from None
    return values


def _as_tensor_arguments(values):
    import autoloop
    result = []
    for value in values:
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        result.append(autoloop.constant(value) if is_number or isinstance(value, list) else value)
    return result


# -- commands --------------------------------------------------------------------------------

def dump(arguments) -> int:
    from autoloop.compiler.api import to_code
    print(to_code(load_function(arguments.target)))
    return 0


def run(arguments) -> int:
    import autoloop
    function = load_function(arguments.target)
    values = _as_tensor_arguments(_json_arguments(arguments.args))
    concrete = autoloop.function(function).get_concrete_function(*values)
    print(format_result(concrete(*values)))
    if arguments.explain:
        print(format_explanation(function, concrete.decisions))
    return 0


def graph(arguments) -> int:
    import autoloop
    if arguments.lowered:
        print("autoloop: the lowered (Enter/Merge/Switch/NextIteration/Exit) form is not available yet",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if arguments.format == "svg":
        print("autoloop: svg output is not available yet; use --format dot and Graphviz", file=sys.stderr)
        return EXIT_BAD_INPUT
    function = load_function(arguments.target)
    values = _json_arguments([arguments.args])[0]
    if not isinstance(values, list):
        raise BadInput("--args must be a JSON list")
    concrete = autoloop.function(function).get_concrete_function(*_as_tensor_arguments(values))
    print(str(concrete.graph) if arguments.format == "text" else format_dot(concrete.graph))
    return 0


COMMANDS = {"dump": dump, "run": run, "graph": graph}


# -- output ----------------------------------------------------------------------------------

def format_result(result) -> str:
    import numpy as np

    import autoloop
    if isinstance(result, autoloop.Tensor):
        return str(np.asarray(result.numpy()))
    if isinstance(result, (list, tuple)):
        inner = ", ".join(format_result(item) for item in result)
        return f"({inner})" if isinstance(result, tuple) else f"[{inner}]"
    if isinstance(result, dict):
        return "{" + ", ".join(f"{k!r}: {format_result(v)}" for k, v in result.items()) + "}"
    return str(result)


def format_explanation(function, decisions) -> str:
    """One line per loop and branch of the user's function (and of functions it called)."""
    from autoloop.compiler import parse
    filename = function.__code__.co_filename
    seen = {}
    for decision in decisions:
        key = decision.location
        verdict = "staged as graph control flow" if decision.staged else "ran as Python"
        seen.setdefault(key, (decision.statement, set()))[1].add(f"{verdict} ({decision.reason})")
    for line, statement in _control_statements(parse, function):
        seen.setdefault((filename, line), (statement, {"not reached while tracing"}))
    lines = []
    for (file, line), (statement, verdicts) in sorted(seen.items(), key=lambda item: (item[0][0] != filename, item[0])):
        where = f"line {line}" if file == filename else f"{os.path.basename(file)}:{line}"
        source = linecache.getline(file, line).strip()
        lines.append(f"{where}: {statement} `{source}`: {'; '.join(sorted(verdicts))}")
    return "\n".join(lines) if lines else "no loops or branches"


def _control_statements(parse, function):
    import gast
    parsed = parse.parse_function(function)
    kinds = {gast.While: "while loop", gast.For: "for loop", gast.If: "if statement"}
    for node in gast.walk(parsed.node):
        kind = kinds.get(type(node))
        if kind is not None:
            yield parsed.source.user_line(node), kind


def format_dot(graph) -> str:
    """The graph as a Graphviz ``digraph`` (sub-graphs as clusters)."""
    lines = [f'digraph "{graph.name}" {{', "  node [shape=box, fontname=monospace];"]
    counter = [0]
    numbers: dict = {}

    def number(node):
        return numbers.setdefault(id(node), f"n{len(numbers)}")

    def emit(current, indent):
        for node in current.nodes:
            lines.append(f'{indent}"{number(node)}" [label="{node.name}\\n{node.op}"];')
            for value in node.inputs:
                lines.append(f'{indent}"{number(value.node)}" -> "{number(node)}";')
            for key, sub in node.attrs.items():
                if hasattr(sub, "nodes") and hasattr(sub, "inputs"):
                    counter[0] += 1
                    lines.append(f'{indent}subgraph "cluster_{counter[0]}" {{')
                    lines.append(f'{indent}  label="{node.name}.{key}";')
                    emit(sub, indent + "  ")
                    lines.append(f"{indent}}}")
    emit(graph, "  ")
    lines.append("}")
    return "\n".join(lines)
