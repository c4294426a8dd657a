"""autoloop: plain Python loops and branches, compiled to graphs and run on numpy.

This module only re-exports the public names (docs/api.md lists them).
"""

from autoloop import nest
from autoloop.dtypes import (  # noqa: A004
    DType, as_dtype, bool_ as bool, double, float16, float32, float64, half, int8, int16, int32, int64,
    uint8)
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, is_tensor
from autoloop.ops.api import *  # noqa: F401,F403
from autoloop.ops.api import abs, pow, round  # noqa: F401,A004  (shadow builtins on purpose)
from autoloop.control_flow.while_loop import while_loop
from autoloop.control_flow.cond import cond
from autoloop.control_flow.scan import scan
from autoloop.control_flow.case import case, switch_case
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.sparse import IndexedSlices, SparseTensor
from autoloop.arguments import TensorSpec
from autoloop.concrete_function import ConcreteFunction
from autoloop.function import Function, RetracingWarning, function
from autoloop.compiler.api import do_not_convert, set_loop_options, to_code, to_graph
from autoloop.autodiff import GradientTape, gradients
from autoloop import autograph, debugging, errors, linalg, math, nn, random, sparse
from autoloop import compat
from autoloop.pictures import visualize
# the tf.function surface
from autoloop import config
# autodiff: custom gradients, Jacobians, forward mode, Hessians
from autoloop.autodiff import UnconnectedGradients, custom_gradient, hessians, recompute_grad
from autoloop import autodiff
# TF2 state: variables and modules
from autoloop.variables import Variable
from autoloop.module import Module
# functional loops and batching
from autoloop.control_flow.functional import foldl, foldr, map_fn
from autoloop.batching.vectorized_map import vectorized_map
# beyond one process: JAX's distributed runtime (imports JAX only when called)
from autoloop import distributed
from autoloop.absent import __getattr__  # noqa: F401 - AttributeErrors that say what to use instead

__version__ = "0.1.0"
