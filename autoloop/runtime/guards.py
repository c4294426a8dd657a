"""Python containers that graph control flow must not change behind its back.

A staged loop body or branch is traced (once, or a few times), not run once
per iteration or only when taken. A change it makes to a Python list, dict
or set that it does not carry as state (``l.pop()``, ``d[k] = v`` through a
helper, ``del cache[k]``) would happen while tracing: a wrong answer.
`ContainerGuard` records the containers a staged statement's functions can
reach (through their closures and the globals they name) and, once the
statement is traced, restores any that changed and raises an error naming
the container and the statement.

    guard = ContainerGuard([loop_body, loop_cond], carried_roots={"self"})
    ...trace the statement...
    guard.check(statement)       # ValueError: ... changes the Python list 'history' ...
"""

from __future__ import annotations

import types

_CONTAINERS = (list, dict, set)
_MAX_SIZE = 1_000  # bigger containers are compared by size only (and not restored)


class ContainerGuard:
    """Snapshots of the containers `functions` reach; see the module docstring.

    `carried_roots` names variables whose containers the statement carries
    as state (``x`` of ``x['k']``): converted code writes those while tracing
    on purpose, so they are not guarded.
    """

    def __init__(self, functions, carried_roots=()):
        self._entries = []
        seen = set()
        for label, container in _reachable(functions, set(carried_roots)):
            if id(container) not in seen:
                seen.add(id(container))
                self._entries.append((label, container, _snapshot(container)))

    def check(self, statement) -> None:
        """Raise (after restoring them) if any guarded container changed while `statement` was traced."""
        changed = [(label, container, before) for label, container, before in self._entries
                   if not _unchanged(container, before)]
        if not changed:
            return
        label, container, before = changed[0]
        after = len(container)
        for _, changed_container, snapshot in changed:
            _restore(changed_container, snapshot)
        kind = type(container).__name__
        statement.fail(ValueError(
            f"{statement} is graph control flow, and it changes the Python {kind} '{label}' "
            f"({_size(before)} items before, {after} after tracing it), which it does not "
            f"carry as a loop variable or branch output: the change would happen once while tracing, "
            f"not when the graph runs. Change '{label}' outside the {statement.what}; a list that the "
            f"{statement.what} appends to by its own name (``{label}.append(x)``) is carried"))


def _reachable(functions, carried_roots):
    for function in functions:
        code = getattr(function, "__code__", None)
        if code is None:
            continue
        for name, cell in zip(code.co_freevars, function.__closure__ or ()):
            if name in carried_roots:
                continue
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if type(value) in _CONTAINERS:
                yield name, value
        namespace = getattr(function, "__globals__", {})
        for name in _global_names(code):
            if name not in carried_roots and type(namespace.get(name)) in _CONTAINERS:
                yield name, namespace[name]


def _global_names(code):
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def _snapshot(container):
    if len(container) > _MAX_SIZE:
        return ("size", len(container))
    if isinstance(container, dict):
        return ("dict", list(container.items()))
    return (type(container).__name__, list(container))


def _size(snapshot) -> int:
    return snapshot[1] if snapshot[0] == "size" else len(snapshot[1])


def _unchanged(container, before) -> bool:
    """Same size and, for a list, the same items; for a dict the same keys (values may be carried)."""
    kind, contents = before
    if kind == "size":
        return len(container) == contents
    if len(container) != len(contents):
        return False
    if kind == "list":
        return all(a is b for a, b in zip(container, contents))
    if kind == "dict":
        return all(key in container for key, _ in contents)
    return all(item in container for item in contents)


def _restore(container, before):
    kind, contents = before
    if kind == "size":
        return
    container.clear()
    if kind == "dict":
        container.update(contents)
    elif kind == "list":
        container.extend(contents)
    else:
        container.update(contents)
