"""TensorFlow names that autoloop leaves out on purpose, and what to use instead.

``autoloop.Variable`` (and the others below) raise an `AttributeError` that
says so, instead of Python's bare "has no attribute": a TensorFlow user
porting code learns at once that the name is missing by design.

    >>> autoloop.strings
    AttributeError: autoloop has no strings module: tensors hold numbers and booleans ...
"""

from __future__ import annotations

import importlib.util

_WHY = {
    "Variable": ("autoloop has no Variable outside TF1-style graphs: a traced function's state lives in "
                 "its arguments, its loop variables and what it returns, so pass the value in and "
                 "return the new one"),
    "data": ("autoloop has no data module (tf.data input pipelines): pass numpy arrays or tensors to "
             "your function, and batch or shuffle them with numpy in plain Python around the call"),
    "distribute": ("autoloop has no distribute module (tf.distribute strategies): to run over several "
                   "devices, processes or hosts, make the function with backend='jax' and shard its batch "
                   "with autoloop.distributed (JAX's own distributed runtime)"),
    "strings": ("autoloop has no strings module: tensors hold numbers and booleans only; keep strings "
                "as Python values (a function traces once per distinct Python value)"),
}


def _compat_hint(name: str) -> str:
    if name == "Variable" and importlib.util.find_spec("autoloop.compat") is not None:
        return "; TF1-style graphs create variables with autoloop.compat.v1.get_variable"
    return ""


def __getattr__(name: str):
    """The module-level hook of `autoloop` (PEP 562): called only for names it does not define."""
    if name in _WHY:
        raise AttributeError(f"{_WHY[name]}{_compat_hint(name)}.", name=name, obj=None)
    raise AttributeError(f"module 'autoloop' has no attribute {name!r}", name=name, obj=None)
