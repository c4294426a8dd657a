"""Composite names: ``x``, ``self.x``, ``a[0]``, ``d['k']`` as plain strings.

A composite name is what the analyses track for an attribute or a subscript
with a constant index: assigning ``self.x`` modifies ``"self.x"``. The
string is also how the user wrote it, so it appears as-is in messages.

    >>> composite_name(parse("self.items[0]"))
    "self.items[0]"
"""

from __future__ import annotations

import gast

WHOLE = ".*"  # suffix marking "every composite name below this one may be read"


def composite_name(node) -> str | None:
    """The composite name `node` denotes, or None if it is not one."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        base = composite_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    if isinstance(node, gast.Subscript):
        base = composite_name(node.value)
        index = node.slice
        if base is None or not isinstance(index, gast.Constant):
            return None
        if not isinstance(index.value, (int, str)) or isinstance(index.value, bool):
            return None
        return f"{base}[{index.value!r}]"
    return None


def prefixes(name: str) -> list[str]:
    """The proper prefixes of a composite name, shortest first.

    >>> prefixes("self.a[0]")
    ['self', 'self.a']
    """
    result, depth = [], 0
    for position, char in enumerate(name):
        if char == "[":
            if depth == 0:
                result.append(name[:position])
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "." and depth == 0:
            result.append(name[:position])
    return result


def root(name: str) -> str:
    found = prefixes(name)
    return found[0] if found else name


def is_composite(name: str) -> bool:
    return not name.isidentifier()


def parameter_name(name: str) -> str:
    """An identifier standing for a composite name: ``self.x`` -> ``self_x``."""
    identifier = "".join(char if char.isalnum() or char == "_" else "_" for char in name)
    while "__" in identifier:
        identifier = identifier.replace("__", "_")
    return identifier.strip("_") or "value"


def is_live(name: str, live) -> bool:
    """Whether `name` is live given a live set that may hold WHOLE markers."""
    if name in live or name + WHOLE in live:
        return True
    if name.isidentifier():  # a plain name has no prefixes
        return False
    return any(prefix + WHOLE in live for prefix in prefixes(name))
