"""``autoloop.sparse``: `SparseTensor` and the ops on it, under their ``tf.sparse`` names (re-exports only)."""

from autoloop.control_flow.sparse import SparseTensor  # noqa: F401
from autoloop.control_flow.sparse_ops import expand_dims, to_dense  # noqa: F401
