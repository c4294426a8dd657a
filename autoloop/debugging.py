"""``autoloop.debugging``: run-time assertions under their ``tf.debugging`` names (re-exports only)."""

from autoloop.ops.check_ops import assert_equal, assert_greater, assert_less  # noqa: F401
from autoloop.ops.logging_ops import Assert  # noqa: F401
