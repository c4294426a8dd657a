"""`set_loop_options`, the directive converted code moves onto a loop, and the names of its options.

A leaf module: the compiler reads `OPTION_NAMES` to move a directive's
arguments onto its loop, the runtime reads `LOOP_OPTION_NAMES` to pass them
on, and both stay below nothing that imports them back.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from autoloop import source_map
from autoloop.errors import raise_at


def set_loop_options(shape_invariants: Any = None, maximum_iterations: Any = None, parallel_iterations: int | None = None,
                     swap_memory: bool | None = None, checkpoint: Any = None, capacity: int | None = None) -> None:
    """Options for the loop whose body this call starts (in converted code).

    As the first statement of a loop body, the compiler moves the call's
    arguments onto that loop, so in converted code a directive is never
    called. Any other call in converted code cannot apply to a loop and
    raises when it runs; in plain, unconverted Python it does nothing.
    `shape_invariants` is a list of ``(variable, TensorShape)`` pairs;
    `checkpoint` is `while_loop`'s (bounded memory for gradients through the
    loop); so is `capacity` (the most iterations the loop may run, where
    ``backend="jax"`` needs a bound for what it appends or saves: one more is
    an error, where ``maximum_iterations`` would stop the loop).

        while i < n:
            autoloop.set_loop_options(shape_invariants=[(x, autoloop.TensorShape([None]))])
            x = autoloop.concat([x, [i]], 0)
            i += 1
    """
    caller = sys._getframe(1)
    if source_map.is_generated(caller.f_code.co_filename):
        location = source_map.lookup(caller.f_code.co_filename, caller.f_lineno)
        where = f" at {location[0]}, line {location[1]}" if location else ""
        raise_at(ValueError(
            f"set_loop_options(...){where} is not the first statement of a loop body, so it applies "
            f"to no loop; make it the first statement of the body of the loop it is meant for"), location)
    return None


# Every option, in the order of the signature (a directive's positional arguments follow it).
OPTION_NAMES = tuple(inspect.signature(set_loop_options).parameters)
# The options a loop takes as they are (shape invariants are matched to loop variables first).
LOOP_OPTION_NAMES = tuple(name for name in OPTION_NAMES if name != "shape_invariants")
