"""``compat.v1.random``: `autoloop.random`, with TF1's `set_random_seed`."""

from autoloop.random import *  # noqa: F401,F403
from autoloop.ops.random_ops import set_seed as set_random_seed  # noqa: F401
