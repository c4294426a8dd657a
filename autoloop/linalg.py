"""``autoloop.linalg``: linear algebra under its ``tf.linalg`` names (re-exports only)."""

from autoloop.ops.linalg_ops import einsum, eye, matmul, matvec, norm, tensordot  # noqa: F401
from autoloop.ops.matrix_ops import cholesky, inv, solve  # noqa: F401
