"""Python containers that graph control flow must not change behind its back.

A staged loop body or branch is traced (once, or a few times), not run once
per iteration or only when taken. A change it makes to a Python list, dict
or set that it does not carry as state (``l.pop()``, ``del cache[k]``, an
append inside a helper function) would happen while tracing: a wrong
answer. `ContainerGuard` records the containers a staged statement's
functions can reach (through their closures, the globals they name, and
the closures and globals of the functions those hold) and, after each
attempt at tracing the statement, restores any that changed and raises an
error naming the container and the statement.

    guard = ContainerGuard([loop_body, loop_cond], carried_roots={"lookup"})
    ...trace the statement...
    guard.check(statement)       # ValueError: ... changes the Python list 'history' ...

Containers whose items the statement carries as state (``lookup`` of
``lookup['k']``) are written on purpose while tracing; for those only
removals count (a list that shrinks or grows, a dict that loses a key).
"""

from __future__ import annotations

import types

_CONTAINERS = (list, dict, set)
_MAX_SIZE = 1_000  # bigger containers are compared by size only (and not restored)
_DEPTH = 2  # functions reached through functions


def _shared_cells(functions) -> list:
    """The closure cells of `functions`, and of the functions those cells hold (a wrapper such
    as ``lambda *s: loop_body(item, *s)`` reaches the loop body's shared variables that way)."""
    cells, seen = [], set()
    for function in functions:
        for cell in getattr(function, "__closure__", None) or ():
            if id(cell) not in seen:
                seen.add(id(cell))
                cells.append(cell)
            inner = _cell_value(cell)
            for inner_cell in getattr(inner, "__closure__", None) or ():
                if callable(inner) and id(inner_cell) not in seen:
                    seen.add(id(inner_cell))
                    cells.append(inner_cell)
    return cells


class ContainerGuard:
    """Snapshots of the containers `functions` reach; see the module docstring."""

    def __init__(self, functions, carried_roots=()):
        self._entries = []
        seen = set()
        for label, container in _reachable(functions, _DEPTH, set()):
            if id(container) not in seen:
                seen.add(id(container))
                carried = label in carried_roots
                self._entries.append((label, container, _snapshot(container), carried))
        self._cells = [(cell, _cell_value(cell)) for cell in _shared_cells(functions)]

    def restore_cells(self) -> None:
        """Put back the variables the statement's functions share with the code around them.

        A body writes a shared variable (``nonlocal``) while it is traced; when
        staging the statement fails, the code around it (a ``finally``) must
        not read a value of a graph that was never built.
        """
        for cell, value in self._cells:
            if value is _EMPTY:
                continue
            if _cell_value(cell) is not value:
                cell.cell_contents = value

    def check(self, statement) -> None:
        """Raise (after restoring them) if any guarded container changed while `statement` was traced."""
        changed = [entry for entry in self._entries if not _unchanged(*entry[1:])]
        if not changed:
            return
        label, container, before, _ = changed[0]
        after = len(container)
        for _, changed_container, snapshot, _ in changed:
            _restore(changed_container, snapshot)
        kind = type(container).__name__
        statement.fail(ValueError(
            f"{statement} is graph control flow, and it changes the Python {kind} '{label}' "
            f"({_size(before)} items before, {after} after tracing it), which it does not carry as a "
            f"loop variable or branch output: the change would happen once while tracing, not when "
            f"the graph runs. Change '{label}' outside the {statement.what}; a list that the "
            f"{statement.what} appends to by its own name (``{label}.append(x)``) is carried"))


_EMPTY = object()


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # not assigned yet
        return _EMPTY


def _reachable(functions, depth, visited):
    for function in functions:
        code = getattr(function, "__code__", None)
        if code is None or id(code) in visited:
            continue
        visited.add(id(code))
        values = []
        for name, cell in zip(code.co_freevars, function.__closure__ or ()):
            try:
                values.append((name, cell.cell_contents))
            except ValueError:
                continue
        namespace = getattr(function, "__globals__", {})
        values += [(name, namespace[name]) for name in _global_names(code) if name in namespace]
        inner = []
        for name, value in values:
            if type(value) in _CONTAINERS:
                yield name, value
            elif isinstance(value, types.FunctionType) and depth > 0:
                inner.append(value)
        yield from _reachable(inner, depth - 1, visited)


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


def _unchanged(container, before, carried) -> bool:
    kind, contents = before
    if kind == "size":
        return len(container) == contents
    if kind == "dict":
        keys_kept = all(key in container for key, _ in contents)
        return keys_kept if carried else keys_kept and len(container) == len(contents) and all(
            container[key] is value for key, value in contents)
    if len(container) != len(contents):
        return False
    if kind == "list":
        return carried or all(a is b for a, b in zip(container, contents))
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
