"""The op tests' shared helpers live in `ophelpers`; `run_traced` is the one
that traces through ``autoloop.function(fn, autograph=False)``."""

from ophelpers import run_traced  # noqa: F401
