"""TF1-style graphs (``import autoloop.compat.v1 as tf``): `Graph`, `Session`, `placeholder`, variables.

Build a graph, then run parts of it in a `Session`::

    import autoloop.compat.v1 as tf
    tf.disable_eager_execution()          # ops outside any block now build the default graph

    i = tf.get_variable("i", dtype=tf.int32, shape=[], initializer=tf.ones_initializer())
    r = tf.while_loop(lambda a: a < 10, lambda a: a + 2, [i])
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        print(sess.run(r))                # 11

Besides the TF1 names below, every op and namespace of ``autoloop`` is
here under its usual name (``tf.constant``, ``tf.add``, ``tf.nn``,
``tf.function``, ...; what this module does not define is looked up in
``autoloop`` when asked for, so names added there are here too), and TF1's
own spellings (``tf.random_uniform``,
``tf.to_float``, ``reduce_sum(..., keep_dims=True)``, `spellings`) and
optimizers (``tf.train.GradientDescentOptimizer``, `train`) are here too.
`while_loop` and `cond` follow TF1's return conventions (see `graph_ops`);
`gradients` also takes variables. The Session runs graphs on the dataflow
executor (``autoloop.execute.dataflow``).
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
from autoloop import autograph, debugging, errors, linalg, math, nest, sparse  # noqa: F401
from autoloop import GradientTape, TensorSpec, do_not_convert, function, scan, set_loop_options, to_code, to_graph
from autoloop.ops import v1_ops as _v1_ops  # noqa: F401 - registers the TF1 graph ops
from autoloop.compat.v1.graph import (
    Graph, Operation, control_dependencies, disable_eager_execution, enable_eager_execution,
    executing_eagerly_outside_functions, get_default_graph, group, no_op, reset_default_graph)
from autoloop.compat.v1.graph import disable_eager_execution as disable_v2_behavior
from autoloop.compat.v1.graph_ops import Print, cond, placeholder, while_loop
from autoloop.compat.v1.session import Session, get_default_session
from autoloop.compat.v1.variables import global_variables_initializer as initialize_all_variables
from autoloop.compat.v1 import timeline
from autoloop.compat.v1.timeline import RunMetadata, RunOptions
from autoloop.compat.v1.variables import (
    AUTO_REUSE, Variable, constant_initializer, get_variable, global_variables, global_variables_initializer,
    glorot_uniform_initializer, ones_initializer, variable_scope, variables_initializer, zeros_initializer)
from autoloop.compat.v1.spellings import *  # noqa: F401,F403 - TF1's names of autoloop's ops
from autoloop.compat.v1 import initializers, nn, random, train  # noqa: E402
from autoloop.compat.v1.initializers import (  # noqa: E402
    random_normal_initializer, random_uniform_initializer, truncated_normal_initializer)
from autoloop.ops.random_ops import truncated_normal  # noqa: E402
from autoloop.compat.v1.train import gradients  # noqa: E402
from autoloop.ops.segment_ops import (  # noqa: E402,F401 - TF1 has the segment ops at the top level
    segment_max, segment_mean, segment_min, segment_prod, segment_sum, unsorted_segment_max, unsorted_segment_mean,
    unsorted_segment_min, unsorted_segment_prod, unsorted_segment_sum)
from autoloop.ops.matrix_ops import cholesky, inv as matrix_inverse, solve as matrix_solve  # noqa: E402,F401
from autoloop.ops.sequence_ops import linspace as lin_space  # noqa: E402,F401
from autoloop.math import (  # noqa: E402,F401 - TF1 has the math ops at the top level too
    ceil, cumprod, floormod, is_finite, log1p, reduce_std, reduce_variance, rsqrt)

# autoloop's own machinery, not TensorFlow names: not offered here.
_NOT_TF = frozenset({
    "absent", "arguments", "backends", "compat", "compiler", "concrete_function", "control_flow",
    "dtypes", "execute", "ir", "ops", "pictures", "runtime", "shapes", "source_map", "tensor"})


def __getattr__(name: str):
    """Any other public name of ``autoloop`` (one added there later too), looked up when first asked for.

    A name autoloop leaves out on purpose raises its `AttributeError` that says what to use instead.
    """
    import autoloop
    if name.startswith("_") or name in _NOT_TF:
        raise AttributeError(f"module 'autoloop.compat.v1' has no attribute {name!r}", name=name, obj=None)
    return getattr(autoloop, name)
