"""Nested structures of values: tuples, lists, dicts and namedtuples.

Everything else (tensors, TensorArrays, numbers, None) is a leaf. Dicts are
traversed in sorted key order, as in TensorFlow.

    >>> flatten((1, {"b": 2, "a": [3, 4]}))
    [1, 3, 4, 2]
    >>> pack_sequence_as((0, [0, 0]), [1, 2, 3])
    (1, [2, 3])
"""

from __future__ import annotations

import collections


def is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def is_nested(value) -> bool:
    return isinstance(value, list | tuple | dict)


def children(value):
    """The direct children of a nested `value` (a dict's values in sorted key order)."""
    if isinstance(value, dict):
        return [value[k] for k in sorted_keys(value)]
    return list(value)


def sorted_keys(mapping):
    """`mapping`'s keys in the order nest visits them; TypeError if they cannot be sorted."""
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError(f"nest needs sortable dict keys, got {list(mapping)!r}") from None


def rebuild(template, items):
    """A structure of `template`'s type holding `items` (in the order `children(template)` gives)."""
    if isinstance(template, dict):
        rebuilt = dict(zip(sorted_keys(template), items))
        pairs = [(k, rebuilt[k]) for k in template]
        if isinstance(template, collections.defaultdict):  # its first argument is the default factory
            return type(template)(template.default_factory, pairs)
        return type(template)(pairs)
    if is_namedtuple(template):
        return type(template)(*items)
    if isinstance(template, tuple):
        return tuple(items)
    return list(items)


def flatten(structure) -> list:
    """The leaves of `structure`, depth first."""
    if not is_nested(structure):
        return [structure]
    leaves = []
    for child in children(structure):
        leaves.extend(flatten(child))
    return leaves


def flatten_with_paths(structure, prefix=()):
    """``(path, leaf)`` pairs; a path is a tuple of indices and dict keys."""
    if not is_nested(structure):
        return [(prefix, structure)]
    keys = sorted_keys(structure) if isinstance(structure, dict) else range(len(structure))
    pairs = []
    for key, child in zip(keys, children(structure)):
        pairs.extend(flatten_with_paths(child, prefix + (key,)))
    return pairs


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence` rebuilt in the shape of `structure`."""
    flat_sequence = list(flat_sequence)
    expected = len(flatten(structure))
    if expected != len(flat_sequence):
        raise ValueError(
            f"structure has {expected} leaves but flat_sequence has {len(flat_sequence)}")
    packed, _ = _pack(structure, flat_sequence, 0)
    return packed


def _pack(structure, flat, index):
    if not is_nested(structure):
        return flat[index], index + 1
    packed_children = []
    for child in children(structure):
        packed, index = _pack(child, flat, index)
        packed_children.append(packed)
    return rebuild(structure, packed_children), index


def map_structure(func, *structures):
    """`func` applied leaf-wise to structures of the same shape."""
    if not structures:
        raise ValueError("map_structure needs at least one structure")
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [func(*leaves) for leaves in zip(*flats)])


def assert_same_structure(first, second, check_types=True):
    """Raise ValueError (different nesting) or TypeError (different types).

    With ``check_types=False`` a list and a tuple of the same length match,
    and so do a namedtuple and a tuple.
    """
    problem = _structure_difference(first, second, check_types)
    if problem is not None:
        kind, detail = problem
        raise kind(
            f"The two structures don't have the same nested structure.\n\n"
            f"First structure: {_describe(first)}\n\nSecond structure: {_describe(second)}\n\n"
            f"More specifically: {detail}")


def _structure_difference(first, second, check_types):
    if is_nested(first) != is_nested(second):
        which = "a sequence" if is_nested(first) else "not a sequence"
        return ValueError, f"Substructure {_describe(first)} is {which}, while {_describe(second)} is not"
    if not is_nested(first):
        return None
    if isinstance(first, dict) != isinstance(second, dict):
        return TypeError, f"{type(first).__name__} and {type(second).__name__} differ"
    if check_types and type(first) is not type(second):
        return TypeError, f"type {type(first).__name__} differs from type {type(second).__name__}"
    if isinstance(first, dict) and set(first) != set(second):
        return ValueError, f"dict keys {sorted(first)} differ from {sorted(second)}"
    if len(first) != len(second):
        return ValueError, f"length {len(first)} differs from length {len(second)}"
    for a, b in zip(children(first), children(second)):
        problem = _structure_difference(a, b, check_types)
        if problem is not None:
            return problem
    return None


def _describe(structure):
    return repr(map_structure_up_to_leaves(structure))


def describe_structures(first, second) -> tuple:
    """Two different structures in words, for error messages; the dotted form where words are not enough.

        >>> describe_structures((1, 2), 3)
        ('a tuple of 2 values', 'a single value')
        >>> describe_structures((1, (2, 3)), (1, 2))
        ('a tuple of 2 values (., (., .))', 'a tuple of 2 values (., .)')
    """
    words = (_in_words(first), _in_words(second))
    if words[0] != words[1]:
        return words
    return tuple(f"{word} {_describe(structure)}" for word, structure in zip(words, (first, second)))


def _in_words(structure) -> str:
    if not is_nested(structure):
        return "a single value"
    if isinstance(structure, dict):
        keys = ", ".join(repr(key) for key in structure)
        return f"a {type(structure).__name__} with the keys {keys}" if structure else "an empty dict"
    kind = f"{type(structure).__name__} namedtuple" if is_namedtuple(structure) else type(structure).__name__
    count = f"{len(structure)} value{'s' if len(structure) != 1 else ''}"
    return f"a {kind} of {count}"


def map_structure_up_to_leaves(structure):
    """`structure` with every leaf shown as a dot, for error messages."""
    if not is_nested(structure):
        return _Dot()
    return rebuild(structure, [map_structure_up_to_leaves(c) for c in children(structure)])


class _Dot:
    def __repr__(self):
        return "."
