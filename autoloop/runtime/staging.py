"""What staged loops and branches share: scratch traces, the state they pass, and checks.

A *scratch* trace runs a function into a throwaway graph, to learn what it
returns without building anything that stays. `pack`/`unpack` convert
between what a state function returns (a bare value for one name, a tuple
for several, nothing for none) and the state tuple.
"""

from __future__ import annotations

import re

from autoloop.errors import UnsupportedError
from autoloop.ir import context
from autoloop.ir.graph import Graph
from autoloop.runtime.locations import describe

_ROOT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def pack(values, names) -> tuple:
    """The state tuple from what a state function returned."""
    if len(names) == 1:
        return (values,)
    if not names:
        return ()
    return tuple(values)


def unpack(state, names):
    """What converted code assigns from a state tuple."""
    if len(names) == 1:
        return state[0]
    if not names:
        return None
    return tuple(state)


def scratch_run(function, *args):
    """`function(*args)` traced into a throwaway graph, to learn what it returns."""
    scratch = Graph("scratch", context.current_graph())
    with context.building(scratch):
        return function(*args)


def carried_roots(names) -> set:
    """The variables whose items or attributes are state (``x`` of ``x['k']``, ``self`` of ``self.n``)."""
    roots = set()
    for name in names:
        match = _ROOT.match(name)
        if match is not None and match.end() < len(name):
            roots.add(match.group())
    return roots


def reject_unsupported(unsupported, statement) -> None:
    """NotImplementedError for a construct graph control flow cannot express.

    `unsupported` is what the compiler found, as ``(relation, construct,
    line)``: relation ``"contains"`` (a try statement or a global write
    inside the statement) or ``"enclosed by"`` (the statement is inside a
    try statement's body); None when there is nothing.
    """
    if not unsupported:
        return
    relation, construct, line = unsupported
    what = statement.what
    article = "an" if what[:1] in "aeiou" else "a"
    if relation == "enclosed by":
        statement.fail(UnsupportedError(
            f"{article} {what} whose condition is a Tensor ({describe(statement.location)}) inside {construct} "
            f"(line {line}) cannot be converted to graph control flow: the try statement's handlers "
            f"would never see errors raised when the graph runs; move the try statement out of the "
            f"converted function"))
    statement.fail(UnsupportedError(
        f"{construct} (line {line}) inside {article} {what} whose condition is a Tensor "
        f"({describe(statement.location)}) cannot be converted to graph control flow; move it out of "
        f"the {what.split()[-1]}"))
