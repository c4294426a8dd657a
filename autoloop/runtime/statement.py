"""The loop or branch being staged, as messages name it: ``the while loop at model.py:12``.

A `Statement` is what every message about a staged statement's state
speaks of (`autoloop.runtime.layout_rejections`, the graph op's own errors
through `Statement.described`): the statement and its line, its two paths
(``in the if branch`` / ``in the else branch``, or the jump conversion put
there), and how a variable is named (``'y'``, or ``the return value``).
"""

from __future__ import annotations

import dataclasses
from typing import NoReturn

from autoloop.errors import stopping_conversion
from autoloop.runtime.layout import FIXED, MAYBE
from autoloop.runtime.locations import describe, raise_from_user


@dataclasses.dataclass(frozen=True)
class Statement:
    """The statement being staged, for messages: ``the while loop at model.py:12``.

    A `guard` is the ``if`` conversion put after a ``return``, ``break`` or
    ``continue`` to skip the code that follows it: ``(jump, lines)``, or
    ``("return", lines, retval)`` naming the variable that holds the return
    value. Messages then speak of that jump, never of an ``if`` the user did
    not write:

        'y' is float32 where the break at line 7 did not run and int32 where the break at line 7 ran
    """

    what: str  # "while loop", "for loop", "if statement"
    location: tuple | None
    guard: tuple | None = None
    # the names the compiler made, each with what it stands for (`autoloop.source_map.generated_names`)
    generated: dict = dataclasses.field(default_factory=dict, compare=False)

    def __str__(self):
        if self.guard is not None:
            return f"the code after {self._jumps()} (at {describe(self.location)})"
        return f"the {self.what} at {describe(self.location)}"

    @property
    def sides(self) -> tuple:
        """How messages name the two paths of an ``if``: (taken, not taken)."""
        if self.guard is None:
            return ("in the if branch", "in the else branch")
        jump, lines = self.guard[:2]
        if not lines:
            return (f"where no {jump} ran", f"where a {jump} ran")
        if len(lines) == 1:
            return (f"where the {jump} at line {lines[0]} did not run", f"where the {jump} at line {lines[0]} ran")
        jumps = self._jumps()
        return (f"where none of {jumps} ran", f"where one of {jumps} ran")

    @property
    def of(self) -> str:
        """What follows the paths in a message: `` of the if statement at ...`` (a guard's paths say it all)."""
        return "" if self.guard is not None else f" of {self}"

    def subject(self, name: str) -> str:
        """How messages name variable `name`: ``'y'``; a name the compiler made, as what the user wrote:
        ``the return value (of the returns at lines 4 and 6)``, ``whether the break at line 9 ran``
        (the lines left out where this statement's paths already say them)."""
        meaning = self.generated.get(name)
        if meaning is None:
            return f"'{name}'"
        what, lines = meaning
        if what == "return value":
            if self.guard is not None and self.guard[2:] == (name,):
                return "the return value"
            return f"the return value (of {_jump_words('return', lines)})" if lines else "the return value"
        return f"whether {_jump_words(what, lines)} ran"

    def is_return_value(self, name: str) -> bool:
        return self.generated.get(name, ("",))[0] == "return value"

    def loop_variable(self, name: str) -> str:
        """``loop variable 'y'``, or what the compiler's loop variable `name` stands for (`subject`)."""
        return self.subject(name) if name in self.generated else f"loop variable '{name}'"

    def described(self, layout) -> tuple:
        """What the graph op keeps for a backend's messages, as plain data: this statement, how its two
        paths are named (`sides`), and per variable `layout` carries its name in messages (`subject`) and
        whether it travels as ``(value, defined)`` (a variable some paths leave unassigned)."""
        return str(self), self.sides, {slot.name: (self.subject(slot.name), slot.kind == MAYBE)
                                       for slot in layout.slots if slot.kind != FIXED}

    def _jumps(self) -> str:
        assert self.guard is not None  # only a guard's messages speak of jumps
        return _jump_words(*self.guard[:2])

    @property
    def is_loop(self) -> bool:
        return self.what.endswith("loop")

    def fail(self, error: BaseException) -> NoReturn:
        raise_from_user(stopping_conversion(error), self.location)


def _jump_words(jump: str, lines) -> str:
    """``the return at line 4``, ``the breaks or returns at lines 7, 9 and 12``, ``a continue``."""
    if not lines:
        return f"a {jump}"
    if len(lines) == 1:
        return f"the {jump} at line {lines[0]}"
    plural = " or ".join(f"{word}s" for word in jump.split(" or "))
    return f"the {plural} at lines {', '.join(str(line) for line in lines[:-1])} and {lines[-1]}"
