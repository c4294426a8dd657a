"""TF1-style graphs (``import autoloop.compat.v1 as tf``): `Graph`, `Session`, `placeholder`, variables.

Build a graph, then run parts of it in a `Session`::

    import autoloop.compat.v1 as tf
    tf.disable_eager_execution()          # ops outside any block now build the default graph

    i = tf.get_variable("i", dtype=tf.int32, shape=[], initializer=tf.ones_initializer())
    r = tf.while_loop(lambda a: a < 10, lambda a: a + 2, [i])
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        print(sess.run(r))                # 11

Besides the TF1 names below, every op of ``autoloop`` is here under its
usual name (``tf.constant``, ``tf.add``, ...). `while_loop` and `cond`
follow TF1's return conventions (see `graph_ops`). The Session runs graphs
on the dataflow executor (``autoloop.execute.dataflow``).
"""

from autoloop.dtypes import (  # noqa: A004
    DType, as_dtype, bool_ as bool, double, float16, float32, float64, half, int8, int16, int32, int64,
    uint8)
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, is_tensor
from autoloop.ops.api import *  # noqa: F401,F403
from autoloop.ops.api import abs, pow, round  # noqa: F401,A004
from autoloop.control_flow.case import case, switch_case
from autoloop.control_flow.functional import foldl, foldr, map_fn
from autoloop.batching.vectorized_map import vectorized_map
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.control_flow.sparse import IndexedSlices, SparseTensor
from autoloop import errors, nest
from autoloop.ops import v1_ops as _v1_ops  # noqa: F401 - registers the TF1 graph ops
from autoloop.compat.v1.graph import (
    Graph, Operation, control_dependencies, disable_eager_execution, enable_eager_execution,
    executing_eagerly_outside_functions, get_default_graph, group, no_op, reset_default_graph)
from autoloop.compat.v1.graph import disable_eager_execution as disable_v2_behavior
from autoloop.compat.v1.graph_ops import Print, cond, placeholder, while_loop
from autoloop.compat.v1.session import Session, get_default_session
from autoloop.compat.v1.variables import (
    AUTO_REUSE, Variable, constant_initializer, get_variable, global_variables, global_variables_initializer,
    glorot_uniform_initializer, ones_initializer, variable_scope, variables_initializer, zeros_initializer)
