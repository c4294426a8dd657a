"""Run a generated program as plain Python and converted, and classify the outcome.

Each program runs once as plain Python (the oracle) and then converted in
the runs of one *mode* (`RUNS`):

- ``numpy``: `eager` (the converted function called outside any trace, on
  Python values), `python` (``@autoloop.function`` on Python values: every
  condition is a Python value, traced), `mixed` (some arguments tensors) and
  `tensor` (every argument a tensor, so most conditions are graph control
  flow), on the numpy executor;
- ``interpreter``: the `tensor` run's trace run by the reference interpreter
  (`autoloop.execute.interpreter`) instead of the compiled executor;
- ``jax``: the `mixed` and `tensor` runs with ``backend="jax"``;
- ``session``: the function called while a `compat.v1` graph is built, on
  placeholders, its results fetched with `Session.run`;
- ``object``: the program's ``b`` and ``xs`` passed inside a config object
  (a dataclass, a namedtuple, an attrs-style class, a plain object), called
  three times with the config changed in between (mutated where it can be);
- ``gradient``: float programs of their own (`tests.fuzz.gradients`), whose
  traced gradients are checked against the eager tape and finite differences.

Each converted run gets one of four classes:

- ``ok``: the same value as Python, or the same exception type;
- ``wrong answer``: a value that differs from Python's, or a value where
  Python raised;
- ``internal error``: an exception where Python returned (or a different
  exception type), that is not a documented limitation; also an error
  message that shows autoloop's internal names or values;
- ``documented limitation``: an error README and the API contract document
  for graph control flow (for example ``try``/``except`` around a loop with a
  tensor condition, or what XLA cannot compile on ``backend="jax"``), raised
  with the user's line. Runs whose conditions are all Python values (eager
  runs, and traced runs on Python arguments of a program that makes no
  tensors itself) have no limitations: there any error Python does not raise
  is an internal error.

    >>> outcome = run_program(generate(seed=0, index=3))
    >>> outcome.worst().kind            # 'ok', 'wrong answer', ...
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import linecache
import re
import signal
import traceback

import numpy as np

import autoloop as al
from autoloop.compiler import conversion
from autoloop.concrete_function import ConcreteFunction
from autoloop.errors import BackendError
from autoloop.execute.interpreter import interpret
from autoloop.runtime.lists import TensorList
from autoloop.tensor import Tensor

from tests.fuzz.generator import FUNCTION, Program

OK, WRONG, INTERNAL, LIMITATION = "ok", "wrong answer", "internal error", "documented limitation"
CLASSES = (OK, WRONG, INTERNAL, LIMITATION)
SEVERITY = {OK: 0, LIMITATION: 1, INTERNAL: 2, WRONG: 3}
MODES = ("eager", "python", "mixed", "tensor")  # the numpy mode's runs
OBJECT_RUNS = ("dataclass", "namedtuple", "attrs-style", "plain object")
RUNS = {"numpy": MODES, "interpreter": ("interpreter",), "jax": ("jax mixed", "jax tensor"),
        "session": ("session",), "object": OBJECT_RUNS,
        "gradient": ("numpy", "numpy checkpoint", "jax", "jax checkpoint", "eager tape")}
TIMEOUT_S = 10
JAX_TIMEOUT_S = 60  # XLA compiles every program (and its gradient): seconds each on a loaded machine

# Errors the contract allows where graph control flow cannot follow Python:
# (exception type, pattern its message must match). Each must also show the
# user's line (a frame in the program's file).
DOCUMENTED = (
    (NotImplementedError, re.compile(r"try statement|global or nonlocal|cannot be converted")),
    (ValueError, re.compile(r"is (None|a Python \w+|not assigned) (in the|after an iteration|before|where)")),
    (TypeError, re.compile(r"loop variable .* (dtype|structure)|changes? (its )?(dtype|structure)")),
    (BackendError, re.compile(r"cannot be compiled by XLA|XLA")),  # backend="jax": docs/api.md lists them
)

# Names that exist only in converted code or inside autoloop: a message
# showing one leaks an internal detail to the user.
INTERNAL_NAMES = re.compile(r"MaybeUndefined|Undefined\(|_NeedsPlan|TracedUnbound|retval_|do_return|"
                            r"break_\d*\b|continue_\d*\b|loop_body|loop_cond|if_true|if_false|al__")


@dataclasses.dataclass
class Result:
    """What one run returned or raised."""

    value: object = None
    error: BaseException | None = None

    def describe(self) -> str:
        if self.error is None:
            return f"returned {self.value!r}"
        return f"raised {type(self.error).__name__}: {_first_line(self.error)}"


@dataclasses.dataclass
class ModeOutcome:
    mode: str
    kind: str
    result: Result
    signature: str = ""  # for errors: type and message with names and numbers abstracted

    def describe(self) -> str:
        return f"{self.mode}: {self.kind}: {self.result.describe()}"


@dataclasses.dataclass
class Outcome:
    """A program's Python result and the class of each converted run."""

    program: Program
    expected: Result
    modes: list

    def worst(self) -> ModeOutcome:
        return max(self.modes, key=lambda m: SEVERITY[m.kind])


class _Timeout(Exception):
    """A run took longer than TIMEOUT_S (a program here ends in milliseconds)."""


_serial = itertools.count()


def load(source: str, name: str = FUNCTION):
    """Define the functions in `source` as if from a file of their own; return `name`."""
    filename = f"<fuzz program {next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "fuzz_programs", "al": al}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def inspect_source(function) -> str:
    """The whole source of the program `function` was loaded from."""
    return "".join(linecache.getlines(function.__code__.co_filename))


def timed_out(result: Result) -> bool:
    return isinstance(result.error, _Timeout)


def _call(function, args, timeout_s=TIMEOUT_S) -> Result:
    def on_alarm(signum, frame):
        raise _Timeout(f"no result after {timeout_s} s")
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(timeout_s)
    try:
        return Result(value=function(*args))
    except _Timeout as error:
        return Result(error=error)
    except Exception as error:  # the program's own errors are results too
        return Result(error=error)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def arguments(program: Program, mode: str) -> tuple:
    """The arguments of `program` for a run in `mode` (some become tensors)."""
    if mode in ("eager", "python"):
        tensors = ()
    elif mode.endswith("tensor") or mode in ("interpreter", "session"):
        tensors = (0, 1, 2)
    else:
        tensors = program.mixed
    return tuple(al.constant(value, dtype=al.int32) if position in tensors else _copy(value)
                 for position, value in enumerate(program.args))


def _copy(value):
    return list(value) if isinstance(value, list) else value


def run_mode(function, program: Program, mode: str, timeout_s=TIMEOUT_S) -> Result:
    """`function` (the loaded ``generated``) converted and run as `mode` says."""
    args = arguments(program, mode)
    if mode == "eager":
        try:
            converted = conversion.convert(function)
        except Exception as error:
            return Result(error=error)
        return _call(converted, args, timeout_s)
    if mode == "interpreter":
        with interpreted():
            return _call(al.function(function), args, timeout_s)
    if mode == "session":
        return _call(lambda *args: run_in_session(function, args), args, timeout_s)
    if mode.startswith("jax"):
        return _call(al.function(function, backend="jax"), args, max(timeout_s, JAX_TIMEOUT_S))
    return _call(al.function(function), args, timeout_s)


@contextlib.contextmanager
def interpreted():
    """Traces made inside run on the reference interpreter instead of the compiled executor."""
    compile_graph = ConcreteFunction.compile
    ConcreteFunction.compile = lambda self, graph: _Interpreted(graph)
    try:
        yield
    finally:
        ConcreteFunction.compile = compile_graph


class _Interpreted:
    """A graph run by `interpret`, with the compiled executor's ``runner`` entry point."""

    def __init__(self, graph):
        self.graph = graph

    def runner(self, finish=None, one=None):
        def run(inputs):
            outputs = interpret(self.graph, *inputs)
            if one is not None and len(outputs) == 1:
                return one(outputs[0])
            return finish(outputs)
        return run


class NothingToFetch(Exception):
    """A function called in a TF1 graph returned no tensor, so `Session.run` had nothing to fetch and its
    effects (a raise held back into the graph) never ran: a documented limitation (docs/api.md, "A traced
    function in a TF1 graph"). `value` is what the call returned."""

    def __init__(self, value):
        super().__init__("the function returned no tensor: a Session has nothing to fetch, so its effects never run")
        self.value = value


def run_in_session(function, args):
    """``function(*args)`` as TF1 code runs it: called while a `compat.v1` graph is built, on
    placeholders of the arguments' dtypes and shapes, its tensors fetched by one `Session.run` (an
    appended list stacked first, as TF1 code would fetch it)."""
    from autoloop.compat import v1
    arrays = [np.asarray(arg.numpy()) for arg in args]
    graph = v1.Graph()
    with graph.as_default():
        placeholders = [v1.placeholder(al.as_dtype(array.dtype), shape=array.shape) for array in arrays]
        result = al.function(function)(*placeholders)
        leaves = al.nest.flatten(result)
        fetches = {position: al.stack(leaf) if isinstance(leaf, TensorList) else leaf
                   for position, leaf in enumerate(leaves) if isinstance(leaf, Tensor | TensorList)}
    if not fetches:
        raise NothingToFetch(result)
    with v1.Session(graph=graph) as session:
        values = session.run(fetches, feed_dict=dict(zip(placeholders, arrays)))
    return al.nest.pack_sequence_as(result, [values.get(position, leaf) for position, leaf in enumerate(leaves)])


def run_program(program: Program, modes=MODES, source=None, timeout_s=TIMEOUT_S) -> Outcome:
    """Run `program` (or `source` on its arguments) as Python and in each of `modes` (runs of `RUNS`).

    The converted runs share one function object, as a user's calls with
    different arguments would (so caches between traces are exercised too).
    """
    source = program.source if source is None else source
    expected = _call(load(source), arguments(program, "eager"), timeout_s)
    function = load(source)
    # A program that makes tensors itself (al.stack) may have tensor conditions on Python arguments.
    makes_tensors = "al." in source
    configured = None  # the object runs share one loaded ``configured`` (converted once), each its own Function
    outcomes = []
    for mode in modes:
        if mode in OBJECT_RUNS:
            configured = configured or load(source + CONFIGURED, "configured")
            outcomes.append(run_with_config(source, program, mode, expected, timeout_s, configured))
        else:
            outcomes.append(classify(expected, run_mode(function, program, mode, timeout_s), mode, makes_tensors))
    return Outcome(program, expected, outcomes)


# -- configs: the object mode ---------------------------------------------------------------

@dataclasses.dataclass
class DataConfig:
    b: object
    xs: object


TupleConfig = collections.namedtuple("TupleConfig", ["b", "xs"])


class _Field:
    def __init__(self, name):
        self.name = name


class AttrsConfig:
    """What the attrs package generates for ``b`` and ``xs`` (without depending on it)."""

    __attrs_attrs__ = (_Field("b"), _Field("xs"))

    def __init__(self, b, xs):
        self.b, self.xs = b, xs


class PlainConfig:
    def __init__(self, b, xs):
        self.b, self.xs = b, xs


CONFIGS = {"dataclass": DataConfig, "namedtuple": TupleConfig, "attrs-style": AttrsConfig,
           "plain object": PlainConfig}
CONFIGURED = """

def configured(a, config):
    return generated(a, config.b, config.xs)
"""


def run_with_config(source: str, program: Program, mode: str, expected: Result, timeout_s=TIMEOUT_S,
                    configured=None):
    """The object mode: ``generated(a, config.b, config.xs)`` traced, ``a`` a tensor, ``b`` a Python
    int and ``xs`` a tensor in a config of kind `mode`, called on the program's values, then on a
    changed config (``b + 1`` and ``xs`` reversed: the same shape), then on the first values again;
    the worst of the three against plain Python's results. `configured`: ``configured`` loaded from
    `source` (loaded here if not given); it is wrapped in a new `autoloop.function`, so no trace is shared."""
    a, b, xs = program.args
    python = load(source)
    function = al.function(configured or load(source + CONFIGURED, "configured"))
    config = CONFIGS[mode](b, al.constant(xs, dtype=al.int32))
    first = classify(expected, _call(function, (al.constant(a), config), timeout_s), mode, True)
    changed = (b + 1, list(reversed(xs)))
    if mode == "namedtuple":
        config = config._replace(b=changed[0], xs=al.constant(changed[1], dtype=al.int32))
    else:
        config.b, config.xs = changed[0], al.constant(changed[1], dtype=al.int32)
    second = classify(_call(python, (a,) + changed, timeout_s), _call(function, (al.constant(a), config), timeout_s),
                      mode, True)
    if mode == "namedtuple":
        config = TupleConfig(b, al.constant(xs, dtype=al.int32))
    else:
        config.b, config.xs = b, al.constant(xs, dtype=al.int32)
    third = classify(expected, _call(function, (al.constant(a), config), timeout_s), mode, True)
    return max((first, second, third), key=lambda outcome: SEVERITY[outcome.kind])


# -- classes --------------------------------------------------------------------------------

def classify(expected: Result, result: Result, mode: str, makes_tensors=False) -> ModeOutcome:
    if isinstance(result.error, NothingToFetch):  # the Session ran nothing: right where Python raised nothing
        fine = expected.error is None and same_value(result.error.value, expected.value)
        return ModeOutcome(mode, OK if fine else LIMITATION, result, signature_of(result.error))
    if result.error is None:
        if expected.error is None and same_value(result.value, expected.value):
            return ModeOutcome(mode, OK, result)
        return ModeOutcome(mode, WRONG, result)
    signature = signature_of(result.error)
    message = _first_line(result.error)
    if INTERNAL_NAMES.search(message) or isinstance(result.error, _Timeout):
        return ModeOutcome(mode, INTERNAL, result, signature)
    if expected.error is not None and isinstance(result.error, type(expected.error)):
        return ModeOutcome(mode, OK, result, signature)
    graph_conditions = mode not in ("eager", "python") or makes_tensors
    if graph_conditions and is_documented(result.error):
        return ModeOutcome(mode, LIMITATION, result, signature)
    if graph_conditions and expected.error is not None and _replaced_in_python(result.error, expected.error):
        return ModeOutcome(mode, LIMITATION, result, signature)
    return ModeOutcome(mode, INTERNAL, result, signature)


def _replaced_in_python(error, python_error) -> bool:
    """Whether Python raised `error`'s kind first and a ``finally`` block replaced it.

    Documented graph rule: an error the graph raises when it runs ends the
    run there, so a ``finally`` block after it does not run (nor raise).
    """
    seen = set()
    replaced = python_error.__context__
    while replaced is not None and id(replaced) not in seen:
        if type(error) is type(replaced) or isinstance(error, type(replaced)):
            return True
        seen.add(id(replaced))
        replaced = replaced.__context__
    return False


def is_documented(error) -> bool:
    """Whether `error` is a documented limitation, shown at the user's line."""
    message = str(error)
    if not any(isinstance(error, kind) and pattern.search(message) for kind, pattern in DOCUMENTED):
        return False
    frames = traceback.extract_tb(error.__traceback__)
    return any(frame.filename.startswith("<fuzz program") for frame in frames)


def same_value(result, expected) -> bool:
    """Whether a converted result equals plain Python's (tensors compared by value)."""
    try:
        return _plain(result) == _plain(expected)
    except Exception:
        return False


def _plain(value):
    """`value` as nested Python lists and ints (a tuple and a list compare alike)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, al.Tensor):
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f"not a number: {value!r}")
    return array.tolist()


def _first_line(error) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else ""


def signature_of(error) -> str:
    """The error's type and message with names, numbers and files abstracted (to group failures)."""
    message = _first_line(error)
    message = re.sub(r"\(?<fuzz program \d+>\)?|\S+\.py", "FILE", message)
    message = re.sub(r"\b[A-Z]\w*?(_\d+)?:\d+", "OP", message)  # graph values: Sub_1:0
    message = re.sub(r"\b([A-Z][A-Za-z]+)_\d+\b", r"\1", message)  # graph nodes: StackPush_2
    message = re.sub(r"'[^']*'", "'_'", message)
    message = re.sub(r"'_'(, '_')+", "'_', ...", message)
    message = re.sub(r"\b\d+\b", "N", message)
    message = re.sub(r"\b(c|d|u|w|z|q|acc|[kivpe]\d+)\b", "_", message)
    return f"{type(error).__name__}: {message[:110]}"
