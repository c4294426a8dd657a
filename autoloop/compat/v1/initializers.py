"""``compat.v1.initializers`` and TF1's random initializers: ``initializer(shape, dtype)`` -> a tensor.

    get_variable("w", [2, 3], initializer=random_normal_initializer(stddev=0.1, seed=1))
    get_variable("b", [3], initializer=initializers.zeros())

The random ones draw with `autoloop.random`'s seeding rule.
"""

from __future__ import annotations

from autoloop import dtypes
from autoloop.compat.v1.variables import (
    Initializer, constant_initializer, glorot_uniform_initializer, global_variables_initializer,
    ones_initializer, variables_initializer, zeros_initializer)
from autoloop.ops import random_ops


class _Random(Initializer):
    """Numbers drawn by `draw(shape, first, second, dtype, seed)` with two parameters."""

    draw = None

    def __init__(self, first, second, seed=None, dtype=dtypes.float32):
        self.first, self.second, self.seed, self.dtype = first, second, seed, dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        return type(self).draw(shape, self.first, self.second, dtype=dtype or self.dtype, seed=self.seed)


class random_normal_initializer(_Random):  # noqa: N801 - TensorFlow's name
    """Normal numbers of `mean` and `stddev`."""

    draw = staticmethod(random_ops.normal)

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(mean, stddev, seed, dtype)


class truncated_normal_initializer(_Random):  # noqa: N801
    """Normal numbers of `mean` and `stddev`, none beyond two `stddev` (`random.truncated_normal`)."""

    draw = staticmethod(random_ops.truncated_normal)

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(mean, stddev, seed, dtype)


class random_uniform_initializer(_Random):  # noqa: N801
    """Numbers uniform in ``[minval, maxval)``."""

    draw = staticmethod(random_ops.uniform)

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(minval, maxval, seed, dtype)


# TF1's short names in ``tf.initializers``.
zeros = zeros_initializer
ones = ones_initializer
constant = constant_initializer
random_normal = random_normal_initializer
random_uniform = random_uniform_initializer
truncated_normal = truncated_normal_initializer
glorot_uniform = glorot_uniform_initializer
global_variables = global_variables_initializer
variables = variables_initializer
