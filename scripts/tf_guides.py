"""Run TensorFlow's guide notebooks cell by cell in real TF and with `import autoloop as tf`.

Usage (from the repository root, with the autoloop venv active)::

    python scripts/tf_guides.py --tf-python /work/tfenv/bin/python \\
        --autoloop-path . /work/tf_docs/function.ipynb /work/tf_docs/autodiff.ipynb ...

TensorFlow's notebooks are not part of this repository (their licence is
theirs): fetch tensorflow/docs and pass the paths of ``site/en/guide/*.ipynb``
(and ``site/en/r1/guide/autograph.ipynb`` for TF1).  Options: ``--show`` prints
every cell that is not the same, with both outputs; ``--json FILE`` writes all
results; ``--cache DIR`` keeps TF's results per notebook (keyed by its content
and the TF interpreter) so a re-run only runs the autoloop side;
``--timeout`` is the per-cell limit in seconds.

How it runs.  Each notebook runs in one fresh process per side; its code cells
run in order in one namespace, as in Jupyter.  On the autoloop side each import
of ``tensorflow`` (``import tensorflow as tf``, ``import tensorflow.compat.v1 as
tf``, ``from tensorflow... import``) is rewritten to the same import of
``autoloop``; nothing else in the cell changes.  Lines that are IPython magics or
shell commands (``%...``, ``!...``) are dropped on both sides, and plotting
modules (`PLOTTING_MODULES`) are replaced on both sides by a sink that accepts
any use (plotting cells are out of scope; the sink keeps the rest of such a
cell, often the notebook's setup, running alike on both sides).  Each cell is
written to a file first, so that functions defined in it have source (as
Jupyter gives them).  A cell's output is everything it writes to file
descriptors 1 and 2 (so ``tf.print`` is caught whichever stream it uses) plus
the ``repr`` of its last expression when that is not None, as Jupyter shows it.

How cells are classified, in this order:

- ``empty``: nothing left to run (licence cells, ``pip install``).
- ``out``: out of scope: the cell matches one of `OUT_OF_SCOPE` (Keras,
  ``tf.data``, strings, ragged tensors, ``tf.distribute``, SavedModel and
  checkpoints, files and network, plotting, devices, TF's version), or it
  reads a name that only an out-of-scope cell defined. Such a cell still runs
  on both sides, one top-level statement at a time, each past the failure
  of one before it: a notebook's setup cell that imports numpy after a Keras
  line sets up the in-scope cells after it on both sides alike.
- ``tf-error``: real TF raised (the cell is not counted).
- ``same``: autoloop ran it and the outputs are equal after `normalise`.
- ``print``: both ran and the outputs differ only in what Python ``print``
  calls inside functions wrote: autoloop printed TF's lines plus more, or the
  outputs agree once the lines starting with the literal text of a ``print``
  inside a function (of this or an earlier cell) are removed on both sides.  A
  ``print`` in a function runs on every call in autoloop, with values, and only
  while tracing in TF, with symbolic tensors (a documented difference).
- a cell is *nondeterministic* when it draws random numbers or times
  something (`NONDETERMINISTIC`), or reads a name such a cell bound, or a
  cell reading such a name bound (a model whose class draws its weights):
  the generators and clocks are not TF's (a documented difference), and
  TF's own output changes from run to run.
- ``nondet-same``: both ran, the cell is nondeterministic, and the outputs
  agree but for the values of their numbers (`same_but_numbers`: the same
  text, as many numbers): *same up to nondeterminism*, counted apart from
  ``same``.
- ``documented``: the outputs differ, or autoloop raised, and the cell matches
  `DOCUMENTED` (differences the README lists, such as ``to_code``'s generated
  code).
- ``nondet``: both ran, the cell is nondeterministic, and the outputs differ
  beyond their numbers (a loop over random data that runs a random number of
  times).
- ``differs``: both ran, outputs differ.
- ``error``: autoloop raised (or timed out); grouped by exception type and the
  first line of its message.

``% same`` is ``same / (same + nondet-same + print + nondet + documented +
differs + error)``: the share of in-scope cells that TF runs which give the
same output; ``% +nondet`` counts the cells the same up to nondeterminism
with them, and ``% +doc`` the documented differences (print, nondet,
documented) too.

Normalisation (`normalise`): tracebacks (with the whole message of their
exception) and TensorFlow's log lines are removed (they name files and
internals that legitimately differ); a line the cell prints as ``SomeError:
message`` keeps only ``SomeError`` (messages are each library's own); ``0x...`` addresses become ``0x?``;
``autoloop`` becomes ``tf`` in names (``autoloop.Tensor(...)`` vs
``tf.Tensor(...)``); ``tensorflow.python....`` module paths in class names are
cut to their last part; all runs of whitespace are collapsed (numpy line
wrapping); then the texts are compared piecewise: the non-numeric text must
be equal and the numbers equal to ``rtol=1e-4`` (float32 printing).
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import dataclasses
import hashlib
import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import traceback
import types

# Cells that match any of these (comments removed first) are out of scope.
OUT_OF_SCOPE = {
    "keras": r"\bkeras\b",
    "tf.data": r"\btf\.data\b|\bDataset\b",
    "strings": (r"\btf\.strings?\b|\bas_string\b|\bunicode_|tf\.constant\(\s*\[*\s*[rbu]?[\"']"
                r"|\bstring_|dtype=tf\.string"),
    "ragged": r"[Rr]agged",
    "distribute": r"\btf\.distribute\b",
    "saved/checkpoint": r"saved_model|\bCheckpoint\b|\btf\.train\.(Checkpoint|latest)|\.save\(|\.restore\(",
    "files/network": (r"\bopen\(|urllib|get_file|\btf\.io\b|\bos\.(path|listdir|mkdir|remove)|"
                      r"\btempfile\b|\btf\.summary\b|tensorboard|\bshutil\b|\brequests\b"),
    "notebook display": r"\bIPython\b|\bdisplay\(",
    "devices": r"\btf\.device\(|physical_devices|\bGPU\b|\bTPU\b|list_logical_devices",
    "version": r"__version__",
    "image": r"\btf\.image\b",
}

# Cells whose output depends on random draws or clocks.
NONDETERMINISTIC = r"\brandom\b|\btimeit\b|\btime\.|uniform|normal\("

# Where an autoloop failure belongs, by the first pattern its message (or, failing
# that, its cell) matches: the team's areas at the time of writing.
AREAS = [
    ("v1 names / small ops", r"'(linspace|sequence_mask|segment_\w+|Generator|stateless_\w+|searchsorted|"
                             r"unique|dropout|solve|inv|cholesky|random_uniform|random_normal)'"),
    ("function surface", r"get_concrete_function|concrete|pretty_printed|experimental_|jit_compile|"
                         r"run_functions_eagerly|input_signature|TensorSpec|function_spec|"
                         r"experimental_get_tracing_count|tracing"),
    ("Module", r"\bModule\b"),
    ("Variables", r"Variable|assign|trainable|watch_accessed"),
    ("batching", r"map_fn|vectorized_map|foldl|foldr|scan"),
    ("autodiff", r"jacobian|custom_gradient|ForwardAccumulator|hessian|stop_recording|"
                 r"persistent|UnconnectedGradients|unconnected_gradients|gradient"),
    ("v1 names / Session", r"compat\.v1|Session|placeholder|Graph\(\)|as_default|v1"),
]

_MAGIC = re.compile(r"^\s*[%!]")
_IMPORT = re.compile(r"^(\s*)import tensorflow(\.[\w.]+)?(\s+as\s+\w+)?")
_FROM = re.compile(r"^(\s*)from tensorflow(\.[\w.]+)?(\s+import\b)")


def cells_of(notebook_path):
    """The code cells of a notebook, as source strings with magics dropped."""
    with open(notebook_path, encoding="utf-8") as f:
        notebook = json.load(f)
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = cell["source"]
        source = "".join(source) if isinstance(source, list) else source
        cells.append("\n".join(line for line in source.splitlines() if not _MAGIC.match(line)))
    return cells


def to_autoloop(source):
    """`source` with each import of ``tensorflow`` made an import of ``autoloop``."""
    lines = []
    for line in source.splitlines():
        match = _IMPORT.match(line)
        if match:
            indent, sub, alias = match.groups()
            alias = alias or " as tensorflow"
            line = f"{indent}import autoloop{sub or ''}{alias}" + line[match.end():]
        else:
            line = _FROM.sub(r"\1from autoloop\2\3", line)
        lines.append(line)
    return "\n".join(lines)


def _code_only(source):
    """`source` without comments (the markers must not match prose)."""
    return "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in source.splitlines())


def _names(source):
    """(names the cell reads before binding them, names it binds, names it imports); None if
    it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    loads, binds, imports = set(), set(), set()

    def visit(node, local):  # `local`: names local to the functions around `node`; None at top level
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(node, ast.Lambda) and local is None:
                binds.add(node.name)
            arguments = [a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)]
            stored = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
            local = (local or set()) | set(arguments) | set(stored)
        elif isinstance(node, ast.ClassDef) and local is None:
            binds.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id not in (local or ()):
                loads.add(node.id)
            elif not isinstance(node.ctx, ast.Load) and local is None:
                binds.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    visit(tree, None)
    return loads - binds - imports, binds | imports, imports


def scope_of(cells):
    """Per cell: None when in scope, else why it is out (a marker or a dependency)."""
    tainted, result = {}, []
    for source in cells:
        code = _code_only(source)
        why = next((name for name, pattern in OUT_OF_SCOPE.items() if re.search(pattern, code)), None)
        names = _names(source)
        if why is None and names:
            needs = sorted(names[0] & tainted.keys())
            if needs:
                why = f"uses {needs[0]} (from an out-of-scope cell)"
        if names:
            for name in names[1] - names[2]:  # an import (of tf, numpy) is never out of scope
                if why:
                    tainted[name] = why
                else:
                    tainted.pop(name, None)
        result.append(why)
    return result


# ----------------------------------------------------------------------------- worker


class _CellTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _CellTimeout("cell timed out")


class _Sink(types.ModuleType):
    """Stands for a plotting module: every attribute, call, item and unpacking is another sink."""

    def __init__(self, name="sink"):
        super().__init__(name)
        self.__path__ = []

    def __getattr__(self, name):
        return _Sink(name)

    def __call__(self, *args, **kwargs):
        return _Sink()

    def __getitem__(self, key):
        return _Sink()

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter([_Sink(), _Sink()])


PLOTTING_MODULES = ("matplotlib", "matplotlib.pyplot", "matplotlib.cm", "matplotlib.colors", "seaborn")


def run_cells(cells, cell_dir, timeout, keep_going=()):
    """Run `cells` in order in one namespace; per cell its output, value and error. A cell whose entry
    in `keep_going` is true runs statement by statement, each past the failure of one before it."""
    for name in PLOTTING_MODULES:  # plotting is out of scope; a sink keeps both sides alike
        sys.modules[name] = _Sink(name)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.stdout.reconfigure(line_buffering=True, write_through=True)
    results = []
    for index, source in enumerate(cells):
        filename = os.path.join(cell_dir, f"cell{index}.py")
        with open(filename, "w", encoding="utf-8") as f:
            f.write(source + "\n")
        with tempfile.TemporaryFile(mode="w+b") as captured:
            value, error = None, None
            sys.stdout.flush(), sys.stderr.flush()
            saved = os.dup(1), os.dup(2)
            os.dup2(captured.fileno(), 1), os.dup2(captured.fileno(), 2)
            signal.alarm(timeout)
            try:
                value = _run_one(source, filename, namespace, index < len(keep_going) and keep_going[index])
            except BaseException as e:  # the cell's own error, reported not raised
                error = {"type": type(e).__name__,
                         "message": (str(e).strip().splitlines() or [""])[0][:300],
                         "traceback": "".join(traceback.format_exception(e))[-3000:]}
            finally:
                signal.alarm(0)
                sys.stdout.flush(), sys.stderr.flush()
                os.dup2(saved[0], 1), os.dup2(saved[1], 2)
                os.close(saved[0]), os.close(saved[1])
            captured.seek(0)
            output = captured.read().decode("utf-8", "replace")
        results.append({"output": output, "value": value, "error": error})
    return results


def _run_one(source, filename, namespace, keep_going=False):
    tree = ast.parse(source, filename)
    if keep_going:
        first = None
        for statement in tree.body:
            try:
                exec(compile(ast.Module([statement], []), filename, "exec"), namespace)
            except _CellTimeout:
                raise
            except Exception as e:  # noqa: BLE001 - reported once the rest has run
                first = first or e
        if first is not None:
            raise first
        return None
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), namespace)
    if last is not None:
        value = eval(compile(last, filename, "eval"), namespace)
        if value is not None:
            return repr(value)
    return None


def _worker_main(spec_path, out_path):
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    results = run_cells(spec["cells"], spec["cell_dir"], spec["timeout"], spec.get("keep_going", ()))
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(results, f)


def run_side(python, cells, env_extra, timeout, label, keep_going=()):
    """Run `cells` in a fresh `python` process; its per-cell results (`keep_going`: see `run_cells`)."""
    with tempfile.TemporaryDirectory(prefix=f"tf_guides_{label}_") as tmp:
        spec_path, out_path = os.path.join(tmp, "spec.json"), os.path.join(tmp, "out.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump({"cells": cells, "cell_dir": tmp, "timeout": timeout, "keep_going": list(keep_going)}, f)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONHASHSEED="0", **env_extra)
        process = subprocess.run(
            [python, os.path.abspath(__file__), "--worker", spec_path, out_path],
            env=env, capture_output=True, text=True, cwd=tmp,
            timeout=timeout * (len(cells) + 2))
        if not os.path.exists(out_path):
            raise RuntimeError(f"{label} worker died (exit {process.returncode}):\n"
                               f"{process.stderr[-3000:]}")
        with open(out_path, encoding="utf-8") as f:
            return json.load(f)


# ----------------------------------------------------------------------------- comparison

_LOG_LINE = re.compile(
    r"^(WARNING|INFO|I0000|W0000|E0000|[IWEF]\d{4} |To enable the following|"
    r"WARNING:tensorflow|.*cuda|.*TF-TRT|.*oneDNN|.*rebuild TensorFlow|.*cpu_feature_guard)")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")
_EXCEPTION_LINE = re.compile(r"^((?:\w+\.)*\w*(?:Error|Exception|Exit|Interrupt)): .*")


def _drop_tracebacks(text):
    """`text` without tracebacks (their frames, chained parts and the exception's whole
    message: its indented and blank lines, up to an unindented line after a blank one or the
    notebook's next ``Caught expected`` line) and log lines; a
    line the cell printed as ``SomeError: message`` keeps only ``SomeError``."""
    kept, state, previous = [], "text", ""
    for line in text.splitlines():
        indented_or_blank = line.startswith((" ", "\t")) or not line.strip()
        if line.startswith("Traceback (most recent call last)") or line.startswith(_CHAINED):
            state = "frames"
        elif state == "frames" and not indented_or_blank:
            state = "message"  # the exception line ending the traceback
        elif state == "message" and (line.startswith("Caught expected")
                                     or not indented_or_blank and not previous.strip()):
            state = "text"  # TF's messages go on over indented and blank lines
        previous = line
        if state == "text" and not _LOG_LINE.match(line):
            kept.append(_EXCEPTION_LINE.sub(r"\1", line))
    return "\n".join(kept)


def normalise(output, value):
    """A cell's output and value made comparable across TF and autoloop (see module doc)."""
    text = _drop_tracebacks(output) + "\n" + (value or "")
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    text = re.sub(r"\bautoloop\b", "tf", text)
    text = re.sub(r"\b(?:tensorflow|tf)(?:\.\w+)*\.(\w+(?:Error|Exception|Warning))\b", r"\1", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"([(\[]) ", r"\1", text)
    return re.sub(r" ([)\]])", r"\1", text)


def same_output(a, b):
    """Whether normalised texts `a` and `b` agree: text exactly, numbers to rtol 1e-4."""
    numbers_a, numbers_b = _NUMBER.findall(a), _NUMBER.findall(b)
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b) or len(numbers_a) != len(numbers_b):
        return False
    for x, y in zip(numbers_a, numbers_b):
        x, y = float(x), float(y)
        if not (x == y or (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-6)):
            return False
    return True


# Differences the README documents: (pattern of the cell's source, why, and None where the
# output differs or a pattern of autoloop's error where it raises).
DOCUMENTED = [
    (r"autograph\.to_code\(", "to_code shows autoloop's own generated code", None),
    (r"\.numpy\(\)\s*# Bad - tensor leaked", "an escaped graph tensor's numpy() raises AttributeError "
                                            "with autoloop's own message", None),
    (r"as_graph_def\(", "autoloop's graphs are not GraphDef protocol buffers (print the graph, or "
                        "`autoloop graph` / autoloop.visualize)", r"as_graph_def"),
    (r"type\(\w+\)\.__name__", "class names are autoloop's (Tensor, Variable), not EagerTensor or "
                              "ResourceVariable", None),
    (r"\d[jJ]\b", "autoloop has no complex dtypes", r"complex"),
    (r"(?m)^\s+assert\b", "a failed converted assert raises Python's AssertionError with its message (API.md), "
                        "not TensorFlow's InvalidArgumentError", r"^AssertionError"),
    # An attribute of an object set at top level, the object then passed to a call.
    (r"(?ms)^(\w+)\.\w+\s*[-+*/]?=[^=].*\((?:[^()]*,)?\s*\1\s*[,)]",
     "an object mutated between calls gets a new trace (API.md: never a stale one), so the function sees its "
     "new attributes; TensorFlow reuses the old trace", None),
]


def _documented(source, error=None):
    """Why this cell's difference (or, with `error`, autoloop's error) is documented; None if not."""
    return next((why for pattern, why, raised in DOCUMENTED if re.search(pattern, source)
                 and (raised is None if error is None else raised and re.search(raised, error))), None)


@dataclasses.dataclass
class Context:
    """What the cells before this one tell about its output."""

    trace_prints: set = dataclasses.field(default_factory=set)  # prefixes printed inside functions
    random_names: set = dataclasses.field(default_factory=set)  # names bound to random draws

    def update(self, source):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.Lambda)):
                for node in ast.walk(function):
                    prefix = _print_prefix(node)
                    if prefix:
                        self.trace_prints.add(prefix)
        names = _names(source)  # what a random draw, or something made from one, binds is random too
        if names and (re.search(NONDETERMINISTIC, _code_only(source)) or names[0] & self.random_names):
            self.random_names |= names[1] - names[2]

    def nondeterministic(self, source):
        names = _names(source)
        return bool(re.search(NONDETERMINISTIC, _code_only(source))
                    or names and names[0] & self.random_names)

    def without_trace_prints(self, output):
        return "\n".join(line for line in output.splitlines()
                         if not line.strip().startswith(tuple(self.trace_prints)))


def _print_prefix(node):
    """The literal text a ``print(...)`` call starts its line with, if any."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
            and node.args):
        return None
    first = node.args[0]
    if isinstance(first, ast.JoinedStr) and first.values:
        first = first.values[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.strip():
        return first.value.strip()
    return None


def classify(source, out_of_scope, tf_result, al_result, context=None):
    """(class, detail) of one cell: see the module docstring."""
    context = context or Context()
    if not _code_only(source).strip():
        return "empty", ""
    if out_of_scope:
        return "out", out_of_scope
    if tf_result["error"]:
        return "tf-error", f"{tf_result['error']['type']}: {tf_result['error']['message']}"
    if al_result["error"]:
        error = al_result["error"]
        detail = f"{error['type']}: {error['message']}"
        why = _documented(source, detail)
        return ("documented", f"{why}\n    {detail}") if why else ("error", detail)
    tf_text = normalise(tf_result["output"], tf_result["value"])
    al_text = normalise(al_result["output"], al_result["value"])
    if same_output(tf_text, al_text):
        return "same", ""
    detail = f"TF: {tf_text[:300]!r}\n    autoloop: {al_text[:300]!r}"
    without = [normalise(context.without_trace_prints(r["output"]), r["value"]) for r in (tf_result, al_result)]
    if _only_extra_lines(tf_result, al_result) or same_output(*without):
        return "print", detail
    nondeterministic = context.nondeterministic(source)
    if nondeterministic and same_but_numbers(tf_text, al_text):
        return "nondet-same", detail
    why = _documented(source)
    if why:
        return "documented", f"{why}\n    {detail}"
    return ("nondet", detail) if nondeterministic else ("differs", detail)


def same_but_numbers(a, b):
    """Whether normalised texts `a` and `b` agree but for the values of their numbers: the same text
    around them (the spaces numpy pads columns with aside) and as many numbers."""
    if len(_NUMBER.findall(a)) != len(_NUMBER.findall(b)):
        return False
    masked = [re.sub(r" ?# ?", "#", _NUMBER.sub("#", text)) for text in (a, b)]
    return masked[0] == masked[1]


def _only_extra_lines(tf_result, al_result):
    """Whether autoloop printed TF's lines, in order, plus more (a `print` in a
    function runs on every call in autoloop, only while tracing in TF)."""
    tf_lines = [normalise(line, None) for line in _drop_tracebacks(tf_result["output"]).splitlines()]
    al_lines = [normalise(line, None) for line in _drop_tracebacks(al_result["output"]).splitlines()]
    if len(al_lines) <= len(tf_lines) or not same_output(normalise("", tf_result["value"]),
                                                         normalise("", al_result["value"])):
        return False
    remaining = iter(al_lines)
    return all(any(same_output(line, candidate) for candidate in remaining) for line in tf_lines)


def area_of(detail, source):
    for area, pattern in AREAS:
        if re.search(pattern, detail):
            return area
    for area, pattern in AREAS:
        if re.search(pattern, _code_only(source)):
            return area
    return "other"


# ----------------------------------------------------------------------------- driver

HARNESS_VERSION = 3  # part of the cache key: bump when the worker changes
CLASSES = ("same", "nondet-same", "print", "nondet", "documented", "differs", "error", "tf-error", "out", "empty")
SCORED = ("same", "nondet-same", "print", "nondet", "documented", "differs", "error")


def _tf_results(args, cells, path, keep_going):
    key = hashlib.sha256(json.dumps([HARNESS_VERSION, cells, args.tf_python, args.timeout]).encode())
    key = key.hexdigest()[:16]
    cache = args.cache and os.path.join(args.cache, f"{os.path.basename(path)}.{key}.json")
    if cache and os.path.exists(cache):
        with open(cache, encoding="utf-8") as f:
            return json.load(f)
    results = run_side(args.tf_python, cells, {}, args.timeout, "tf", keep_going)
    if cache:
        os.makedirs(args.cache, exist_ok=True)
        with open(cache, "w", encoding="utf-8") as f:
            json.dump(results, f)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*")
    parser.add_argument("--tf-python", default="/work/tfenv/bin/python")
    parser.add_argument("--autoloop-python", default=sys.executable)
    parser.add_argument("--autoloop-path", default=os.getcwd(),
                        help="the tree whose autoloop is measured (put first on PYTHONPATH)")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per cell")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "tf_guides_cache"))
    parser.add_argument("--show", action="store_true", help="print each cell that is not the same")
    parser.add_argument("--json", help="write every cell's result here")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker_main(*args.worker)

    rows, records = [], []
    for path in args.notebooks:
        cells = cells_of(path)
        scope = scope_of(cells)
        keep_going = [why is not None for why in scope]
        tf_results = _tf_results(args, cells, path, keep_going)
        al_cells = [to_autoloop(c) for c in cells]
        al_env = {"PYTHONPATH": os.path.abspath(args.autoloop_path)}
        al_results = run_side(args.autoloop_python, al_cells, al_env, args.timeout, "autoloop", keep_going)
        counts, broken, context = collections.Counter(), {}, Context()
        for index, (source, why, tf_r, al_r) in enumerate(zip(cells, scope, tf_results, al_results)):
            context.update(source)
            kind, detail = classify(source, why, tf_r, al_r, context)
            area = area_of(detail, source) if kind in ("error", "differs") else ""
            undefined = re.match(r"NameError: name '(\w+)' is not defined", detail)
            if kind == "error" and undefined and undefined.group(1) in broken:
                area, cause = broken[undefined.group(1)]
                detail = cause if cause.startswith("NameError after") else (
                    f"NameError after an earlier failure: {cause}")
            names = _names(source)
            for name in (names[1] if names else ()):
                if kind == "error":
                    broken[name] = (area, detail)
                else:
                    broken.pop(name, None)
            counts[kind] += 1
            records.append({"notebook": os.path.basename(path), "cell": index, "class": kind,
                            "detail": detail, "source": source, "area": area})
        rows.append((os.path.basename(path), counts))

    print(f"{'notebook':24}" + "".join(f"{c:>12}" for c in CLASSES) + f"{'% same':>8}{'% +nondet':>10}{'% +doc':>8}")
    total = collections.Counter()
    for name, counts in rows + [("TOTAL", None)]:
        counts = counts if counts is not None else total
        if name != "TOTAL":
            total.update(counts)
        scored = sum(counts[c] for c in SCORED)
        shares = [f"{100 * sum(counts[c] for c in kinds) / scored:.1f}" if scored else "-" for kinds in (
            ("same",), ("same", "nondet-same"), ("same", "nondet-same", "print", "nondet", "documented"))]
        print(f"{name:24}" + "".join(f"{counts[c]:>12}" for c in CLASSES)
              + "".join(f"{share:>{width}}" for share, width in zip(shares, (8, 10, 8))))

    print("\nautoloop failures and differences by area and cause:")
    groups = collections.defaultdict(list)
    for r in records:
        if r["class"] in ("error", "differs"):
            cause = r["detail"] if r["class"] == "error" else "output differs"
            groups[(r["area"], cause)].append(f"{r['notebook']}#{r['cell']}")
    by_area = collections.Counter()
    for (area, _), where in groups.items():
        by_area[area] += len(where)
    for area, count in by_area.most_common():
        print(f"  {area}: {count}")
        for (a, cause), where in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            if a == area:
                print(f"    {len(where):3}  {cause[:150]}   [{', '.join(where[:4])}]")

    if args.show:
        for r in records:
            if r["class"] in ("error", "differs", "nondet-same", "nondet", "print", "documented", "tf-error"):
                print(f"\n=== {r['notebook']}#{r['cell']} {r['class']} ({r['area']})")
                print("    " + "\n    ".join(r["source"].splitlines()[:12]))
                print("  -> " + r["detail"])
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(records, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
