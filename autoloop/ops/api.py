"""Every public op function, gathered for `autoloop/__init__.py` and `Tensor`'s operators.

Importing this module registers every op and gives `Tensor` its operators.
"""

from autoloop.ops.constant_ops import constant, convert_to_tensor  # noqa: F401
from autoloop.ops.math_ops import (  # noqa: F401
    abs, add, bitwise_and, bitwise_or, bitwise_xor, cast, cos, divide, equal, exp, floordiv,
    greater, greater_equal, identity, invert, less, less_equal, log, logical_and, logical_not,
    logical_or, maximum, minimum, mod, multiply, negative, not_equal, pow, sigmoid, sin,
    sqrt, square, subtract, tanh)
from autoloop.ops.math_ops import divide as truediv  # noqa: F401 - TensorFlow's other name
from autoloop.ops.linalg_ops import einsum, eye, matmul, norm, tensordot  # noqa: F401
from autoloop.ops.array_ops import concat, newaxis, shape, slice_tensor  # noqa: F401
from autoloop.ops.creation_ops import (  # noqa: F401
    fill, ones, ones_like, range, rank, size, stop_gradient, zeros, zeros_like)
from autoloop.ops.reduction_ops import (  # noqa: F401
    argmax, argmin, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod,
    reduce_sum)
from autoloop.ops.shape_ops import (  # noqa: F401
    expand_dims, reshape, squeeze, stack, tile, transpose, unstack)
from autoloop.ops.selection_ops import gather, one_hot, where  # noqa: F401
from autoloop.ops.unary_math_ops import floor, round, sign  # noqa: F401
from autoloop.ops.clip_ops import clip_by_norm, clip_by_value  # noqa: F401
from autoloop.ops.cumulative_ops import add_n, cumsum  # noqa: F401
from autoloop.ops.statistics_ops import reduce_logsumexp  # noqa: F401
from autoloop.ops.reorder_ops import argsort, reverse, roll, sort  # noqa: F401
from autoloop.ops.resize_ops import broadcast_to, pad, split  # noqa: F401
from autoloop.ops.scatter_ops import (  # noqa: F401
    boolean_mask, gather_nd, scatter_nd, tensor_scatter_nd_update)
from autoloop.ops.check_ops import assert_equal, assert_greater, assert_less, ensure_shape  # noqa: F401
from autoloop.ops.graph_building import executing_eagerly, get_static_value, init_scope, name_scope  # noqa: F401
from autoloop.ops import nn_ops as _nn_ops, random_ops as _random_ops  # noqa: F401 - registers their ops
from autoloop.ops import matrix_ops as _matrix_ops, segment_ops as _segment_ops  # noqa: F401 - registers their ops
from autoloop.ops import random_generators as _generators  # noqa: F401 - registers the stateless random ops
from autoloop.ops.sequence_ops import linspace, searchsorted, sequence_mask, unique  # noqa: F401
from autoloop.ops.logging_ops import Assert, print_  # noqa: F401
from autoloop.ops.logging_ops import print_ as print  # noqa: F401, A004 - autoloop.print
from autoloop.ops.script_ops import numpy_function, py_function  # noqa: F401
from autoloop.ops import tensor_methods  # noqa: F401, E402 - gives Tensor its operators, indexing, iteration
