"""Run TensorFlow's AutoGraph reference tests against autoloop (or, to check the runner, real TF).

Usage (from the repository root, with the autoloop venv active and ``PYTHONPATH`` at the tree
to measure)::

    python scripts/autograph_reference.py /work/tf_autograph_tests/*_test.py
    python scripts/autograph_reference.py --backend jax /work/tf_autograph_tests/*_test.py
    /work/tfenv/bin/python scripts/autograph_reference.py --tensorflow /work/tf_autograph_tests/*_test.py

The test files are TensorFlow's ``tensorflow/python/autograph/tests/*_test.py``
(the "reference tests": each runs a plain Python function once as written and
once through ``tf.function`` and asserts the same results, printed output and
error type).  They are not part of this repository; copy them from a
TensorFlow checkout.  Each file is loaded with ``import tensorflow as tf``
rewritten to ``import autoloop as tf`` (unless ``--tensorflow``; likewise
``tensorflow.compat.v1`` to ``autoloop.compat.v1`` and TensorFlow's internal
``tensorflow.python.autograph`` to ``autoloop.autograph``, see
`AUTOLOOP_IMPORTS`), and with this script's own stand-ins for the two helpers
they import: `Parameterized` for ``absl.testing.parameterized`` and
`ReferenceTestCase` for ``reference_test_base.TestCase``.  Any other
``tensorflow`` import is left as written (the file then fails to load and is
reported so).

Prints per file the tests that pass, fail (an assertion), error (an
exception), are skipped, or are a documented difference (`DOCUMENTED`), then
the failures grouped by the first line of their message.  ``--json FILE``
writes every test's outcome.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import importlib.util
import io
import itertools
import json
import numbers
import os
import re
import sys
import tempfile
import traceback
import types
import unittest

import numpy as np

# Failures that are deliberate, documented differences (README, "Coming from TensorFlow"):
# (pattern of "file::test first-line-of-the-failure", why).
DOCUMENTED = [
    (r"datasets_test|_ds_|has no attribute 'data'", "tf.data is out of scope"),
    (r"has no attribute 'ragged'", "ragged tensors are out of scope"),
    (r"loop_distributed_test|has no attribute 'distribute'", "tf.distribute is out of scope"),
    (r"test_(for|while)_else\d+ NotImplementedError not raised", "autoloop converts for/else and while/else"),
    (r"(creates_var_imbalanced_illegal|temporarily_undefined_return_illegal|creates_var_illegal(_tf)?|"
     r"loop_initializing_\w+_illegal)\d* (ValueError not raised|UnboundLocalError)",
     "a name (or return) set on one path of graph control flow is an error only when the path that ran left "
     "it unset (UnboundLocalError, as Python), not TF's trace-time ValueError or run-time InvalidArgumentError"),
    (r"test_(if|while|for)_imbalanced_illegal\d* (ValueError not raised|MissingItemError)",
     "a dict item set on one path of graph control flow is an error only where it is read and the path that "
     "ran left it unset (autoloop's MissingItemError, a KeyError), not TF's trace-time ValueError or run-time "
     "InvalidArgumentError"),
    (r"test_tf_control_flow_in_py_(for|while)\d+ NotImplementedError not raised|"
     r"test_while_with_variable_py_type NotImplementedError not raised",
     "a break or return under a tensor if inside a Python loop, or a while condition that becomes a tensor, "
     "is converted (the rest of the loop becomes a graph loop); TF refuses it"),
    (r"test_for_defines_iterate_tf_range UnboundLocalError", "a for loop over an empty tf.range leaves its "
     "target unassigned, as Python does (TF gives 0)"),
    (r"assertion_test.py::test_basic $", "a failed assert on a tensor raises Python's AssertionError (TF: "
     "InvalidArgumentError), which unittest reports as a failure with the assert's empty message"),
    (r"BackendError: ", "(--backend jax) a graph XLA cannot compile (a shape that changes in a loop, a list "
     "that grows without a bound, a shape computed from values) is refused while tracing (docs/guide/backends.md)"),
    (r"basic_list_test.py::test_basic .*has no attribute '(set_element_type|stack)'", "TensorFlow's internal "
     "tensorflow.python.autograph list helpers (set_element_type, stack) are not part of autoloop; "
     "TensorFlow 2.21 fails this test too"),
    (r"return_possibly_undefined_illegal\d+ (ValueError not raised|\"else branch must also have a return\" "
     r"does not match \"the function reached its end)",
     "a tensor if without a return on one path raises only when that path ran, with autoloop's own message"),
    (r"imbalanced_conditional_expression_raises_value_error \"must return the same nested structure in both "
     r"branches\" does not match \"'conditional expression value' is a Python list of",
     "the same ValueError with autoloop's own message"),
    (r"single_loop_illegal_return\d+ InvalidArgumentError not raised", "a tensor loop that returns in its "
     "first iteration and runs zero times gives what Python gives (TF refuses it)"),
    (r"test_returns_none_illegal[45] ValueError not raised", "a name that is None on every path of a tensor if "
                                                             "stays None (TF refuses it)"),
    (r"test_if_else_var_lifetime\d+ UnboundLocalError", "a name deleted on every path of a tensor if raises "
                                                       "Python's UnboundLocalError, not TF's ValueError"),
]


# ----------------------------------------------------------------------------- parameterized


class Parameterized(types.SimpleNamespace):
    """The part of ``absl.testing.parameterized`` the reference tests use, written here."""

    @staticmethod
    def parameters(*cases):
        return _with_cases([(None, case) for case in cases])

    @staticmethod
    def named_parameters(*cases):
        named = []
        for case in cases:
            if isinstance(case, dict):
                case = dict(case)
                named.append((case.pop("testcase_name"), case))
            else:
                named.append((case[0], tuple(case[1:])))
        return _with_cases(named)

    @staticmethod
    def product(**axes):
        names = list(axes)
        return _with_cases([(None, dict(zip(names, values))) for values in itertools.product(*axes.values())])

    class TestCase(unittest.TestCase):
        """Expands each method with cases into one test per case: ``test_x0``, ``test_x1``, ..."""

        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            for name, method in list(vars(cls).items()):
                cases = getattr(method, "_reference_cases", None)
                if cases is None:
                    continue
                delattr(cls, name)
                for index, (case_name, case) in enumerate(cases):
                    setattr(cls, f"{name}{case_name or index}", _bound_case(method, case))


def _with_cases(cases):
    def decorate(method):
        method._reference_cases = cases
        return method
    return decorate


def _bound_case(method, case):
    if isinstance(case, dict):
        return lambda self: method(self, **case)
    if not isinstance(case, tuple):
        case = (case,)
    return lambda self: method(self, *case)


# ----------------------------------------------------------------------------- reference base


def reference_base(tf):
    """A module object standing for ``reference_test_base``, over `tf` (autoloop or TensorFlow)."""

    class ReferenceTestCase(unittest.TestCase):
        """Runs a function as written and through ``tf.function``; the two must agree."""

        def setUp(self):
            super().setUp()
            self.autograph_opts = None
            self.all_inputs_tensors = False
            self.allow_exceptions = False

        def run_native(self, f, *args):
            """(result, printed output, exception) of ``f(*args)``."""
            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):
                    return f(*args), printed.getvalue(), None
            except Exception as error:  # noqa: BLE001 - the outcome compared, not a failure here
                return None, None, error

        def _as_tensors(self, args):
            converted = []
            for arg in args:
                if isinstance(arg, (numbers.Number, list, np.ndarray)):
                    arg = tf.constant(arg)
                elif isinstance(arg, dict):
                    arg = {k: v for k, v in zip(arg, self._as_tensors(list(arg.values())))}
                converted.append(arg)
            return converted

        def _same(self, a, b):
            if isinstance(a, tf.Tensor) or isinstance(b, tf.Tensor):
                return self._same(a.numpy() if isinstance(a, tf.Tensor) else a,
                                  b.numpy() if isinstance(b, tf.Tensor) else b)
            if isinstance(a, tf.SparseTensor) and isinstance(b, tf.SparseTensor):
                return all(self._same(getattr(a, part), getattr(b, part))
                           for part in ("indices", "values", "dense_shape"))
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                return np.array_equal(a, b)
            if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
                return len(a) == len(b) and all(self._same(x, y) for x, y in zip(a, b))
            if isinstance(a, dict) and isinstance(b, dict):
                return a.keys() == b.keys() and all(self._same(a[k], b[k]) for k in a)
            return a == b

        def assertResultsMatch(self, f, args, native, compiled):
            (n_result, n_out, n_err), (c_result, c_out, c_err) = native, compiled
            if type(n_err) is not type(c_err) or (
                    n_err is None and not (self._same(n_result, c_result) and n_out == c_out)):
                self.fail(f"{f.__name__}{tuple(args)}: native {n_result!r} printed {n_out!r} raised "
                          f"{type(n_err).__name__}: {n_err}; compiled {c_result!r} printed {c_out!r} raised "
                          f"{type(c_err).__name__}: {c_err}")

        def function(self, f, xla=False):
            options = {"jit_compile": True} if xla else {}
            return tf.function(f, experimental_autograph_options=self.autograph_opts, **options)

        def convert(self, f):
            return tf.autograph.to_graph(f, experimental_optional_features=self.autograph_opts)

        def assertFunctionMatchesEager(self, f, *args, xla=False):
            if self.all_inputs_tensors:
                args = self._as_tensors(args)
            compiled = self.run_native(self.function(f, xla=xla), *args)
            if compiled[2] is not None and not self.allow_exceptions:
                self.fail(f"{type(compiled[2]).__name__}: {compiled[2]}")
            self.assertResultsMatch(f, args, self.run_native(f, *args), compiled)

        def assertFunctionMatchesEagerStatefulInput(self, f, make_args):
            compiled = self.run_native(self.function(f), *make_args())
            self.assertResultsMatch(f, make_args(), self.run_native(f, *make_args()), compiled)

        def assertConvertedMatchesNative(self, f, *args):
            self.assertResultsMatch(f, args, self.run_native(f, *args), self.run_native(self.convert(f), *args))

        # tf.test.TestCase's helpers the tests call.
        def assertAllEqual(self, a, b, msg=None):
            self.assertTrue(np.array_equal(np.asarray(_value(a)), np.asarray(_value(b))), msg or f"{a} != {b}")

        def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
            self.assertTrue(np.allclose(np.asarray(_value(a)), np.asarray(_value(b)), rtol=rtol, atol=atol),
                            msg or f"{a} != {b}")

        def evaluate(self, value):
            return _value(value)

    return types.SimpleNamespace(TestCase=ReferenceTestCase)


def _value(value):
    return value.numpy() if hasattr(value, "numpy") else value


# ----------------------------------------------------------------------------- loading and running

OUT_OF_SCOPE = ("data", "ragged", "distribute", "strings")


# The TensorFlow imports a test file may make, and the autoloop module each becomes.
AUTOLOOP_IMPORTS = [
    (r"import tensorflow as tf", "tf", "autoloop"),
    (r"import tensorflow\.compat\.v1 as tf", "tf", "autoloop.compat.v1"),
    (r"from tensorflow\.python import autograph as ag", "ag", "autoloop.autograph"),
]


class _AutoloopAsTF(types.ModuleType):
    """An autoloop module (`name`) where a test names a TensorFlow one; the out-of-scope
    namespaces (`OUT_OF_SCOPE`) are `_OutOfScope` stand-ins, so that a file naming
    ``tf.ragged.constant`` at its top still loads and only the tests that use it fail, saying why."""

    def __init__(self, name="autoloop", backend="numpy"):
        super().__init__(name)
        self._autoloop = importlib.import_module(name)
        self._backend = backend

    def __getattr__(self, name):
        if name in OUT_OF_SCOPE and not hasattr(self._autoloop, name):
            return _OutOfScope(f"tf.{name}")
        if name == "function" and self._backend != "numpy":  # every tf.function the tests make
            return functools.partial(self._autoloop.function, backend=self._backend)
        return getattr(self._autoloop, name)


class _OutOfScope:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, name):
        return _OutOfScope(f"{self._name}.{name}")

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"{self._name}: out of scope for autoloop (has no attribute "
                                  f"'{self._name.split('.')[1]}')")


_REWRITES = [
    (re.compile(r"^from absl\.testing import parameterized\s*$", re.M), "pass  # parameterized: the runner's"),
    (re.compile(r"^from tensorflow\.python\.autograph\.tests import reference_test_base\s*$", re.M),
     "pass  # reference_test_base: the runner's"),
]


def load(path, use_tensorflow, workdir, backend="numpy"):
    """The test module at `path`, loaded as described in the module docstring; autoloop's functions run
    on `backend`."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    for pattern, replacement in _REWRITES:
        source = pattern.sub(replacement, source)
    modules = {}
    if use_tensorflow:
        tf = importlib.import_module("tensorflow")
    else:
        tf = _AutoloopAsTF("autoloop", backend)
        for statement, alias, name in AUTOLOOP_IMPORTS:
            if re.search(rf"^{statement}\s*$", source, flags=re.M):
                modules[name] = _AutoloopAsTF(name, backend)
                source = re.sub(rf"^{statement}\s*$", f"{alias} = reference_modules[{name!r}]", source, flags=re.M)
    name = os.path.splitext(os.path.basename(path))[0]
    rewritten = os.path.join(workdir, f"{name}.py")  # a file, so that functions have source
    with open(rewritten, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"reference_{name}", rewritten)
    module = importlib.util.module_from_spec(spec)
    module.parameterized = Parameterized
    module.reference_modules = modules
    module.reference_test_base = reference_base(tf)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class _Outcomes(unittest.TestResult):
    def __init__(self, file):
        super().__init__()
        self.file, self.records = file, []

    def _record(self, test, outcome, detail=""):
        test_id = f"{self.file}::{test.id().rsplit('.', 1)[-1]}"
        why = next((why for pattern, why in DOCUMENTED if re.search(pattern, f"{test_id} {detail}")), None)
        if outcome in ("fail", "error") and why:
            outcome, detail = "documented", why
        self.records.append({"test": test_id, "outcome": outcome, "detail": detail})

    def addSuccess(self, test):
        self._record(test, "pass")

    def addSkip(self, test, reason):
        self._record(test, "skip", reason)

    def addFailure(self, test, err):
        self._record(test, "fail", _first_line(err[1]))

    def addError(self, test, err):
        self._record(test, "error", f"{err[0].__name__}: {_first_line(err[1])}")

    def addExpectedFailure(self, test, err):
        self._record(test, "pass")

    def addUnexpectedSuccess(self, test):
        self._record(test, "fail", "unexpected success")


def _first_line(error):
    return (str(error).strip().splitlines() or [""])[0][:240]


def run_file(path, use_tensorflow, workdir, backend="numpy"):
    file = os.path.basename(path)
    try:
        module = load(path, use_tensorflow, workdir, backend)
    except Exception as error:  # noqa: BLE001 - a file that does not load is reported, not raised
        detail = f"{type(error).__name__}: {_first_line(error)}"
        return [{"test": f"{file}::<load>", "outcome": "error", "detail": f"does not load: {detail}",
                 "traceback": traceback.format_exc()[-1500:]}]
    result = _Outcomes(file)
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, unittest.TestCase) and value.__module__ == module.__name__:
            unittest.defaultTestLoader.loadTestsFromTestCase(value).run(result)
    return result.records


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tests", nargs="+")
    parser.add_argument("--tensorflow", action="store_true", help="run against real TensorFlow")
    parser.add_argument("--backend", choices=("numpy", "jax"), default="numpy",
                        help="the backend every autoloop function of the tests runs on")
    parser.add_argument("--json", help="write every test's outcome here")
    parser.add_argument("--show", action="store_true", help="print each failing test")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    records = []
    with tempfile.TemporaryDirectory(prefix="autograph_reference_") as workdir:
        for path in args.tests:
            records += run_file(path, args.tensorflow, workdir, args.backend)

    outcomes = ("pass", "fail", "error", "skip", "documented")
    print(f"{'file':48}" + "".join(f"{o:>11}" for o in outcomes))
    by_file = collections.defaultdict(collections.Counter)
    for r in records:
        by_file[r["test"].split("::")[0]][r["outcome"]] += 1
    total = collections.Counter()
    for file, counts in by_file.items():
        total.update(counts)
        print(f"{file:48}" + "".join(f"{counts[o]:>11}" for o in outcomes))
    print(f"{'TOTAL':48}" + "".join(f"{total[o]:>11}" for o in outcomes))

    print("\nfailures and errors by cause:")
    groups = collections.defaultdict(list)
    for r in records:
        if r["outcome"] in ("fail", "error"):
            cause = re.sub(r"\d+", "N", r["detail"])[:160]
            groups[cause].append(r["test"])
    for cause, tests in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(tests):4}  {cause}\n        e.g. {', '.join(tests[:3])}")
    if args.show:
        for r in records:
            if r["outcome"] in ("fail", "error"):
                print(f"\n{r['test']}: {r['detail']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(records, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
