"""Every public op function, gathered for `autoloop/__init__.py` and `Tensor`'s operators.

Importing this module registers every op and gives `Tensor` its operators.
"""

from autoloop.ops.constant_ops import constant, convert_to_tensor  # noqa: F401
from autoloop.ops.math_ops import (  # noqa: F401
    abs, add, bitwise_and, bitwise_or, bitwise_xor, cast, cos, divide, equal, exp, floordiv,
    greater, greater_equal, identity, invert, less, less_equal, log, logical_and, logical_not,
    logical_or, matmul, maximum, minimum, mod, multiply, negative, not_equal, pow, sigmoid, sin,
    sqrt, square, subtract, tanh)
from autoloop.ops.array_ops import concat, shape, slice_tensor  # noqa: F401
from autoloop.ops.creation_ops import (  # noqa: F401
    fill, ones, ones_like, range, rank, size, stop_gradient, zeros, zeros_like)
from autoloop.ops.reduction_ops import (  # noqa: F401
    argmax, argmin, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod,
    reduce_sum)
from autoloop.ops.shape_ops import (  # noqa: F401
    expand_dims, reshape, squeeze, stack, tile, transpose, unstack)
from autoloop.ops.selection_ops import gather, one_hot, where  # noqa: F401
from autoloop.ops.logging_ops import Assert, print_  # noqa: F401
from autoloop.ops.logging_ops import print_ as print  # noqa: F401, A004 - autoloop.print
from autoloop.ops import tensor_methods  # noqa: F401, E402 - gives Tensor its operators, indexing, iteration
