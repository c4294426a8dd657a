"""The ``autoloop`` command: ``dump``, ``run`` and ``graph`` a function of a file.

    autoloop dump model.py::sum_square          # the converted source
    autoloop run model.py::sum_square 10        # 285
    autoloop run model.py::sum_square 10 --explain --time
    autoloop graph model.py::sum_square --args '[10]' --format dot
    autoloop run model.py::sum_square 10 --backend jax    # compiled by XLA (the jax extra)
    autoloop run model.py::newton '[1, 2, 3, 4]' --processes 2   # 2 processes of JAX's distributed runtime
    autoloop --version

Arguments are JSON literals: numbers and nested lists become tensors with
TensorFlow's defaults (int -> int32, float -> float32), unless the function
has an ``input_signature``, which then decides their dtypes; strings, true,
false and null stay Python values. A function decorated with
``@autoloop.function(...)`` runs with its own options; ``--backend`` picks
where the graph runs (``numpy``, or ``jax``: ``graph`` then also prints the
program lowered to JAX). Bad input (missing
file, unknown function, syntax error, unsupported construct) and a program
that breaks a rule of graphs (a variable whose dtype or structure differs
between paths, ``.numpy()`` of a graph tensor, a Python list indexed by one)
print one line on stderr and exit with status 2; an error raised by the
user's function exits with status 1; Ctrl-C exits with status 130. Each such line ends with
the user's ``file:line`` when one is known. ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from autoloop.cli import output, report, targets
from autoloop.cli.targets import BadInput

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl-C


class _Version(argparse.Action):
    """``--version``: imports autoloop only when asked."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print autoloop's version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from autoloop import __version__
        print(f"autoloop {__version__}")
        parser.exit()


def _parser():
    parser = argparse.ArgumentParser(prog="autoloop", description="Convert, trace and run Python "
                                     "functions with loops and branches as graphs.")
    parser.add_argument("--version", action=_Version)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump", help="print the converted source of a function")
    dump.add_argument("target", metavar="FILE::FUNC")
    run = commands.add_parser("run", help="convert, trace and run a function on arguments")
    run.add_argument("target", metavar="FILE::FUNC")
    run.add_argument("args", nargs="*", metavar="ARG", help="JSON literals")
    run.add_argument("--explain", action="store_true",
                     help="say for each loop and branch whether it was staged or ran as Python, and which "
                          "loops a gradient went through")
    run.add_argument("--time", action="store_true",
                     help="print conversion, tracing and run time on stderr")
    run.add_argument("--processes", type=_process_count, default=None, metavar="N",
                     help="run on N local processes of JAX's distributed runtime (backend jax): tensor "
                          "arguments are split along axis 0 over all processes' devices, process 0 prints")
    run.add_argument("--distributed", action="store_true",
                     help="join JAX's distributed runtime as the environment says (a cluster launcher's "
                          "variables; --processes sets them) and run as one of its processes")
    graph = commands.add_parser("graph", help="print the traced graph of a function")
    graph.add_argument("target", metavar="FILE::FUNC")
    graph.add_argument("--args", default=None, metavar="JSON_LIST",
                       help="the arguments to trace with, as a JSON list")
    graph.add_argument("--lowered", action="store_true")
    graph.add_argument("--format", choices=("text", "dot", "svg", "png", "pdf"), default="text",
                       help="text (the default), dot, or drawn by Graphviz: svg, png, pdf (png and pdf are "
                            "written to stdout as bytes: redirect them to a file)")
    graph.add_argument("--explain", action="store_true",
                       help="also say which loops a gradient went through and what each saves per iteration")
    for sub in (run, graph):
        sub.add_argument("--backend", choices=("numpy", "jax"), default=None,
                         help="where the graph runs: numpy (the default) or jax (XLA; needs the jax extra); "
                              "default: the function's own")
    for sub in (dump, run, graph):
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help="show tracebacks")
    return parser


def _process_count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes, at least 1, got {text!r}")
    return int(text)


def main(argv=None) -> int:
    arguments = _parser().parse_args(argv)
    try:
        return COMMANDS[arguments.command](arguments)
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stdout = None
        return 0
    except KeyboardInterrupt as interrupt:
        if arguments.debug:
            raise
        report.say(report.interrupted_line(interrupt, running=getattr(interrupt, "autoloop_location", None)
                                           is not None))
        return EXIT_INTERRUPTED
    except BadInput as error:
        return _fail(arguments, error, EXIT_BAD_INPUT, describe_type=False)
    except (SyntaxError, NotImplementedError, FileNotFoundError, ImportError) as error:
        return _fail(arguments, error, EXIT_BAD_INPUT)
    except Exception as error:  # the user's function failed, or breaks a graph rule: still one line
        return _fail(arguments, error, EXIT_BAD_INPUT if _breaks_graph_rules(error) else EXIT_FAILED)


def _breaks_graph_rules(error) -> bool:
    """Whether `error` says the program cannot become a graph (exit status 2), not that it failed (1):
    its source cannot be found, or autoloop refused it while converting or tracing (a variable
    whose dtype or structure differs between paths, ``.numpy()`` of a graph tensor, ...)."""
    from autoloop.compiler.parse import SourceNotFoundError
    from autoloop.errors import FailedPreconditionError, InvalidArgumentError, stops_conversion
    if isinstance(error, SourceNotFoundError):
        return True
    return stops_conversion(error) and not isinstance(error, (InvalidArgumentError, FailedPreconditionError))


def _fail(arguments, error, code, describe_type=True) -> int:
    if arguments.debug:
        raise error
    report.say(f"error: {report.error_line(error, describe_type)}")
    return code


# -- arguments ---------------------------------------------------------------------------------

def _json_arguments(texts):
    values = []
    for text in texts:
        try:
            values.append(json.loads(text))
        except json.JSONDecodeError:
            raise BadInput(f"argument {text!r} is not a JSON literal") from None
    return values


def _call_arguments(function, values):
    """JSON values as call arguments: numbers and lists become tensors, unless an
    ``input_signature`` is there to convert them to its dtypes. Arguments that do not fit the
    parameters or the signature are a `BadInput` at the function's definition."""
    import autoloop
    if function.input_signature is None:
        values = [autoloop.constant(value) if isinstance(value, list) or
                  isinstance(value, (int, float)) and not isinstance(value, bool) else value for value in values]
    if values or function.input_signature is None:  # (no arguments: the signature alone is traced)
        try:
            function._bind(values, {})  # the call's own check, before anything is traced
        except (TypeError, ValueError) as error:
            raise BadInput(str(error), targets.definition(function)) from None
    return values


def _as_function(target, backend=None, jax_arrays=False):
    """The ``autoloop.Function`` to run: the file's own, or one made with the default options; on
    `backend` if given, returning JAX arrays if `jax_arrays`."""
    import autoloop
    if not isinstance(target, autoloop.Function):
        return autoloop.function(target, backend=backend or "numpy", jax_arrays=jax_arrays)
    if (backend is None or backend == target.backend) and jax_arrays == target.jax_arrays:
        return target
    return autoloop.Function(target.python_function, target.autograph, target.input_signature,
                             target.reduce_retracing, backend=backend or target.backend, jax_arrays=jax_arrays)


# -- commands --------------------------------------------------------------------------------

def dump(arguments) -> int:
    from autoloop.compiler.api import to_code
    print(to_code(targets.load(arguments.target)))
    return 0


def run(arguments) -> int:
    from autoloop.compiler.api import to_graph
    if arguments.processes is not None:
        return _launch(arguments)
    if arguments.distributed:
        return _run_distributed(arguments)
    function = _as_function(targets.load(arguments.target), arguments.backend)
    values = _call_arguments(function, _json_arguments(arguments.args))
    started = time.perf_counter()
    if function.autograph:
        to_graph(function)  # conversion is cached: tracing below reuses it
    converted = time.perf_counter()
    concrete = function.get_concrete_function(*values)
    concrete.compiled  # noqa: B018 - traced and compiled now
    decisions = concrete.decisions
    traced = time.perf_counter()
    result = function(*values)
    finished = time.perf_counter()
    print(output.format_result(result))
    if arguments.explain:
        print(output.format_explanation(_python_function(function), decisions, converted=function.autograph))
        gradients = output.format_gradients(concrete.graph, _python_function(function).__code__.co_filename)
        if gradients:
            print(gradients)
        batching = output.format_batching(concrete.graph, _python_function(function).__code__.co_filename,
                                          function.backend)
        if batching:
            print(batching)
    if arguments.time:
        conversion = f"{_ms(converted - started)}" if function.autograph else "none (autograph=False)"
        print(f"autoloop: conversion {conversion}, tracing {_ms(traced - converted)}, "
              f"run {_ms(finished - traced)}", file=sys.stderr)
    return 0


def _launch(arguments) -> int:
    """``run --processes N``: the same command as N local processes of one distributed run."""
    from autoloop.cli import processes
    if arguments.backend == "numpy":
        raise BadInput("--processes runs on JAX's distributed runtime, so it needs --backend jax (the default "
                       "with --processes), not --backend numpy")
    child = ["run", arguments.target, *arguments.args, "--distributed"]
    child += ["--debug"] if arguments.debug else []
    child += ["--time"] if arguments.time else []
    return processes.launch(child, arguments.processes, debug=arguments.debug)


def _run_distributed(arguments) -> int:
    """``run --distributed``: join the runtime, split the tensor arguments over every process's devices,
    run on XLA, gather the result; process 0 prints it."""
    from autoloop import distributed
    if arguments.backend == "numpy":
        raise BadInput("--distributed runs on JAX's distributed runtime, so it needs --backend jax, not "
                       "--backend numpy")
    if arguments.explain:
        raise BadInput("--explain describes one process's trace: run without --processes/--distributed to see it")
    distributed.initialize()
    # JAX arrays come back, which may span other processes' devices: `gather` fetches them whole.
    function = _as_function(targets.load(arguments.target), "jax", jax_arrays=True)
    values = _call_arguments(function, _json_arguments(arguments.args))
    started = time.perf_counter()
    result = distributed.gather(function(*_sharded(values, len(distributed.mesh().devices.flat))))
    finished = time.perf_counter()
    if distributed.process_index() == 0:
        print(output.format_result(result))
        if arguments.time:
            print(f"autoloop: {distributed.process_count()} processes, first call (tracing, compiling, "
                  f"running) {_ms(finished - started)}", file=sys.stderr)
    return 0


def _sharded(values, device_count: int) -> list:
    """Call arguments with each tensor whose axis 0 divides among the devices split over them; the rest (scalars,
    Python values, uneven batches) are given whole to every process."""
    import autoloop
    from autoloop import distributed

    def one(value):
        splits = (isinstance(value, autoloop.Tensor) and value.shape.rank
                  and value.shape[0] is not None and value.shape[0] % device_count == 0)
        return distributed.shard(value) if splits else value

    return [one(value) for value in values]


def _input_arrays(values) -> list:
    """The arrays a concrete function takes for call arguments (tensors and arrays)."""
    import numpy as np

    import autoloop
    return [leaf.numpy() if isinstance(leaf, autoloop.Tensor) else leaf for leaf in autoloop.nest.flatten(values)
            if isinstance(leaf, autoloop.Tensor | np.ndarray)]


def _python_function(function):
    inner = function.python_function
    return getattr(inner, "__func__", inner)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3g} ms"


def graph(arguments) -> int:
    function = _as_function(targets.load(arguments.target), arguments.backend)
    if arguments.args is None:
        required = targets.parameters(function)
        if required and function.input_signature is None:
            example = json.dumps([0] * len(required))
            raise BadInput(f"{arguments.target.rsplit('::', 1)[1]} takes {', '.join(required)}: a graph is "
                           f"traced for arguments, so pass them as a JSON list, for example --args '{example}'",
                           targets.definition(function))
        arguments.args = "[]"
    values = _json_arguments([arguments.args])[0]
    if not isinstance(values, list):
        raise BadInput("--args must be a JSON list")
    call_arguments = _call_arguments(function, values)
    concrete = function.get_concrete_function(*call_arguments)
    picture = _graph_picture(concrete.graph, arguments.format, arguments.lowered)
    if isinstance(picture, bytes):
        if sys.stdout.isatty():
            raise BadInput(f"--format {arguments.format} writes bytes, not text: redirect them to a file "
                           f"(> graph.{arguments.format})")
        sys.stdout.flush()
        sys.stdout.buffer.write(picture)
        return 0
    print(picture)
    if function.backend == "jax" and arguments.format == "text" and not arguments.lowered:
        print("lowered to JAX:")
        print(concrete.compiled.jaxpr(*_input_arrays(call_arguments)))
    if arguments.explain:
        print(output.format_gradients(concrete.graph) or "no loop was differentiated")
    return 0


def _graph_picture(graph, format: str, lowered: bool) -> str | bytes:
    """What ``graph`` prints: the text form, dot, or a drawing by Graphviz (svg text, png or pdf bytes;
    functional or lowered)."""
    from autoloop import pictures
    if format == "text":
        if lowered:
            from autoloop.execute.dataflow import lower
            return str(lower(graph))
        return str(graph)
    source = pictures.to_dot(graph, lowered=lowered)
    if format == "dot":
        return source
    try:
        return pictures.render(source, format)
    except pictures.GraphvizMissing as missing:
        raise BadInput(str(missing)) from None


COMMANDS = {"dump": dump, "run": run, "graph": graph}
