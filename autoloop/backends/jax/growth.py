"""Capacities the program grows itself: a loop XLA must bound, which nothing bounds, in a program safe to rerun.

XLA preallocates what a loop appends to or saves for a gradient (or the
ys a scan collects: the frames a compacted gradient saves), so it needs a
bound on the loop's iterations (`autoloop.ir.trips`). Where none is
plain in the loop and none was given (``capacity=``), a program whose runs
have no effect but their results gets a *provisional* capacity for that
loop, `FIRST_CAPACITY`, checked as the loop runs like a given one. A run
that would go past it stops (`CapacityOutgrown`, never a shorter loop); the
program is compiled again with that loop's capacity doubled and run again
on the same inputs, and keeps the larger capacity for its next calls. Past
`MOST_CAPACITY` iterations the loop is a `LoopCapacityError` naming it, as a
given capacity is.

A program is safe to rerun (`rerunnable`) when the only effects it has are
checks: a failed ``assert``, an unbound read, a given capacity, which end
the run with their error, while a check that passes leaves no trace. A
print, a host call (``py_function``, random numbers), or a variable read or
written would be seen twice, or see another value, so such a program keeps
the compile-time `BackendError` that asks for a capacity.

    capacities = {} if rerunnable(graph) else None     # loop node -> its provisional capacity
    facts = ProgramFacts(graph, capacities)          # fills in the loops that need one
"""

from __future__ import annotations

from autoloop.errors import LoopCapacityError, raise_at
from autoloop.ir.effects import has_effects
from autoloop.ops.location import format_location

FIRST_CAPACITY = 64
MOST_CAPACITY = 1 << 20

# Effectful ops whose only effect is to end the run with an error (`autoloop.ops.runtime_checks`, asserts).
CHECK_OPS = frozenset({"Assert", "AssertTrue", "CheckDefined", "CheckAssigned"})


class CapacityOutgrown(LoopCapacityError):
    """A run went past the provisional capacity of `loop`: grow it and run again (never seen by the user)."""

    def __init__(self, loop):
        super().__init__(f"the loop at {format_location(loop.location)} went past its provisional capacity")
        self.loop = loop


def rerunnable(graph) -> bool:
    """Whether running `graph` twice on the same inputs is seen only in its results; see the module docstring."""
    from autoloop.backends.jax.lowering import calls_host
    return not any(calls_host(node) or (has_effects(node) and node.op not in CHECK_OPS and not node.subgraphs())
                   for node in graph.walk())


def capacity_site(node, capacity: int):
    """The site rule of the loop `node` with the provisional `capacity`: it fails when an iteration would go
    past it, and then asks for a larger one, or past `MOST_CAPACITY` raises the user's `LoopCapacityError`."""
    def reproduce():
        if capacity * 2 > MOST_CAPACITY and node.op == "Scan":
            raise_at(LoopCapacityError(
                f"the scan at {format_location(node.location)} would run more than {capacity} frames, the most "
                f"backend='jax' preallocates for its ys without a bound; the scan is never cut short. Give it "
                f"max_seq_len (or xs, or spatial_dim), or run on backend='numpy'"), node.location)
        if capacity * 2 > MOST_CAPACITY:
            raise_at(LoopCapacityError(
                f"the loop at {format_location(node.location)} would run more than {capacity} iterations, the "
                f"most backend='jax' preallocates for what it appends or saves without a capacity; the loop is "
                f"never cut short. Give it a capacity (while_loop(..., capacity=N), or "
                f"autoloop.set_loop_options(capacity=N) as the first statement of its body), or run on "
                f"backend='numpy'"), node.location)
        raise CapacityOutgrown(node)
    return (), reproduce
