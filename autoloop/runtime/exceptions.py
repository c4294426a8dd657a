"""Exceptions in converted code: what ``finally`` blocks and ``raise`` statements need.

`suppress_if` drops the exception leaving a ``try`` statement whose
``finally`` block jumped (``return``, ``break`` or ``continue`` there
discards it, as in Python)::

    with suppress_if(lambda: finally_jumped):
        try:
            raise ValueError
        finally:
            finally_jumped = True      # the user's `return` in finally
"""

from __future__ import annotations


class suppress_if:  # noqa: N801  (used like a function in converted code)
    """A context manager that swallows the exception leaving it when ``jumped()`` holds."""

    __slots__ = ("jumped",)

    def __init__(self, jumped):
        self.jumped = jumped

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        return kind is not None and bool(self.jumped())
