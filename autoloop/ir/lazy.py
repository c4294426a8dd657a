"""Rules named by ``"module:function"``, imported when first used.

Registrations in a low layer (an op's jax kernel, a control-flow op's code
generator) name rules that live in a higher layer or need an optional
package. A string keeps the import arrow pointing down and keeps
``import autoloop`` from importing jax:

    >>> resolve("autoloop.execute.codegen:write_while")
    <function write_while at ...>
"""

from __future__ import annotations

import functools
import importlib


def resolve(rule):
    """`rule` itself if it is callable (or None); the named function if it is a string."""
    if rule is None or callable(rule):
        return rule
    return _import(rule)


@functools.cache  # a pure function of the name: import once
def _import(reference: str):
    module_name, _, attribute = reference.partition(":")
    if not attribute:
        raise ValueError(f"a rule reference is 'module:function', got {reference!r}")
    return getattr(importlib.import_module(module_name), attribute)
