"""Matrix decompositions and solves (``autoloop.linalg``): `inv`, `solve`, `cholesky`.

Each takes square matrices ``[..., M, M]`` of float32 or float64 (leading axes
are a batch) and has a gradient. A singular matrix (`inv`, `solve`) or one
that is not positive definite (`cholesky`) is an `InvalidArgumentError`,
on every backend.

    >>> solve(constant([[2., 0.], [0., 4.]]), constant([[2.], [2.]])).numpy()
    array([[1. ], [0.5]], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.errors import InvalidArgumentError
from autoloop.ops.array_ops import shape
from autoloop.ops.creation_ops import range as range_
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import equal, less, negative
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.ops.selection_ops import where
from autoloop.ops.shape_ops import expand_dims, transpose

_DTYPES = (dtypes.float32, dtypes.float64)


def _square(op_name: str, spec: Spec, what: str = "the matrix") -> None:
    if spec.dtype not in _DTYPES:
        raise TypeError(f"{op_name} takes float32 or float64 matrices, got {spec.dtype.name}; use autoloop.cast")
    rank = spec.shape.rank
    if rank is not None and (rank < 2 or not spec.shape[-1:].is_compatible_with(spec.shape[-2:-1])):
        raise ValueError(f"{op_name}: {what} must be square, [..., M, M], got shape {spec.shape}")


def _numpy_linalg(op_name: str, fn, failure: str):
    """A kernel running `fn`, numpy's linear-algebra error turned into TensorFlow's."""
    def kernel(*arrays):
        try:
            return np.asarray(fn(*arrays), np.asarray(arrays[0]).dtype)
        except np.linalg.LinAlgError:
            raise InvalidArgumentError(f"{op_name}: {failure}") from None
    return kernel


def _adjoint(x):
    rank = x.shape.rank
    return transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2])


def _matmul(a, b):
    return apply("MatMul", [a, b])


# -- MatrixInverse ----------------------------------------------------------------------------------
def _inverse_infer(x):
    _square("inv", x)
    return Spec(x.dtype, x.shape)


def _inverse_gradient(op, grad):
    """``d(A^-1) = -A^-1 dA A^-1``, so ``dA = -A^-T grad A^-T``."""
    inverse_t = _adjoint(op.outputs[0])
    return [negative(_matmul(_matmul(inverse_t, grad), inverse_t))]


register(OpDef("MatrixInverse", kernel=_numpy_linalg("inv", np.linalg.inv, "the input is not invertible"),
               infer=_inverse_infer, gradient=_inverse_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.linalg:inv"}))


def inv(input, adjoint=False, name=None):  # noqa: A002 - TF's names
    """The inverse of each square matrix (of its adjoint with `adjoint`, the transpose for real matrices)."""
    x = convert(input)
    return apply("MatrixInverse", [_adjoint(x) if adjoint else x], name=name)


# -- MatrixSolve ------------------------------------------------------------------------------------
def _solve_infer(matrix, rhs):
    _square("solve", matrix)
    if rhs.dtype is not matrix.dtype:
        raise TypeError(f"solve: rhs must be {matrix.dtype.name} like the matrix, got {rhs.dtype.name}")
    if rhs.shape.rank is not None and rhs.shape.rank < 2:
        raise ValueError(f"solve: rhs must be [..., M, K], got shape {rhs.shape}")
    if matrix.shape.rank is not None and rhs.shape.rank is not None and (
            rhs.shape.rank != matrix.shape.rank or not rhs.shape[:-1].is_compatible_with(matrix.shape[:-1])):
        raise ValueError(f"solve: rhs of shape {rhs.shape} does not fit the matrix of shape {matrix.shape}; "
                         f"rhs must be [..., M, K] for a matrix [..., M, M]")
    return Spec(rhs.dtype, rhs.shape)


def _solve_gradient(op, grad):
    """``X = A^-1 B``: ``dB = A^-T grad``, ``dA = -dB X^T``."""
    matrix, solution = op.inputs[0], op.outputs[0]
    rhs_grad = apply("MatrixSolve", [_adjoint(matrix), grad])
    return [negative(_matmul(rhs_grad, _adjoint(solution))), rhs_grad]


register(OpDef("MatrixSolve", kernel=_numpy_linalg("solve", np.linalg.solve, "the input is not invertible"),
               infer=_solve_infer, gradient=_solve_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.linalg:solve"}))


def solve(matrix, rhs, adjoint=False, name=None):
    """``X`` with ``matrix @ X == rhs`` for each square `matrix` ``[..., M, M]`` and `rhs` ``[..., M, K]``."""
    matrix, rhs = convert(matrix), convert(rhs)
    return apply("MatrixSolve", [_adjoint(matrix) if adjoint else matrix, rhs], name=name)


# -- Cholesky ---------------------------------------------------------------------------------------
def _cholesky_infer(x):
    _square("cholesky", x)
    return Spec(x.dtype, x.shape)


def _cholesky_gradient(op, grad):
    """Murray's rule (arXiv:1602.07527), as TensorFlow computes it::

        P = Φ(L^T grad)   (the lower triangle, its diagonal halved)
        dA = sym(L^-T P L^-1)   (sym(X) = (X + X^T) / 2)
    """
    lower = op.outputs[0]
    lower_inverse = apply("MatrixInverse", [lower])
    middle = _matmul(_adjoint(lower), grad)
    size = shape(lower)[-1]
    rows, columns = expand_dims(range_(size), -1), expand_dims(range_(size), 0)
    middle = where(less(columns, rows), middle, where(equal(columns, rows), middle * 0.5, middle * 0.0))
    grad_a = _matmul(_matmul(_adjoint(lower_inverse), middle), lower_inverse)
    return [(grad_a + _adjoint(grad_a)) * 0.5]


register(OpDef("Cholesky", kernel=_numpy_linalg("cholesky", np.linalg.cholesky, (
                   "Cholesky decomposition was not successful: the input is not positive definite")),
               infer=_cholesky_infer, gradient=_cholesky_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.linalg:cholesky"}))


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular ``L`` with ``L @ L^T == input``, for each symmetric positive-definite matrix."""
    return apply("Cholesky", [convert(input)], name=name)

