"""scripts/tf_guides.py and scripts/autograph_reference.py: the comparison rules, without TensorFlow."""

import importlib.util
import os
import sys
import unittest

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


guides = _script("tf_guides")


def test_imports_of_tensorflow_become_imports_of_autoloop():
    source = "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\nfrom tensorflow import nn\nx = 'tensorflow'"
    assert guides.to_autoloop(source) == ("import autoloop as tf\nimport autoloop.compat.v1 as tf1\n"
                                          "from autoloop import nn\nx = 'tensorflow'")


def test_tensor_reprs_compare_by_content_and_numbers_to_float32_precision():
    tf_text = guides.normalise("tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)\n", None)
    al_text = guides.normalise("autoloop.Tensor([[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)\n", None)
    assert guides.same_output(tf_text, al_text)
    assert guides.same_output(guides.normalise("0.30000001", None), guides.normalise("0.3", None))
    assert not guides.same_output(guides.normalise("[1 2]", None), guides.normalise("[1 3]", None))
    assert not guides.same_output(guides.normalise("dtype=int32", None), guides.normalise("dtype=int64", None))
    assert guides.normalise("<object at 0x7f3a>", None) == guides.normalise("<object at 0x55aa>", None)


def test_tracebacks_and_exception_messages_are_dropped_but_the_cell_output_kept():
    output = ("before\nTraceback (most recent call last):\n  File \"x.py\", line 1\n    f()\n"
              "InvalidArgumentError: in user code:\n\n    File ...\n\nafter\nValueError: shape mismatch")
    assert guides.normalise(output, None) == "before after ValueError"


def test_scope_markers_and_dependencies():
    cells = ["import tensorflow as tf\nimport matplotlib.pyplot as plt", "model = tf.keras.Sequential()",
             "model.fit(x)", "y = tf.constant([1])  # keras in a comment", "model = 1\nprint(model)"]
    assert guides.scope_of(cells) == [None, "keras", "uses model (from an out-of-scope cell)", None, None]
    # A function's parameter of the same name does not hide a read of the out-of-scope global.
    cells = ["j = tf.keras.layers.Dense(1)", "def show(j):\n  return j\nshow(j)", "def g(j):\n  return j"]
    assert guides.scope_of(cells)[1:] == ["uses j (from an out-of-scope cell)", None]


def test_classification():
    ok = {"output": "tf.Tensor(2, shape=(), dtype=int32)\n", "value": None, "error": None}
    same = {"output": "autoloop.Tensor(2, shape=(), dtype=int32)\n", "value": None, "error": None}
    raised = {"output": "", "value": None, "error": {"type": "AttributeError", "message": "no Module"}}
    assert guides.classify("print(x)", None, ok, same)[0] == "same"
    assert guides.classify("print(x)", None, ok, raised) == ("error", "AttributeError: no Module")
    assert guides.classify("print(x)", None, raised, ok)[0] == "tf-error"
    assert guides.classify("# only a comment", None, ok, ok)[0] == "empty"
    assert guides.classify("print(x)", "keras", ok, raised) == ("out", "keras")
    extra = {"output": "Tracing\n" + ok["output"], "value": None, "error": None}
    assert guides.classify("print(x)", None, ok, extra)[0] == "print"
    other = {"output": "tf.Tensor(3, shape=(), dtype=int32)\n", "value": None, "error": None}
    assert guides.classify("print(x)", None, ok, other)[0] == "differs"
    # A cell drawing random numbers: the same but for its numbers is counted apart from "same".
    assert guides.classify("print(tf.random.uniform([1]))", None, ok, other)[0] == "nondet-same"
    longer = {"output": "tf.Tensor([3 4], shape=(2,), dtype=int32)\n", "value": None, "error": None}
    assert guides.classify("print(tf.random.uniform([1]))", None, ok, longer)[0] == "nondet"
    # The documented differences: a converted assert's AssertionError, a mutated object's new trace.
    asserted = {"output": "", "value": None, "error": {"type": "AssertionError", "message": "Do not pass zero!"}}
    assert guides.classify("def f(x):\n  assert x != 0, 'no'\nf(0)", None, ok, asserted)[0] == "documented"
    assert guides.classify("model.bias += 5.0\nprint(f(model))", None, ok, other)[0] == "documented"
    assert guides.classify("bias += 5.0\nprint(f(model))", None, ok, other)[0] == "differs"
    assert guides.classify("model.bias += 5.0\nprint(f(x))", None, ok, other)[0] == "differs"


def test_same_but_numbers_ignores_values_and_numpy_padding_not_text_or_count():
    tf_text = guides.normalise("array([[0.5371518 , 0.53190887],\n [-1.2, 0.2]], dtype=float32)", None)
    al_text = guides.normalise("array([[0.04154992, 0.5],\n [0.3 , -0.25]], dtype=float32)", None)
    assert guides.same_but_numbers(tf_text, al_text) and not guides.same_output(tf_text, al_text)
    assert not guides.same_but_numbers("[1 2]", "[1 2 3]")
    assert not guides.same_but_numbers("Eager: 1.5 seconds", "Graph: 1.5 seconds")


def test_cells_run_in_order_in_one_fresh_process():
    cells = ["x = 2\nprint('x is', x)", "def f(y):\n  return y * x\nf(3)", "1 / 0", "x + 1;", "import os"]
    results = guides.run_side(sys.executable, cells, {}, 20, "test")
    assert [r["output"] for r in results[:2]] == ["x is 2\n", ""] and results[1]["value"] == "6"
    assert results[2]["error"]["type"] == "ZeroDivisionError" and results[3]["value"] is None
    assert results[4]["error"] is None
    # An out-of-scope cell runs statement by statement: its setup lines run past a failing one.
    cells = ["layers = tf.keras.layers\nimport math\nz = 1", "print(math.pi > 3, z)"]
    results = guides.run_side(sys.executable, cells, {}, 20, "test", keep_going=[True, False])
    assert results[0]["error"]["type"] == "NameError" and results[1]["output"] == "True 1\n"


reference = _script("autograph_reference")


def test_parameterized_stand_in_expands_cases():
    class Cases(reference.Parameterized.TestCase):
        seen = []

        @reference.Parameterized.parameters((1, 2), (3, 4))
        def test_pairs(self, a, b):
            self.seen.append((a, b))

        @reference.Parameterized.named_parameters(("one", 1), {"testcase_name": "two", "a": 2})
        def test_named(self, a):
            self.seen.append(a)

        @reference.Parameterized.product(a=[1, 2], b=[0])
        def test_product(self, a, b):
            self.seen.append((a, b, "p"))

    names = sorted(n for n in dir(Cases) if n.startswith("test_"))
    assert names == ["test_namedone", "test_namedtwo", "test_pairs0", "test_pairs1", "test_product0", "test_product1"]
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Cases).run(result)
    assert result.wasSuccessful() and sorted(map(str, Cases.seen)) == sorted(
        map(str, [1, 2, (1, 2), (3, 4), (1, 0, "p"), (2, 0, "p")]))


def test_reference_base_compares_native_and_compiled_runs():
    import autoloop

    base = reference.reference_base(autoloop).TestCase

    def count(n):
        i = 0
        while i < n:
            print(i)
            i += 1
        return i

    case = base("run")  # unittest needs a method name; "run" exists on every TestCase
    case.setUp()
    case.assertFunctionMatchesEager(count, autoloop.constant(3))
    case.all_inputs_tensors = True
    case.assertFunctionMatchesEager(count, 2)
    with pytest.raises(AssertionError, match="native 0 printed"):
        case.assertResultsMatch(count, (0,), (0, "", None), (1, "", None))
