"""autoloop: plain Python loops and branches, compiled to graphs and run on numpy or XLA.

This module names the public API (docs/api.md describes it) and defines
nothing else. ``import autoloop`` loads numpy and the dtypes only; every
other name is loaded the first time it is used (PEP 562's module
``__getattr__``), together with the op library, so that a script that only
imports autoloop (the command line's ``--help``, a library that imports it
to check types) starts fast. ``dir(autoloop)`` and tab completion show the
public names, not the modules that implement them. Type checkers read the
names from ``__init__.pyi`` (``python scripts/public_stub.py`` writes it
after a name is added here).
"""

from autoloop.dtypes import (  # noqa: A004 - bool shadows the builtin on purpose, as tf.bool does
    DType, as_dtype, bool_ as bool, double, float16, float32, float64, half, int8, int16, int32, int64, uint8)

import functools

__version__ = "0.1.0"

# Public name -> "module" (the name is that module) or "module:attribute".
_PUBLIC = {
    # modules and namespaces
    **{name: f"autoloop.{name}" for name in (
        "autodiff", "autograph", "compat", "config", "debugging", "distributed", "errors", "linalg", "math", "nest",
        "nn", "random", "sparse", "types")},
    # values and shapes
    "TensorShape": "autoloop.shapes:TensorShape",
    "Tensor": "autoloop.tensor:Tensor",
    "is_tensor": "autoloop.tensor:is_tensor",
    "TensorSpec": "autoloop.arguments:TensorSpec",
    "Variable": "autoloop.variables:Variable",
    "Module": "autoloop.module:Module",
    # control flow and composite values
    "while_loop": "autoloop.control_flow.while_loop:while_loop",
    "cond": "autoloop.control_flow.cond:cond",
    "scan": "autoloop.control_flow.scan:scan",
    "case": "autoloop.control_flow.case:case",
    "switch_case": "autoloop.control_flow.case:switch_case",
    "TensorArray": "autoloop.control_flow.tensor_array:TensorArray",
    "IndexedSlices": "autoloop.control_flow.sparse:IndexedSlices",
    "SparseTensor": "autoloop.control_flow.sparse:SparseTensor",
    # the compiler
    "function": "autoloop.traced_function:function",
    "Function": "autoloop.traced_function:Function",
    "RetracingWarning": "autoloop.traced_function:RetracingWarning",
    "ConcreteFunction": "autoloop.concrete_function:ConcreteFunction",
    "do_not_convert": "autoloop.compiler.api:do_not_convert",
    "set_loop_options": "autoloop.compiler.api:set_loop_options",
    "to_code": "autoloop.compiler.api:to_code",
    "to_graph": "autoloop.compiler.api:to_graph",
    # gradients
    "GradientTape": "autoloop.autodiff:GradientTape",
    "gradients": "autoloop.autodiff:gradients",
    "UnconnectedGradients": "autoloop.autodiff:UnconnectedGradients",
    "custom_gradient": "autoloop.autodiff:custom_gradient",
    "recompute_grad": "autoloop.autodiff:recompute_grad",
    "hessians": "autoloop.autodiff:hessians",
    # functional loops and batching
    "map_fn": "autoloop.control_flow.functional:map_fn",
    "foldl": "autoloop.control_flow.functional:foldl",
    "foldr": "autoloop.control_flow.functional:foldr",
    "vectorized_map": "autoloop.batching.vectorized_map:vectorized_map",
    # pictures
    "visualize": "autoloop.pictures:visualize",
}
_OPS = "autoloop.ops.api"  # every op function (constant, add, reduce_sum, print, ...) is defined there


def __getattr__(name: str):
    """A public name, loaded now and kept (the next use is a plain attribute read)."""
    import importlib
    import importlib.util
    importlib.import_module(_OPS)  # the op library: every public name may need its ops and Tensor's operators
    target = _PUBLIC.get(name)
    if target is not None:
        module, _, attribute = target.partition(":")
        value = importlib.import_module(module)
        if attribute:
            value = getattr(value, attribute)
    elif name in _op_names():
        value = getattr(importlib.import_module(_OPS), name)
    elif not name.startswith("_") and importlib.util.find_spec(f"autoloop.{name}") is not None:
        return importlib.import_module(f"autoloop.{name}")  # an internal module, reached by its path: not public
    else:
        from autoloop.absent import __getattr__ as absent
        return absent(name)  # TensorFlow names left out on purpose say what to use instead
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    dtypes = [name for name, value in globals().items() if isinstance(value, DType)] + ["DType", "as_dtype"]
    return sorted({*_PUBLIC, *_op_names(), *dtypes, "__version__"})


@functools.cache
def _op_names() -> frozenset:
    import importlib
    import types
    ops = importlib.import_module(_OPS)
    return frozenset(name for name, value in vars(ops).items()
                     if not name.startswith("_") and not isinstance(value, types.ModuleType))
