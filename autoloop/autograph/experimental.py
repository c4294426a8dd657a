"""``autoloop.autograph.experimental``: `set_loop_options`, `do_not_convert` and `Feature` (re-exports only)."""

from autoloop.autograph.features import Feature, check_features  # noqa: F401
from autoloop.compiler.api import do_not_convert, set_loop_options  # noqa: F401
