"""TensorFlow names that autoloop leaves out on purpose, and what to use instead.

``autoloop.data`` (and the others below) raise an `AttributeError` that
says so, instead of Python's bare "has no attribute": a TensorFlow user
porting code learns at once that the name is missing by design.

    >>> autoloop.strings
    AttributeError: autoloop has no strings module: tensors hold numbers and booleans ...
"""

from __future__ import annotations

_WHY = {
    "data": ("autoloop has no data module (tf.data input pipelines): pass numpy arrays or tensors to "
             "your function, and batch or shuffle them with numpy in plain Python around the call"),
    "distribute": ("autoloop has no distribute module (tf.distribute strategies): to run over several "
                   "devices, processes or hosts, make the function with backend='jax' and shard its batch "
                   "with autoloop.distributed (JAX's own distributed runtime)"),
    "strings": ("autoloop has no strings module: tensors hold numbers and booleans only; keep strings "
                "as Python values (a function traces once per distinct Python value)"),
}


def __getattr__(name: str):
    """The module-level hook of `autoloop` (PEP 562): called only for names it does not define."""
    if name in _WHY:
        raise AttributeError(f"{_WHY[name]}.", name=name, obj=None)
    raise AttributeError(f"module 'autoloop' has no attribute {name!r}", name=name, obj=None)
