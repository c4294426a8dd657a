"""The op table: numpy-comparison cases, at least one per registered op.

A `Case` names the op it exercises, a function of tensors using autoloop's
public API, the numpy reference on the same numpy inputs, and the inputs.
`test_op_table.py` runs every case eagerly and traced, and checks that every
registered op (but `NOT_NUMPY_COMPARABLE`) has a case here.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import autoloop as al
from autoloop.ops.dispatch import apply
from autoloop.ops.gradient_support import sum_to_shape


class Case(NamedTuple):
    op: str
    id: str
    fn: Callable
    ref: Callable
    args: tuple[Any, ...]


# Ops without a numpy comparison here: graph plumbing and the lead's control
# flow / TensorArray ops, tested with their features. PrintV2 and Assert are
# tested in test_logging_ops.py; CheckDefined, CheckAssigned and AssertTrue (what
# converted code stages for partly defined names, items and `assert`) in tests/compiler
# and tests/runtime.
# The TF1 graph ops (variables, Print, NoOp) are tested with autoloop.compat.v1 in tests/compat.
NOT_NUMPY_COMPARABLE = {
    "Const", "Placeholder", "While", "Cond", "Enter", "Merge", "Switch", "NextIteration", "Exit",
    "LoopCond", "TensorListReserve", "TensorListRead", "TensorListWrite", "TensorListStack",
    "TensorListUnstack", "TensorListGather", "TensorListScatter", "TensorListSize",
    "PrintV2", "Assert", "CheckDefined", "CheckAssigned", "AssertTrue", "TensorListLengths",
    # The gradient of a TensorArray (autoloop.control_flow.gradient_elements): tested by the
    # gradient tests in tests/autodiff.
    "TensorListGradInit", "TensorListGradAdd", "TensorListGradRead", "TensorListGradAccumulate",
    "TensorListGradScatterAdd", "TensorListGradErase", "TensorListGradGather", "TensorListGradStack",
    "TensorListGradUnstack", "TensorListGradSplit", "TensorListGradConcat",
    # The stacks a loop gradient saves values on (autoloop.control_flow.stacks): tested there too.
    "StackNew", "StackPush", "StackGet",
    # A custom gradient's pass-through (autoloop.autodiff.custom_gradient): tests/autodiff.
    "CustomGradient",
    "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "PrintV1", "NoOp", "PlaceholderWithDefault",
    # Python called inside a graph (autoloop.ops.script_ops): tested in tests/function_surface.
    "PyFunction", "PyFunctionStateless", "PyFunctionGrad",
}

_rng = np.random.default_rng(0)
F = _rng.standard_normal((2, 3)).astype(np.float32)
F2 = _rng.standard_normal((2, 3)).astype(np.float32)
F3D = _rng.standard_normal((2, 3, 4)).astype(np.float32)
D = _rng.standard_normal((3, 2))  # float64
I = _rng.integers(-9, 10, (2, 3)).astype(np.int32)  # noqa: E741
I2 = _rng.integers(1, 6, (2, 3)).astype(np.int32)
L = _rng.integers(-9, 10, (4, 3)).astype(np.int64)
B = I > 0
B2 = I2 > 2
POS = np.abs(F) + np.float32(0.5)
EMPTY = np.zeros((0, 3), np.float32)


def _int_mean(x, axis=None, keepdims=False):
    """Integer mean rounded toward zero (TensorFlow's integer reduce_mean)."""
    return np.trunc(np.mean(x, axis=axis, keepdims=keepdims, dtype=np.float64)).astype(x.dtype)[()]


def _one_hot(indices, depth, on=1.0, off=0.0, axis=-1, dtype=np.float32):
    hot = np.eye(depth, dtype=bool)[np.clip(indices, 0, depth - 1)] & ((indices >= 0) & (indices < depth))[..., None]
    result = np.where(hot, on, off).astype(dtype)
    return np.moveaxis(result, -1, axis)


def _slice_written(g):
    """zeros(4, 4) with rows 1: of column 2 set to g (StridedSlice's gradient)."""
    result = np.zeros((4, 4), g.dtype)
    result[1:, 2] = g
    return result


def _reflect_folded(g):
    """The gradient of padding a (2, 3) array by REFLECT ((1, 0), (0, 1)): mirrored copies added back."""
    rows = g[1:].copy()
    rows[1] += g[0]  # padded row 0 copies row 1
    result = rows[:, :3].copy()
    result[:, 1] += rows[:, 3]  # padded column 3 copies column 1
    return result


def _arange(*args, dtype):
    return np.arange(*args, dtype=dtype)


CASES: list[Case] = [
    # -- math (binary) ------------------------------------------------------
    Case("Add", "float", lambda x, y: x + y, np.add, (F, F2)),
    Case("Add", "int-broadcast-python", lambda x: al.add(x, 3), lambda x: x + np.int32(3), (I,)),
    Case("Sub", "float", al.subtract, np.subtract, (F, F2)),
    Case("Mul", "int64", lambda x: x * x, lambda x: x * x, (L,)),
    Case("FloorDiv", "int", lambda x, y: x // y, np.floor_divide, (I, I2)),
    Case("FloorMod", "int", lambda x, y: x % y, np.mod, (I, I2)),
    Case("Pow", "float", lambda x, y: x ** y, np.power, (POS, F)),
    Case("Maximum", "float", al.maximum, np.maximum, (F, F2)),
    Case("Minimum", "int", al.minimum, np.minimum, (I, I2)),
    Case("BitwiseAnd", "int", lambda x, y: x & y, np.bitwise_and, (I, I2)),
    Case("BitwiseOr", "bool", lambda x, y: x | y, np.bitwise_or, (B, B2)),
    Case("BitwiseXor", "int", lambda x, y: x ^ y, np.bitwise_xor, (I, I2)),
    Case("LogicalAnd", "bool", al.logical_and, np.logical_and, (B, B2)),
    Case("LogicalOr", "bool", al.logical_or, np.logical_or, (B, B2)),
    Case("RealDiv", "float", lambda x, y: x / y, np.true_divide, (F, POS)),
    Case("RealDiv", "int-gives-float64", lambda x, y: x / y, np.true_divide, (I, I2)),
    Case("MatMul", "float64", lambda x, y: x @ y, np.matmul, (D, D.T)),
    Case("MatMul", "float32", al.matmul, np.matmul, (F, F3D[0])),
    # -- comparisons and logic ------------------------------------------------------
    Case("Less", "float", lambda x, y: x < y, np.less, (F, F2)),
    Case("LessEqual", "int", lambda x, y: x <= y, np.less_equal, (I, I2)),
    Case("Greater", "int-scalar", lambda x: x > 0, lambda x: x > 0, (I,)),
    Case("GreaterEqual", "float", lambda x, y: x >= y, np.greater_equal, (F, F2)),
    Case("Equal", "bool", al.equal, np.equal, (B, B2)),
    Case("NotEqual", "int", al.not_equal, np.not_equal, (I, I2)),
    Case("LogicalNot", "bool", al.logical_not, np.logical_not, (B,)),
    Case("Invert", "int", lambda x: ~x, np.invert, (I,)),
    # -- math (unary) ----------------------------------------------------------------
    Case("Neg", "float", lambda x: -x, np.negative, (F,)),
    Case("Abs", "int", abs, np.abs, (I,)),
    Case("Square", "float", al.square, np.square, (F,)),
    Case("Sqrt", "float", al.sqrt, np.sqrt, (POS,)),
    Case("Exp", "float", al.exp, np.exp, (F,)),
    Case("Log", "float64", al.log, np.log, (np.abs(D) + 1,)),
    Case("Sin", "float", al.sin, np.sin, (F,)),
    Case("Cos", "float", al.cos, np.cos, (F,)),
    Case("Tanh", "float", al.tanh, np.tanh, (F,)),
    Case("Sigmoid", "float", al.sigmoid, lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype), (F,)),
    Case("Identity", "int", al.identity, lambda x: x, (I,)),
    Case("Cast", "float-to-int", lambda x: al.cast(x * 3, al.int32), lambda x: (x * 3).astype(np.int32), (F,)),
    Case("Cast", "int-to-bool", lambda x: al.cast(x, al.bool), lambda x: x.astype(bool), (I,)),
    # -- slicing, shape, concat ------------------------------------------------------
    Case("StridedSlice", "slices", lambda x: x[1:, ::2], lambda x: x[1:, ::2], (F3D,)),
    Case("StridedSlice", "index-newaxis", lambda x: x[0, None, ..., -1], lambda x: x[0, None, ..., -1], (F3D,)),
    Case("Shape", "int32", al.shape, lambda x: np.array(x.shape, np.int32), (F3D,)),
    Case("ConcatV2", "axis1", lambda x, y: al.concat([x, y, x], 1), lambda x, y: np.concatenate([x, y, x], 1),
         (F, F2)),
    # -- creation ------------------------------------------------------------------------
    Case("Fill", "fill", lambda v: al.fill([2, 3], v), lambda v: np.full((2, 3), v), (np.array(7, np.int32),)),
    Case("Fill", "zeros", lambda x: al.zeros(al.shape(x), al.int64), lambda x: np.zeros(x.shape, np.int64), (F,)),
    Case("Fill", "ones-scalar-shape", lambda x: x + al.ones([]), lambda x: x + np.float32(1), (F,)),
    Case("Fill", "ones-dynamic", lambda n: al.ones(al.stack([n, 2]), al.bool),
         lambda n: np.ones((n, 2), bool), (np.array(3, np.int32),)),
    Case("ZerosLike", "float", al.zeros_like, np.zeros_like, (F,)),
    Case("OnesLike", "bool", al.ones_like, np.ones_like, (B,)),
    Case("Range", "limit", lambda: al.range(5), lambda: np.arange(5, dtype=np.int32), ()),
    Case("Range", "start-limit-delta", lambda: al.range(1, 10, 3), lambda: np.arange(1, 10, 3, dtype=np.int32), ()),
    Case("Range", "float-down", lambda: al.range(5, 1, -1.5), lambda: np.arange(5, 1, -1.5, dtype=np.float32), ()),
    Case("Range", "tensor-limit", lambda n: al.range(n), lambda n: np.arange(n, dtype=np.int64),
         (np.array(4, np.int64),)),
    Case("Range", "tensor-start-float", lambda s: al.range(s, 3.0), lambda s: np.arange(s, 3.0, dtype=np.float32),
         (np.array(1, np.int32),)),
    Case("Range", "empty", lambda: al.range(3, 3), lambda: np.arange(3, 3, dtype=np.int32), ()),
    Case("Size", "size", al.size, lambda x: np.int32(x.size), (F3D,)),
    Case("Size", "int64", lambda x: al.size(x, al.int64), lambda x: np.int64(x.size), (I,)),
    Case("Rank", "rank", al.rank, lambda x: np.int32(x.ndim), (F3D,)),
    Case("StopGradient", "float", al.stop_gradient, lambda x: x, (F,)),
    # -- reductions --------------------------------------------------------------------
    Case("Sum", "all", al.reduce_sum, lambda x: np.sum(x, dtype=x.dtype), (F,)),
    Case("Sum", "int-axis1", lambda x: al.reduce_sum(x, 1), lambda x: np.sum(x, 1, dtype=x.dtype), (I,)),
    Case("Sum", "axes-keepdims", lambda x: al.reduce_sum(x, [0, -1], keepdims=True),
         lambda x: np.sum(x, (0, 2), keepdims=True), (F3D,)),
    Case("Sum", "int32-wraps", al.reduce_sum, lambda x: np.sum(x, dtype=np.int32),
         (np.full(3, 2 ** 30, np.int32),)),
    Case("Mean", "float-axis0", lambda x: al.reduce_mean(x, 0), lambda x: np.mean(x, 0), (F,)),
    Case("Mean", "int-truncates", al.reduce_mean, _int_mean, (np.array([-1, -2], np.int32),)),
    Case("Mean", "int-axis1-keepdims", lambda x: al.reduce_mean(x, 1, keepdims=True),
         lambda x: _int_mean(x, 1, keepdims=True), (I,)),
    Case("Max", "float-axis1", lambda x: al.reduce_max(x, 1), lambda x: np.max(x, 1), (F,)),
    Case("Max", "empty-is-lowest", lambda x: al.reduce_max(x, 0), lambda x: np.full(3, -np.inf, np.float32),
         (EMPTY,)),
    Case("Min", "int64-all", al.reduce_min, np.min, (L,)),
    Case("Min", "empty-int-is-highest", lambda x: al.reduce_min(x, 0),
         lambda x: np.full(3, np.iinfo(np.int32).max, np.int32), (np.zeros((0, 3), np.int32),)),
    Case("Prod", "int-axis0", lambda x: al.reduce_prod(x, 0), lambda x: np.prod(x, 0, dtype=x.dtype), (I2,)),
    Case("Any", "axis1", lambda x: al.reduce_any(x, 1), lambda x: np.any(x, 1), (B,)),
    Case("All", "all", al.reduce_all, np.all, (B2,)),
    Case("All", "axis-empty-list", lambda x: al.reduce_all(x, []), lambda x: x, (B2,)),
    Case("ArgMax", "axis0", al.argmax, lambda x: np.argmax(x, 0).astype(np.int64), (F,)),
    Case("ArgMax", "axis1-int32", lambda x: al.argmax(x, 1, output_type=al.int32),
         lambda x: np.argmax(x, 1).astype(np.int32), (I,)),
    Case("ArgMin", "vector", al.argmin, lambda x: np.int64(np.argmin(x)), (F[0],)),
    Case("ArgMin", "axis-minus1", lambda x: al.argmin(x, -1), lambda x: np.argmin(x, -1).astype(np.int64), (F3D,)),
    # -- shape ops --------------------------------------------------------------------
    Case("Pack", "axis0", lambda x, y: al.stack([x, y]), lambda x, y: np.stack([x, y]), (F, F2)),
    Case("Pack", "axis-minus1-python", lambda x: al.stack([x, [[1, 2, 3], [4, 5, 6]], x], axis=-1),
         lambda x: np.stack([x, np.arange(1, 7, dtype=np.int32).reshape(2, 3), x], -1), (I,)),
    Case("Pack", "scalars", lambda x: al.stack([x, x]), lambda x: np.stack([x, x]), (np.array(2.5, np.float32),)),
    Case("Unpack", "axis0", al.unstack, lambda x: list(x), (F,)),
    Case("Unpack", "axis1", lambda x: al.unstack(x, axis=1), lambda x: list(np.moveaxis(x, 1, 0)), (F3D,)),
    Case("Reshape", "minus1", lambda x: al.reshape(x, [3, -1]), lambda x: x.reshape(3, -1), (F,)),
    Case("Reshape", "flat", lambda x: al.reshape(x, -1), lambda x: x.reshape(-1), (F3D,)),
    Case("Reshape", "to-scalar", lambda x: al.reshape(x, []), lambda x: x.reshape(()), (np.ones((1, 1), np.int32),)),
    Case("Reshape", "tensor-shape", al.reshape, lambda x, s: x.reshape(s), (F3D, np.array([4, -1], np.int32))),
    Case("Reshape", "list-with-tensor", lambda x, n: al.reshape(x, [n, -1]), lambda x, n: x.reshape(n, -1),
         (F3D, np.array(6, np.int32))),
    Case("Transpose", "default", al.transpose, np.transpose, (F,)),
    Case("Transpose", "perm", lambda x: al.transpose(x, [1, 0, 2]), lambda x: np.transpose(x, (1, 0, 2)), (F3D,)),
    Case("ExpandDims", "axis0", lambda x: al.expand_dims(x, 0), lambda x: x[None], (F,)),
    Case("ExpandDims", "axis-minus1", lambda x: al.expand_dims(x, -1), lambda x: x[..., None], (I,)),
    Case("ExpandDims", "scalar", lambda x: al.expand_dims(x, 0), lambda x: np.expand_dims(x, 0),
         (np.array(1.5, np.float32),)),
    Case("Squeeze", "all", al.squeeze, np.squeeze, (np.ones((1, 2, 1), np.int32),)),
    Case("Squeeze", "axis", lambda x: al.squeeze(x, [-1]), lambda x: np.squeeze(x, -1),
         (np.ones((1, 2, 1), np.float32),)),
    Case("GatherV2", "axis0-matrix-indices", al.gather, lambda p, i: np.take(p, i, 0),
         (F3D, np.array([[1, 0], [1, 1]], np.int32))),
    Case("GatherV2", "axis1", lambda p, i: al.gather(p, i, axis=1), lambda p, i: np.take(p, i, 1),
         (L, np.array([2, 0], np.int64))),
    Case("GatherV2", "scalar-index", lambda p, i: al.gather(p, i), lambda p, i: p[i], (F, np.array(1, np.int32))),
    Case("Tile", "static", lambda x: al.tile(x, [2, 1]), lambda x: np.tile(x, (2, 1)), (F,)),
    Case("Tile", "tensor-multiples", al.tile, lambda x, m: np.tile(x, m), (I, np.array([1, 3], np.int32))),
    Case("OneHot", "default", lambda i: al.one_hot(i, 4), lambda i: _one_hot(i, 4),
         (np.array([0, 3, -1, 4], np.int32),)),
    Case("OneHot", "axis0-values", lambda i: al.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
         lambda i: _one_hot(i, 3, 5, -1, axis=0, dtype=np.int32), (np.array([[0, 2], [1, 1]], np.int64),)),
    Case("OneHot", "dtype", lambda i: al.one_hot(i, 2, dtype=al.float64), lambda i: _one_hot(i, 2, dtype=np.float64),
         (np.array(1, np.int32),)),
    Case("SelectV2", "broadcast", lambda c, x: al.where(c, x, 0.5), lambda c, x: np.where(c, x, np.float32(0.5)),
         (B[:, :1], F)),
    Case("SelectV2", "int", lambda c, x, y: al.where(c, x, y), np.where, (B, I, I2)),
    Case("Where", "coordinates", al.where, lambda c: np.argwhere(c).astype(np.int64), (B,)),
    Case("Where", "numeric", al.where, lambda c: np.argwhere(c).astype(np.int64), (I,)),
    # -- what gradient rules use ------------------------------------------------------------
    Case("SumToShape", "undo-broadcast", lambda x: sum_to_shape(x, [1, 3]), lambda x: x.sum(0, keepdims=True), (F,)),
    Case("SumToShape", "leading-axes", lambda x: sum_to_shape(x, [4]), lambda x: x.sum((0, 1)), (F3D,)),
    Case("StridedSliceGrad", "into-zeros", lambda g: apply("StridedSliceGrad", [g, al.constant([4, 4])],
                                                           {"spec": (("slice", 1, None, None), ("index", 2))}),
         lambda g: _slice_written(g), (F[0],)),
    Case("PadGrad", "reflect", lambda g: apply("PadGrad", [g], {"paddings": ((1, 0), (0, 1)), "mode": "REFLECT"}),
         _reflect_folded, (F3D[0, :3, :],)),
    Case("PermuteAlongAxis", "rows", lambda x, o: apply("PermuteAlongAxis", [x, o], {"axis": 1}),
         lambda x, o: np.take_along_axis(x, o, 1), (F, np.array([[2, 0, 1], [0, 2, 1]], np.int32))),
]
