"""``autoloop.autograph``: the compiler's functions under their ``tf.autograph`` names (re-exports only)."""

from autoloop.autograph import experimental  # noqa: F401
from autoloop.compiler.api import do_not_convert, to_code, to_graph  # noqa: F401
