"""The public face: `dir(autoloop)` lists public names only, `import autoloop` loads little, every name loads.

``import autoloop`` loads numpy and the dtypes; a name is loaded the first time it is used. The
internal modules stay reachable by their paths (``autoloop.execute.interpreter``) but are not listed.
"""

from __future__ import annotations

import subprocess
import sys
import types

import autoloop

INTERNAL = {"absent", "arguments", "backends", "cli", "compiler", "concrete_function", "control_flow", "execute",
            "ir", "ops", "runtime", "shapes", "source_map", "tensor", "tracebacks", "loop_options", "batching",
            "pictures", "symbolic_errors", "signatures", "variables", "module", "traced_function", "dtypes"}
API_NAMES = [  # a sample of API.md's names across its sections
    "function", "Function", "ConcreteFunction", "to_code", "to_graph", "do_not_convert", "set_loop_options", "config",
    "autograph", "py_function", "numpy_function", "Tensor", "TensorShape", "TensorSpec", "bool", "int32", "float32",
    "constant", "convert_to_tensor", "zeros", "range", "cast", "reduce_sum", "matmul", "where", "concat", "stack",
    "gather", "one_hot", "TensorArray", "SparseTensor", "IndexedSlices", "nest", "print", "Assert", "Variable",
    "Module", "while_loop", "cond", "scan", "gradients", "GradientTape", "map_fn", "foldl", "foldr",
    "vectorized_map", "custom_gradient", "recompute_grad", "hessians", "autodiff", "compat", "visualize",
    "distributed", "math", "nn", "linalg", "random", "sparse", "debugging", "errors"]


def test_dir_lists_public_names_and_no_internal_module():
    names = dir(autoloop)
    assert not INTERNAL & set(names), sorted(INTERNAL & set(names))
    assert set(API_NAMES) <= set(names), sorted(set(API_NAMES) - set(names))
    assert not any(name.startswith("_") and name != "__version__" for name in names)


def test_every_listed_name_loads_and_no_listed_name_is_an_internal_module():
    for name in dir(autoloop):
        value = getattr(autoloop, name)
        if isinstance(value, types.ModuleType):
            assert name in API_NAMES or value.__name__.startswith("autoloop."), name


def test_import_loads_numpy_and_the_dtypes_only():
    code = ("import sys, autoloop; loaded = sorted(m for m in sys.modules if m.startswith('autoloop')); "
            "print(loaded); print('jax' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    loaded, jax = result.stdout.splitlines()
    assert eval(loaded) == ["autoloop", "autoloop.dtypes"] and jax == "False"


def test_internal_modules_stay_reachable_by_their_paths():
    from autoloop.execute import interpreter
    assert autoloop.execute.interpreter is interpreter
    assert "execute" not in dir(autoloop)


def test_a_name_left_out_on_purpose_says_what_to_use_instead():
    try:
        autoloop.strings  # noqa: B018
    except AttributeError as error:
        assert "no strings module" in str(error)
    else:
        raise AssertionError("autoloop.strings should not exist")
