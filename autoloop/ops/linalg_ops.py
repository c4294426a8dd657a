"""Linear algebra: `matmul` (with transposes), `matvec`, `eye`, `einsum`, `tensordot`, `norm`.

`Eye` and `Einsum` are registrations; `tensordot` writes its contraction as
an einsum equation, and `matvec` and `norm` are compositions of existing
ops. Products take float16, float32, float64, int32 and int64 tensors of one
dtype, as TensorFlow's kernels do.

    >>> einsum("ij,j->i", constant([[1, 2], [3, 4]]), constant([1, 1])).numpy()
    array([3, 7], dtype=int32)
"""

from __future__ import annotations

import numbers
import string

import numpy as np

from autoloop import dtypes
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import abs, binary_inputs, pow, sqrt, square
from autoloop.ops.reduction_ops import reduce_max, reduce_sum
from autoloop.ops.gradient_support import reduce_to_input
from autoloop.ops.registry import NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.ops.shape_ops import expand_dims, reshape, squeeze, transpose
from autoloop.ops.static_args import static_int, static_ints
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor

PRODUCT_DTYPES = infer.FLOATS + infer.INTEGERS


# -- matmul / matvec ----------------------------------------------------------------------
def _swap_last_two(x, what: str):
    rank = x.shape.rank
    if rank is None or rank < 2:
        raise ValueError(f"matmul: {what} needs a tensor of known rank >= 2, got shape {x.shape}")
    return transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2])


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None) -> Tensor:
    """The matrix product of `a` and `b` (batched over leading axes, as ``a @ b``).

    `transpose_a`/`adjoint_a` (the same for real dtypes) use the transpose of
    `a`'s last two axes, likewise for `b`. The sparse flags are hints and
    change nothing; `output_type`, when given, must be the inputs' dtype.

        >>> matmul(constant([[1, 2]]), constant([[3, 4]]), transpose_b=True).numpy()
        array([[11]], dtype=int32)
    """
    a, b = binary_inputs(a, b)
    if output_type is not None and dtypes.as_dtype(output_type) is not a.dtype:
        raise TypeError(f"matmul: output_type {dtypes.as_dtype(output_type).name} differs from the "
                        f"inputs' dtype {a.dtype.name}; autoloop multiplies in the inputs' dtype")
    if transpose_a or adjoint_a:
        a = _swap_last_two(a, "transpose_a")
    if transpose_b or adjoint_b:
        b = _swap_last_two(b, "transpose_b")
    return apply("MatMul", [a, b], name=name)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """The product of matrices `a` (``[..., M, N]``) and vectors `b` (``[..., N]``): ``[..., M]``."""
    a, b = binary_inputs(a, b)
    product = matmul(a, expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return squeeze(product, [-1], name=name)


# -- Eye ---------------------------------------------------------------------------------
def _eye_infer(num_rows, num_columns, batch_shape, dtype):
    if num_rows < 0 or num_columns < 0 or any(d < 0 for d in batch_shape):
        raise ValueError(f"Eye: sizes must be >= 0, got num_rows={num_rows}, num_columns={num_columns}, "
                         f"batch_shape={list(batch_shape)}")
    return Spec(dtype, TensorShape(list(batch_shape) + [num_rows, num_columns]))


def _eye_kernel(num_rows, num_columns, batch_shape, dtype):
    matrix = np.eye(num_rows, num_columns, dtype=dtype.as_numpy_dtype)
    return np.array(np.broadcast_to(matrix, tuple(batch_shape) + matrix.shape))


register(OpDef("Eye", kernel=_eye_kernel, infer=_eye_infer, gradient=NOT_DIFFERENTIABLE,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:eye"}))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None) -> Tensor:
    """Identity matrices: ones on the diagonal, shape ``batch_shape + [num_rows, num_columns]``.

    Sizes must be known while tracing (Python ints or constant tensors).

        >>> eye(2, dtype=int32).numpy()
        array([[1, 0], [0, 1]], dtype=int32)
    """
    num_rows = static_int(num_rows, "Eye", "num_rows")
    num_columns = num_rows if num_columns is None else static_int(num_columns, "Eye", "num_columns")
    batch_shape = () if batch_shape is None else static_ints(batch_shape, "Eye", "batch_shape")
    attrs = {"num_rows": num_rows, "num_columns": num_columns, "batch_shape": batch_shape,
             "dtype": dtypes.as_dtype(dtype)}
    return apply("Eye", [], attrs, name=name)


# -- Einsum --------------------------------------------------------------------------------
ELLIPSIS = "..."


def parse_equation(equation: str, count: int):
    """``(input terms, output term)`` of an einsum `equation` with `count` inputs.

    A term is a list of labels, ``"..."`` standing for broadcast axes. Without
    ``->`` the output is the ellipsis (if any input has one) followed by the
    labels used exactly once, in alphabetical order (numpy's implicit mode).
    """
    text = equation.replace(" ", "")
    inputs_text, arrow, output_text = text.partition("->")
    terms = [_term(part, equation) for part in inputs_text.split(",")]
    if len(terms) != count:
        raise ValueError(f"einsum: the equation {equation!r} has {len(terms)} input terms but "
                         f"{count} tensors were given")
    used = [label for term in terms for label in term if label != ELLIPSIS]
    has_ellipsis = any(ELLIPSIS in term for term in terms)
    if arrow:
        output = _term(output_text, equation)
        for label in output:
            if label != ELLIPSIS and label not in used:
                raise ValueError(f"einsum: output label {label!r} of {equation!r} is in no input")
            if label != ELLIPSIS and output.count(label) > 1:
                raise ValueError(f"einsum: output label {label!r} of {equation!r} appears twice")
    else:
        output = ([ELLIPSIS] if has_ellipsis else []) + sorted(l for l in set(used) if used.count(l) == 1)
    return terms, output


def _term(text: str, equation: str) -> list:
    if text.count(ELLIPSIS) > 1:
        raise ValueError(f"einsum: a term of {equation!r} has more than one '...'")
    head, dots, tail = text.partition(ELLIPSIS)
    labels = list(head) + ([ELLIPSIS] if dots else []) + list(tail)
    for label in labels:
        if label != ELLIPSIS and label not in string.ascii_letters:
            raise ValueError(f"einsum: {label!r} in {equation!r} is not a label; labels are letters")
    return labels


def _einsum_infer(*operands, equation):
    infer.check_same_dtype("Einsum", *operands)
    infer.check_dtype("Einsum", operands[0], PRODUCT_DTYPES)
    terms, output = parse_equation(equation, len(operands))
    if any(spec.shape.rank is None for spec in operands):
        return Spec(operands[0].dtype, TensorShape(None))
    sizes: dict = {}
    broadcast = TensorShape([])
    for position, (term, spec) in enumerate(zip(terms, operands)):
        dims = list(spec.shape)
        named = [label for label in term if label != ELLIPSIS]
        if len(dims) < len(named) or (ELLIPSIS not in term and len(dims) != len(named)):
            raise ValueError(f"Einsum: input #{position} of shape {spec.shape} does not fit the term "
                             f"{''.join(term)!r} of {equation!r}")
        split = term.index(ELLIPSIS) if ELLIPSIS in term else len(term)
        extra = len(dims) - len(named)
        broadcast = infer.broadcast_shapes("Einsum", broadcast, TensorShape(dims[split:split + extra]))
        for label, dim in zip(named, dims[:split] + dims[split + extra:]):
            known = sizes.get(label)
            if known is not None and dim is not None and known != dim:
                raise ValueError(f"Einsum: label {label!r} of {equation!r} has sizes {known} and {dim}")
            sizes[label] = dim if known is None else known
    if broadcast.rank and ELLIPSIS not in output:
        raise ValueError(f"Einsum: the inputs of {equation!r} have '...' axes but the output has none")
    dims = []
    for label in output:
        dims.extend(list(broadcast) if label == ELLIPSIS else [sizes[label]])
    return Spec(operands[0].dtype, TensorShape(dims))


def _einsum_kernel(*operands, equation):
    return np.einsum(equation, *operands)


def _einsum_gradient(op, grad):
    """The gradient of operand k: the result's gradient contracted with the other operands, back
    to operand k's labels. Labels only operand k has (summed away in the forward) are broadcast
    back; ``...`` axes that were broadcast are summed back to operand k's shape."""
    specs = op.input_specs
    if not specs[0].dtype.is_floating:
        return [None] * len(specs)
    terms, output = parse_equation(op.attrs["equation"], len(specs))
    grads = []
    for k, term in enumerate(terms):
        if not op.needs_gradient(k):
            grads.append(None)
            continue
        named = [label for label in term if label != ELLIPSIS]
        if len(set(named)) != len(named):
            raise NotImplementedError(f"the gradient of einsum {op.attrs['equation']!r} needs operands "
                                      f"without repeated labels (a diagonal)")
        others = [t for j, t in enumerate(terms) if j != k]
        available = set(output) | {label for t in others for label in t}
        kept = [label for label in term if label in available]
        leading = ELLIPSIS in output and ELLIPSIS not in term  # broadcast axes operand k does not have
        equation = ",".join("".join(t) for t in [output] + others) + "->" + "".join(
            ([ELLIPSIS] if leading else []) + kept)
        part = apply("Einsum", [grad] + [op.inputs[j] for j in range(len(specs)) if j != k],
                     {"equation": equation})
        if leading:
            extra = part.shape.rank - len(kept)
            part = apply("Sum", [part], {"axis": tuple(range(extra)), "keepdims": False}) if extra else part
        ellipsis_rank = (specs[k].shape.rank or 0) - len(named)
        for position, label in enumerate(term):
            if label not in available:  # summed away from operand k alone: every element gets the gradient
                after_ellipsis = ELLIPSIS in term[:position]
                part = apply("ExpandDims", [part], {"axis": position + (ellipsis_rank - 1 if after_ellipsis else 0)})
        if len(kept) != len(term):
            part = apply("BroadcastTo", [part, op.input_shape(k)])
        grads.append(reduce_to_input(op, k, part))
    return grads


register(OpDef("Einsum", kernel=_einsum_kernel, infer=_einsum_infer, gradient=_einsum_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.arrays:einsum"}))


def einsum(equation, *inputs, name=None, **kwargs) -> Tensor:
    """The Einstein summation `equation` over `inputs` (numpy's and TensorFlow's notation).

    Labels are letters; ``...`` broadcasts; without ``->`` the output holds
    the labels used once, in alphabetical order.
    """
    if kwargs:
        raise TypeError(f"einsum got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the equation must be a string, got {equation!r}")
    if not inputs:
        raise ValueError("einsum needs at least one tensor")
    tensors = [convert(inputs[0])]
    tensors += [binary_inputs(tensors[0], value)[1] for value in inputs[1:]]
    parse_equation(equation, len(tensors))  # a malformed equation is an error even eagerly
    return apply("Einsum", tensors, {"equation": equation.replace(" ", "")}, name=name)


def tensordot(a, b, axes, name=None) -> Tensor:
    """The sum of products of `a` and `b` over the axes `axes` names.

    `axes` is an int N (the last N axes of `a` with the first N of `b`) or a
    pair ``[a_axes, b_axes]``. The result has `a`'s other axes, then `b`'s.
    Both ranks must be known while tracing.

        >>> tensordot(constant([[1, 2], [3, 4]]), constant([1, 1]), 1).numpy()
        array([3, 7], dtype=int32)
    """
    a, b = binary_inputs(a, b)
    if a.shape.rank is None or b.shape.rank is None:
        raise ValueError(f"tensordot needs inputs of known rank, got shapes {a.shape} and {b.shape}")
    a_axes, b_axes = _contracted_axes(axes, a.shape.rank, b.shape.rank)
    letters = iter(string.ascii_letters)
    a_labels = [next(letters) for _ in range(a.shape.rank)]
    b_labels = [next(letters) for _ in range(b.shape.rank)]
    for i, j in zip(a_axes, b_axes):
        b_labels[j] = a_labels[i]
    output = [a_labels[i] for i in range(a.shape.rank) if i not in a_axes]
    output += [b_labels[j] for j in range(b.shape.rank) if j not in b_axes]
    equation = f"{''.join(a_labels)},{''.join(b_labels)}->{''.join(output)}"
    return apply("Einsum", [a, b], {"equation": equation}, name=name)


def _contracted_axes(axes, rank_a: int, rank_b: int):
    if isinstance(axes, numbers.Integral) or (hasattr(axes, "shape") and axes.shape.rank == 0):
        count = static_int(axes, "tensordot", "axes")
        if not 0 <= count <= min(rank_a, rank_b):
            raise ValueError(f"tensordot: axes={count} must be in [0, {min(rank_a, rank_b)}] for inputs "
                             f"of rank {rank_a} and {rank_b}")
        return list(range(rank_a - count, rank_a)), list(range(count))
    if not isinstance(axes, list | tuple) or len(axes) != 2:
        raise ValueError(f"tensordot: axes must be an int or a pair [a_axes, b_axes], got {axes!r}")
    a_axes = [infer.normalize_axis("tensordot", i, rank_a) for i in static_ints(axes[0], "tensordot", "axes")]
    b_axes = [infer.normalize_axis("tensordot", i, rank_b) for i in static_ints(axes[1], "tensordot", "axes")]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: a_axes {a_axes} and b_axes {b_axes} must have one length")
    return a_axes, b_axes


# -- norm ----------------------------------------------------------------------------------
def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None) -> Tensor:
    """A vector or matrix norm of `tensor` (floats), as ``tf.norm``.

    `axis` None: the whole tensor as one vector; an int: vector norms along
    it; a pair of ints: matrix norms over those two axes. Vector `ord`:
    ``"euclidean"`` (2), 1, ``numpy.inf`` or any p > 0. Matrix `ord`:
    ``"euclidean"``/``"fro"`` (Frobenius), 1 (largest column sum) or
    ``numpy.inf`` (largest row sum).

        >>> norm(constant([3., 4.])).numpy()
        np.float32(5.0)
    """
    x = convert(tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"norm takes float16, float32 or float64 tensors, got a {x.dtype.name} tensor; "
                        f"use autoloop.cast(tensor, autoloop.float32)")
    keepdims = bool(keepdims)
    if axis is None:
        result = _vector_norm(reshape(x, [-1]), ord, 0, False)
        if keepdims:
            result = reshape(result, [1] * x.shape.rank) if x.shape.rank is not None else result
        return result
    axes = static_ints(axis, "norm", "axis")
    rank = x.shape.rank
    if rank is not None:
        axes = tuple(infer.normalize_axis("norm", a, rank) for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2 and axes[0] != axes[1]:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"norm: axis must be None, an int or a pair of distinct ints, got {axis!r}")


def _vector_norm(x, ord, axis, keepdims):
    if ord == "euclidean" or ord == 2:
        return sqrt(reduce_sum(square(x), axis, keepdims=keepdims))
    if ord == 1:
        return reduce_sum(abs(x), axis, keepdims=keepdims)
    if ord == np.inf:
        return reduce_max(abs(x), axis, keepdims=keepdims)
    if isinstance(ord, numbers.Real) and not isinstance(ord, bool) and ord > 0:
        power = float(ord)
        return pow(reduce_sum(pow(abs(x), power), axis, keepdims=keepdims), 1.0 / power)
    raise ValueError(f"norm: ord={ord!r} is not a vector norm; use 'euclidean', 1, 2, numpy.inf or "
                     f"a number > 0")


def _matrix_norm(x, ord, axes, keepdims):
    rows, columns = axes
    if ord in ("euclidean", "fro"):
        return sqrt(reduce_sum(square(x), list(axes), keepdims=keepdims))
    if ord == 1 or ord == np.inf:
        summed, largest = (rows, columns) if ord == 1 else (columns, rows)
        result = reduce_max(reduce_sum(abs(x), summed, keepdims=True), largest, keepdims=True)
        return result if keepdims else squeeze(result, list(axes))
    raise ValueError(f"norm: ord={ord!r} is not a supported matrix norm; use 'fro', 'euclidean', 1 or "
                     f"numpy.inf")
