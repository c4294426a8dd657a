"""What TensorFlow's AutoGraph reference tests check, in autoloop's own words.

The reference tests (run by scripts/autograph_reference.py, not part of this
repository) match the words of TensorFlow's errors for loop variables that
change across an iteration, and for generators. autoloop's messages start
with TensorFlow's sentence and go on with the user's line and the fix. The
runner also maps the TensorFlow imports those files make to autoloop modules.
"""

import importlib.util
import os
import sys

import pytest

import autoloop as al
from autoloop.errors import LoopVariableTypeError, ShapeInvariantError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BACKENDS = ["numpy", "jax"]


def dtype_changes(n):
    x = al.constant(0)
    while n > 0:
        x = al.constant(0.5)
        n -= 1
    return x


def dtype_changes_before_a_break(n):
    x = al.constant(0)
    while n > 0:
        x = al.constant(0.5)
        break
    return x


def shape_changes(n):
    t = al.constant([1])
    for _ in al.range(n):
        t = al.constant([1, 1])
    return t


def shape_breaks_its_invariant(n):
    t = al.constant([1])
    for _ in al.range(n):
        al.set_loop_options(shape_invariants=[(t, al.TensorShape([1]))])
        t = al.range(n)
    return t


def structure_changes(n):
    s = [al.constant(0)]
    for _ in al.range(n):
        s = s + [al.constant(0)]
    return s


def structure_changes_in_a_dict(n):
    s = {"a": al.constant(0)}
    while n > 0:
        s = al.constant(7.0)
    return s


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("function, error, words", [
    (dtype_changes, LoopVariableTypeError,
     "loop variable 'x' has dtype int32 before the loop, but dtype float32 after one iteration; a loop variable "
     "must keep its dtype"),
    (dtype_changes_before_a_break, LoopVariableTypeError,
     "loop variable 'x' has dtype int32 before the loop, but dtype float32 after one iteration of the while loop at"),
    (shape_changes, ShapeInvariantError,
     "loop variable 't' has shape (1,) before the loop, but shape (2,) after one iteration. To allow the shape to "
     "vary across iterations, declare it with autoloop.set_loop_options(shape_invariants=[(t, "),
    (shape_breaks_its_invariant, ShapeInvariantError,
     "loop variable 't' has shape (None,) after one iteration, which does not conform with its shape invariant (1,)"),
    (structure_changes, LoopVariableTypeError,
     "loop variable 's' does not have the same nested structure after one iteration"),
    (structure_changes_in_a_dict, LoopVariableTypeError,
     "loop variable 's' does not have the same nested structure after one iteration of the while loop at"),
])
def test_a_loop_variable_that_changes_is_reported_in_tensorflow_words(function, error, words, backend_name):
    with pytest.raises(error) as raised:
        al.function(function, backend=backend_name)(al.constant(3))
    assert words in str(raised.value)


def test_while_loop_says_the_same_eagerly_and_traced():
    def body(i, t):
        return i + 1, al.concat([t, t], 0)

    args = (lambda i, t: i < 2, body, (al.constant(0), al.constant([1.0])))
    words = "loop variable loop_vars[1] has shape (1,) before the loop, but shape (2,) after one iteration"
    with pytest.raises(ShapeInvariantError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        al.while_loop(*args)
    with pytest.raises(ShapeInvariantError, match=r"has shape \(1,\) before the loop, but shape \(2,\) after"):
        al.function(lambda: al.while_loop(*args))()
    given = "has shape (2,) after one iteration, which does not conform with its shape invariant (1,)"
    with pytest.raises(ShapeInvariantError) as raised:
        al.while_loop(*args, shape_invariants=(al.TensorShape([]), al.TensorShape([1])))
    assert given in str(raised.value)
    # An invariant for one loop variable leaves the other's message the plain one.
    with pytest.raises(ShapeInvariantError, match=r"loop_vars\[1\] has shape \(1,\) before the loop"):
        al.while_loop(*args, shape_invariants=(al.TensorShape([]), None))


def yields(n):
    for i in range(n):
        yield i


def test_a_generator_says_generators_are_not_supported():
    with pytest.raises(NotImplementedError, match=r"'yield' in yields: generators are not supported"):
        al.function(yields)(2)


def _runner():
    spec = importlib.util.spec_from_file_location("autograph_reference", os.path.join(ROOT, "scripts",
                                                                                      "autograph_reference.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["autograph_reference"] = module
    spec.loader.exec_module(module)
    return module


def test_the_runner_maps_compat_v1_and_the_autograph_module_to_autoloop(tmp_path):
    test_file = tmp_path / "imports_test.py"
    test_file.write_text(
        "import tensorflow.compat.v1 as tf\n"
        "from tensorflow.python import autograph as ag\n"
        "from tensorflow.python.autograph.tests import reference_test_base\n\n\n"
        "def twice(x):\n"
        "  return x * tf.constant(2)\n\n\n"
        "class ReferenceTest(reference_test_base.TestCase):\n\n"
        "  def test_twice(self):\n"
        "    self.assertFunctionMatchesEager(twice, tf.constant(3))\n\n"
        "  def test_modules(self):\n"
        "    assert tf.placeholder is not None and ag.to_code is not None\n"
        "    tf.ragged.constant([[1]])\n")
    runner = _runner()
    records = runner.run_file(str(test_file), False, str(tmp_path))
    outcomes = {r["test"]: (r["outcome"], r["detail"]) for r in records}
    assert outcomes["imports_test.py::test_twice"] == ("pass", "")
    # compat.v1 is autoloop.compat.v1 (placeholder is a TF1 name), with the out-of-scope stand-ins.
    assert outcomes["imports_test.py::test_modules"] == ("documented", "ragged tensors are out of scope")


def test_the_runner_runs_every_function_of_the_tests_on_the_backend_asked_for():
    runner = _runner()
    assert runner._AutoloopAsTF("autoloop").function(yields).backend == "numpy"
    assert runner._AutoloopAsTF("autoloop", "jax").function(yields).backend == "jax"
    assert runner._AutoloopAsTF("autoloop.compat.v1", "jax").function(yields).backend == "jax"
