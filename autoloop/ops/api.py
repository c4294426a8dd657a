"""Every public op function, gathered for `autoloop/__init__.py` and `Tensor`'s operators.

Importing this module registers every op.
"""

from autoloop.ops.constant_ops import constant, convert_to_tensor  # noqa: F401
from autoloop.ops.math_ops import (  # noqa: F401
    abs, add, bitwise_and, bitwise_or, bitwise_xor, cast, cos, divide, equal, exp, floordiv,
    greater, greater_equal, identity, invert, less, less_equal, log, logical_and, logical_not,
    logical_or, matmul, maximum, minimum, mod, multiply, negative, not_equal, pow, sigmoid, sin,
    sqrt, square, subtract, tanh)
from autoloop.ops.array_ops import concat, shape, slice_tensor  # noqa: F401
