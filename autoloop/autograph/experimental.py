"""``autoloop.autograph.experimental``: `set_loop_options` (re-export only)."""

from autoloop.compiler.api import do_not_convert, set_loop_options  # noqa: F401
