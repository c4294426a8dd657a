"""``autograph.experimental.Feature``: TensorFlow's optional conversion features, accepted by name.

TensorFlow converts some constructs only when ``experimental_autograph_options``
names them. autoloop converts all of them always, so the options change
nothing; they are accepted so that TensorFlow code runs as written:

- ``LISTS``: ``list.append`` in a graph loop — always converted (the list
  comes out as a list-like value, `autoloop.stack` gives a tensor);
- ``ASSERT_STATEMENTS``: ``assert`` — always converted (checked when the
  graph runs);
- ``BUILTIN_FUNCTIONS``: ``len``, ``range``, ``print``, ``enumerate``,
  ``zip``... on tensors — always converted (``print`` stays Python's print,
  printing on every call; see the README);
- ``EQUALITY_OPERATORS``: ``==``/``!=`` on tensors — always element-wise;
- ``AUTO_CONTROL_DEPS``: effects keep program order — always (the IR's
  effect chain);
- ``NAME_SCOPES``: names of ops — autoloop's op names follow its own rules;
- ``ALL``: all of the above.
"""

from __future__ import annotations

import enum


class Feature(enum.Enum):
    """One optional conversion feature of TensorFlow's AutoGraph (see the module docstring)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def check_features(options, argument: str = "experimental_autograph_options") -> None:
    """TypeError unless `options` (given as `argument`) is None, a `Feature` or a list or tuple of them."""
    items = options if isinstance(options, list | tuple) else [options] if options is not None else []
    for item in items:
        if not isinstance(item, Feature):
            raise TypeError(f"{argument} takes autoloop.autograph.experimental.Feature values (a Feature or a "
                            f"tuple of them), got {item!r}")
