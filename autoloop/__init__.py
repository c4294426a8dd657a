"""autoloop: plain Python loops and branches, compiled to graphs and run on numpy.

This module only re-exports the public names of API.md.
"""

from autoloop import nest
from autoloop.dtypes import DType, as_dtype, bool_ as bool, float32, float64, int32, int64  # noqa: A004
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, is_tensor
from autoloop.ops.api import *  # noqa: F401,F403
from autoloop.ops.api import abs, pow  # noqa: F401,A004  (shadow builtins on purpose)
from autoloop.control_flow.while_loop import while_loop
from autoloop.control_flow.cond import cond
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.sparse import IndexedSlices, SparseTensor
from autoloop.function import ConcreteFunction, Function, TensorSpec, function
from autoloop.compiler.api import do_not_convert, set_loop_options, to_code, to_graph
from autoloop import errors

__version__ = "0.1.0"
