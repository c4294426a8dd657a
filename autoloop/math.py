"""``autoloop.math``: the math ops under their ``tf.math`` names (re-exports only)."""

from autoloop.ops.math_ops import (  # noqa: F401
    abs, add, cos, divide, equal, exp, floordiv, greater, greater_equal, less, less_equal, log,
    logical_and, logical_not, logical_or, maximum, minimum, multiply, negative, not_equal, pow,
    sigmoid, sin, sqrt, square, subtract, tanh)
from autoloop.ops.math_ops import divide as truediv, mod as floormod, mod  # noqa: F401
from autoloop.ops.unary_math_ops import ceil, floor, is_finite, log1p, round, rsqrt, sign  # noqa: F401
from autoloop.ops.cumulative_ops import add_n, cumprod, cumsum  # noqa: F401
from autoloop.ops.reduction_ops import (  # noqa: F401
    argmax, argmin, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod,
    reduce_sum)
from autoloop.ops.statistics_ops import reduce_logsumexp, reduce_std, reduce_variance  # noqa: F401
from autoloop.ops.nn_ops import log_softmax, softmax, softplus  # noqa: F401
from autoloop.ops.segment_ops import (  # noqa: F401
    segment_max, segment_mean, segment_min, segment_prod, segment_sum, unsorted_segment_max, unsorted_segment_mean,
    unsorted_segment_min, unsorted_segment_prod, unsorted_segment_sum)
