"""``autoloop.random``: seeded random numbers (re-exports only); the seeding rule is in
`autoloop.ops.random_ops`."""

from autoloop.ops.random_ops import normal, set_seed, truncated_normal, uniform  # noqa: F401
from autoloop.ops.random_generators import Generator, stateless_normal, stateless_uniform  # noqa: F401
