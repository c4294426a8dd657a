"""More of the op table: the ops behind TensorFlow's math, nn, linalg, random, ... names.

Same `Case` rows as `op_cases` (run eagerly and traced by `test_op_table.py`);
each numpy reference is written from TensorFlow's documented semantics.
"""

from __future__ import annotations

import numpy as np

import autoloop as al
from autoloop.ops.dispatch import apply
from autoloop.ops.resize_ops import pad_rows
from op_cases import B, D, F, F2, F3D, I, I2, L, POS, Case

_rng = np.random.default_rng(1)
I8 = _rng.integers(-100, 100, (2, 3)).astype(np.int8)
I8B = _rng.integers(1, 20, (2, 3)).astype(np.int8)
I16 = _rng.integers(-3000, 3000, (2, 3)).astype(np.int16)
U8 = _rng.integers(0, 255, (2, 3)).astype(np.uint8)
U8B = _rng.integers(1, 255, (2, 3)).astype(np.uint8)
H = _rng.standard_normal((2, 3)).astype(np.float16)
HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], np.float32)
SPECIAL = np.array([1.0, -np.inf, np.inf, np.nan, 0.0], np.float32)
M = _rng.standard_normal((3, 4)).astype(np.float32)
V = _rng.standard_normal(4).astype(np.float32)
BATCH = _rng.standard_normal((2, 3, 4)).astype(np.float64)


def _cumulative(accumulate, identity, x, axis=0, exclusive=False, reverse=False):
    """Reference cumsum/cumprod, written out the long way."""
    x = np.moveaxis(x, axis, 0)
    x = x[::-1] if reverse else x
    out, running = [], np.full(x.shape[1:], identity, dtype=x.dtype)
    for row in x:
        if exclusive:
            out.append(running.copy())
            running = accumulate(running, row).astype(x.dtype)
        else:
            running = accumulate(running, row).astype(x.dtype)
            out.append(running.copy())
    out = np.stack(out) if out else np.zeros_like(x)
    out = out[::-1] if reverse else out
    return np.moveaxis(out, 0, axis)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def _log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))).astype(x.dtype)


def _logsumexp(x, axis=None, keepdims=False):
    big = np.max(x, axis=axis, keepdims=True)
    big = np.where(np.isfinite(big), big, 0)
    result = np.log(np.sum(np.exp(x - big), axis=axis, keepdims=keepdims))
    return (result + (big if keepdims else np.squeeze(big, axis=axis))).astype(x.dtype)[()]


def _stream(global_seed, op_seed):
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([global_seed, op_seed])))


def _truncated(generator, shape):
    """Standard normal numbers of `shape`, those beyond 2 drawn again (TensorFlow's truncation), float32."""
    values = generator.standard_normal(shape, dtype=np.float32)
    while (np.abs(values) > 2).any():
        outside = np.abs(values) > 2
        values[outside] = generator.standard_normal(int(outside.sum()), dtype=np.float32)
    return values


def _seeded(fn, global_seed=5):
    """`fn` run right after ``set_seed(global_seed)`` (eagerly, or while tracing)."""
    def run(*args):
        al.random.set_seed(global_seed)
        return fn(*args)
    return run


def _gather_nd(params, indices):
    return params[tuple(np.moveaxis(indices, -1, 0))]


def _scatter_nd(indices, updates, shape):
    out = np.zeros(shape, updates.dtype)
    for index, update in zip(indices.reshape(-1, indices.shape[-1]),
                             updates.reshape((-1,) + tuple(shape[indices.shape[-1]:]))):
        out[tuple(index)] += update
    return out


def _tensor_array_concat(x):
    ta = al.TensorArray(x.dtype, size=0, dynamic_size=True, infer_shape=False)
    ta = ta.write(0, x[:1]).write(1, x[1:])
    return ta.concat()


def _tensor_array_split(x):
    return al.TensorArray(x.dtype, size=2).split(x, [1, 2]).read(1)


CASES: list[Case] = [
    # -- the narrower dtypes through existing ops ----------------------------------------------
    Case("Add", "int8-wraps", lambda x, y: x + y, lambda x, y: x + y, (I8, I8)),
    Case("Mul", "uint8", lambda x: x * 3, lambda x: x * np.uint8(3), (U8,)),
    Case("Sub", "int16", al.subtract, np.subtract, (I16, I16[::-1])),
    Case("RealDiv", "int8-gives-float32", lambda x, y: x / y,
         lambda x, y: x.astype(np.float32) / y.astype(np.float32), (I8, I8B)),
    Case("RealDiv", "uint8-gives-float32", al.truediv,
         lambda x, y: x.astype(np.float32) / y.astype(np.float32), (U8, U8B)),
    Case("RealDiv", "int64-gives-float64", al.math.truediv, lambda x, y: x / y, (L, L * 0 + 3)),
    Case("Sqrt", "float16", al.sqrt, np.sqrt, (np.abs(H),)),
    Case("Less", "uint8", lambda x, y: x < y, np.less, (U8, U8B)),
    Case("Sum", "int8-wraps", al.reduce_sum, lambda x: np.sum(x, dtype=np.int8), (I8,)),
    Case("Max", "float16-axis0", lambda x: al.reduce_max(x, 0), lambda x: np.max(x, 0), (H,)),
    Case("Cast", "float32-to-uint8", lambda x: al.cast(al.abs(x) * 10, al.uint8),
         lambda x: (np.abs(x) * 10).astype(np.uint8), (F,)),
    Case("Cast", "int16-to-float16", lambda x: al.cast(x, al.float16), lambda x: x.astype(np.float16), (I16,)),
    Case("ArgMax", "uint8", al.math.argmax, lambda x: np.argmax(x, 0).astype(np.int64), (U8,)),
    Case("Neg", "int8", al.math.negative, np.negative, (I8B,)),
    # -- rounding, sign and friends ----------------------------------------------------------
    Case("Floor", "float", al.floor, np.floor, (HALVES,)),
    Case("Ceil", "float64", al.math.ceil, np.ceil, (D,)),
    Case("Round", "half-to-even", al.round, lambda x: np.array([-2, -2, -0, 0, 2, 2], np.float32), (HALVES,)),
    Case("Round", "int-unchanged", al.math.round, lambda x: x, (I,)),
    Case("Sign", "float", al.sign, np.sign, (F,)),
    Case("Sign", "int16", al.math.sign, np.sign, (I16,)),
    Case("Log1p", "float", al.math.log1p, np.log1p, (POS,)),
    Case("Rsqrt", "float64", al.math.rsqrt, lambda x: 1 / np.sqrt(x), (np.abs(D) + 0.1,)),
    Case("IsFinite", "specials", al.math.is_finite, np.isfinite, (SPECIAL,)),
    Case("ClipByValue", "python-bounds", lambda x: al.clip_by_value(x, -0.5, 0.5),
         lambda x: np.clip(x, np.float32(-0.5), np.float32(0.5)), (F,)),
    Case("ClipByValue", "tensor-bounds-broadcast", lambda x, lo: al.clip_by_value(x, lo, 2),
         lambda x, lo: np.maximum(np.minimum(x, 2), lo), (I, np.array([-1, 0, 1], np.int32))),
    Case("ClipByValue", "min-above-max-gives-min", lambda x: al.clip_by_value(x, 3, 1),
         lambda x: np.full_like(x, 3), (I,)),
    # -- sums --------------------------------------------------------------------------------
    Case("AddN", "three", lambda x, y: al.add_n([x, y, x]), lambda x, y: x + y + x, (F, F2)),
    Case("AddN", "with-python-list", lambda x: al.math.add_n([x, [[1, 2, 3], [4, 5, 6]]]),
         lambda x: x + np.arange(1, 7, dtype=np.int32).reshape(2, 3), (I,)),
    Case("Cumsum", "axis0", al.cumsum, lambda x: np.cumsum(x, 0, dtype=x.dtype), (I,)),
    Case("Cumsum", "exclusive-reverse-axis1", lambda x: al.math.cumsum(x, 1, exclusive=True, reverse=True),
         lambda x: _cumulative(np.add, 0, x, 1, exclusive=True, reverse=True), (F,)),
    Case("Cumsum", "axis-minus1-int8-wraps", lambda x: al.cumsum(x, -1),
         lambda x: _cumulative(np.add, 0, x, 1), (I8,)),
    Case("Cumprod", "exclusive", lambda x: al.math.cumprod(x, exclusive=True),
         lambda x: _cumulative(np.multiply, 1, x, 0, exclusive=True), (I2,)),
    Case("Cumprod", "reverse-axis2", lambda x: al.math.cumprod(x, 2, reverse=True),
         lambda x: _cumulative(np.multiply, 1, x, 2, reverse=True), (F3D,)),
    # -- statistics (compositions: they must create the ops they are built from) ----------------
    Case("Exp", "reduce_logsumexp-all", al.reduce_logsumexp, _logsumexp, (F * 50,)),
    Case("Log1p", "softplus", al.nn.softplus, lambda x: np.logaddexp(np.float32(0), x), (F * 10,)),
    Case("Log", "reduce_logsumexp-axis1-keepdims", lambda x: al.math.reduce_logsumexp(x, 1, keepdims=True),
         lambda x: _logsumexp(x, 1, keepdims=True), (D,)),
    Case("IsFinite", "reduce_logsumexp-all-minus-inf", lambda x: al.reduce_logsumexp(x, 0),
         lambda x: np.full(2, -np.inf, np.float32), (np.full((3, 2), -np.inf, np.float32),)),
    Case("Mean", "reduce_variance-axis0", lambda x: al.math.reduce_variance(x, 0), lambda x: np.var(x, 0), (F,)),
    Case("Mean", "reduce_variance-all", al.math.reduce_variance, lambda x: np.var(x), (D,)),
    Case("Sqrt", "reduce_std-axis1-keepdims", lambda x: al.math.reduce_std(x, 1, keepdims=True),
         lambda x: np.std(x, 1, keepdims=True), (F3D,)),
    # -- nn --------------------------------------------------------------------------------------
    Case("Relu", "float", al.nn.relu, lambda x: np.maximum(x, np.float32(0)), (F,)),
    Case("Relu", "int8", al.nn.relu, lambda x: np.maximum(x, np.int8(0)), (I8,)),
    Case("Softmax", "last-axis", al.nn.softmax, _softmax, (F3D * 30,)),
    Case("Softmax", "axis0", lambda x: al.math.softmax(x, axis=0), lambda x: _softmax(x, 0), (D,)),
    Case("LogSoftmax", "last-axis", al.nn.log_softmax, _log_softmax, (F * 100,)),
    Case("Sigmoid", "nn-name", al.nn.sigmoid, lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype), (F,)),
    Case("Tanh", "nn-name", al.nn.tanh, np.tanh, (F,)),
    # -- linalg -----------------------------------------------------------------------------------
    Case("MatMul", "transpose_a", lambda a, b: al.linalg.matmul(a, b, transpose_a=True),
         lambda a, b: a.T @ b, (M, M)),
    Case("MatMul", "batched-transpose_b", lambda a, b: al.matmul(a, b, transpose_b=True),
         lambda a, b: a @ np.swapaxes(b, -1, -2), (BATCH, BATCH)),
    Case("MatMul", "matvec", al.linalg.matvec, lambda a, v: a @ v, (M, V)),
    Case("MatMul", "matvec-transpose_a", lambda a, v: al.linalg.matvec(a, v, transpose_a=True),
         lambda a, v: a.T @ v, (M, V[:3])),
    Case("Transpose", "Tensor.T", lambda x: x.T, lambda x: x.T, (F3D,)),
    Case("Eye", "square", lambda: al.eye(3), lambda: np.eye(3, dtype=np.float32), ()),
    Case("Eye", "batch-rect-int", lambda: al.linalg.eye(2, 3, batch_shape=[2], dtype=al.int32),
         lambda: np.broadcast_to(np.eye(2, 3, dtype=np.int32), (2, 2, 3)).copy(), ()),
    Case("Einsum", "matmul", lambda a, b: al.einsum("ij,jk->ik", a, b), lambda a, b: a @ b, (M, M.T)),
    Case("Einsum", "implicit-trace-like", lambda a: al.linalg.einsum("ii", a),
         lambda a: np.einsum("ii", a), (M[:, :3],)),
    Case("Einsum", "ellipsis-batch", lambda a, b: al.einsum("...ij,...jk->...ik", a, b),
         lambda a, b: a @ b, (BATCH, np.swapaxes(BATCH, -1, -2))),
    Case("Einsum", "outer-int", lambda a, b: al.einsum("i,j->ij", a, b), np.outer,
         (np.array([1, 2], np.int32), np.array([3, 4, 5], np.int32))),
    Case("Einsum", "tensordot-int-axes", lambda a, b: al.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1),
         (F3D, M.T[:, :4].copy())),
    Case("Einsum", "tensordot-pairs", lambda a, b: al.linalg.tensordot(a, b, [[0, 2], [1, 0]]),
         lambda a, b: np.tensordot(a, b, [[0, 2], [1, 0]]),
         (F3D, _rng.standard_normal((4, 2, 5)).astype(np.float32))),
    Case("Sqrt", "norm-euclidean-all", al.norm, lambda x: np.float32(np.linalg.norm(x.ravel())), (F3D,)),
    Case("Abs", "norm-1-axis1", lambda x: al.linalg.norm(x, 1, axis=1),
         lambda x: np.linalg.norm(x, 1, axis=1).astype(np.float32), (F,)),
    Case("Max", "norm-inf-keepdims", lambda x: al.norm(x, np.inf, axis=0, keepdims=True),
         lambda x: np.max(np.abs(x), 0, keepdims=True), (D,)),
    Case("Pow", "norm-3", lambda x: al.norm(x, 3, axis=-1),
         lambda x: (np.sum(np.abs(x) ** 3, -1) ** (1 / 3)).astype(np.float32), (F,)),
    Case("Sqrt", "norm-fro-matrix", lambda x: al.norm(x, "fro", axis=[1, 2]),
         lambda x: np.linalg.norm(x, "fro", axis=(1, 2)).astype(np.float32), (F3D,)),
    Case("Max", "norm-matrix-1", lambda x: al.norm(x, 1, axis=[-2, -1]),
         lambda x: np.linalg.norm(x, 1, axis=(-2, -1)), (BATCH,)),
    Case("Max", "norm-matrix-inf-keepdims", lambda x: al.norm(x, np.inf, axis=(0, 1), keepdims=True),
         lambda x: np.linalg.norm(x, np.inf, axis=(0, 1), keepdims=True), (D,)),
    # -- reorder -----------------------------------------------------------------------------------
    Case("ReverseV2", "two-axes", lambda x: al.reverse(x, [0, -1]), lambda x: x[::-1, :, ::-1], (F3D,)),
    Case("Roll", "one-axis", lambda x: al.roll(x, 2, 1), lambda x: np.roll(x, 2, 1), (I,)),
    Case("Roll", "tensor-shift-two-axes", lambda x, s: al.roll(x, s, [0, 1]),
         lambda x, s: np.roll(x, tuple(s), (0, 1)), (F, np.array([1, -1], np.int32))),
    Case("Sort", "ascending", al.sort, lambda x: np.sort(x, -1), (F,)),
    Case("Sort", "descending-axis0-int", lambda x: al.sort(x, 0, "DESCENDING"),
         lambda x: -np.sort(-x, 0), (I,)),
    Case("ArgSort", "ascending-ties-stable", al.argsort, lambda x: np.argsort(x, kind="stable").astype(np.int32),
         (np.array([3, 1, 2, 1, 3], np.int32),)),
    Case("ArgSort", "descending-ties-stable", lambda x: al.argsort(x, direction="DESCENDING"),
         lambda x: np.array([0, 4, 2, 1, 3], np.int32), (np.array([3, 1, 2, 1, 3], np.int32),)),
    Case("ArgSort", "uint8-axis0", lambda x: al.argsort(x, 0), lambda x: np.argsort(x, 0, kind="stable").astype(np.int32),
         (U8,)),
    # -- resize -------------------------------------------------------------------------------------
    Case("Pad", "constant", lambda x: al.pad(x, [[1, 0], [2, 1]]), lambda x: np.pad(x, [(1, 0), (2, 1)]), (I,)),
    Case("Pad", "constant-value", lambda x: al.pad(x, [[0, 1], [1, 1]], constant_values=9.5),
         lambda x: np.pad(x, [(0, 1), (1, 1)], constant_values=9.5), (F,)),
    Case("Pad", "reflect", lambda x: al.pad(x, [[1, 1], [2, 2]], "REFLECT"),
         lambda x: np.pad(x, [(1, 1), (2, 2)], mode="reflect"), (F,)),
    Case("Pad", "symmetric", lambda x: al.pad(x, [[2, 2], [0, 3]], "symmetric"),
         lambda x: np.pad(x, [(2, 2), (0, 3)], mode="symmetric"), (I,)),
    Case("PadRows", "rows", lambda x: pad_rows(x, 5),
         lambda x: np.concatenate([x, np.zeros((5 - len(x),) + x.shape[1:], x.dtype)]), (F,)),
    Case("PadRowsGrad", "rows", lambda g: apply("PadRowsGrad", [g, al.constant([1, 3])], {}), lambda g: g[:1], (F,)),
    Case("SplitV", "equal", lambda x: al.split(x, 3, axis=1), lambda x: np.split(x, 3, 1), (F,)),
    Case("SplitV", "sizes-minus1", lambda x: al.split(x, [1, -1, 2], axis=2),
         lambda x: np.split(x, [1, 2], 2), (F3D,)),
    Case("SplitV", "one-piece", lambda x: al.split(x, 1), lambda x: [x], (I,)),
    Case("BroadcastTo", "static", lambda x: al.broadcast_to(x, [4, 2, 3]), lambda x: np.broadcast_to(x, (4, 2, 3)),
         (F,)),
    Case("BroadcastTo", "tensor-shape", al.broadcast_to, lambda x, s: np.broadcast_to(x, s).copy(),
         (np.array([[1], [2]], np.int32), np.array([3, 2, 4], np.int32))),
    # -- coordinates ------------------------------------------------------------------------------
    Case("GatherNd", "elements", al.gather_nd, _gather_nd, (F3D, np.array([[1, 0, 3], [0, 2, 1]], np.int32))),
    Case("GatherNd", "slices-int64", al.gather_nd, _gather_nd, (F3D, np.array([[[1], [0]]], np.int64))),
    Case("ScatterNd", "duplicates-sum", lambda i, u: al.scatter_nd(i, u, [5]), lambda i, u: _scatter_nd(i, u, (5,)),
         (np.array([[1], [3], [1]], np.int32), np.array([1.5, 2.0, 3.0], np.float32))),
    Case("ScatterNd", "rows", lambda i, u: al.scatter_nd(i, u, [3, 2]),
         lambda i, u: _scatter_nd(i, u, (3, 2)), (np.array([[2], [0]], np.int64), I[:, :2].copy())),
    Case("TensorScatterUpdate", "elements", al.tensor_scatter_nd_update,
         lambda t, i, u: _set(t, i, u), (F, np.array([[0, 1], [1, 2]], np.int32), np.array([7, 8], np.float32))),
    Case("TensorScatterUpdate", "rows-python-updates",
         lambda t: al.tensor_scatter_nd_update(t, [[1]], [[1, 2, 3]]),
         lambda t: np.array([t[0], [1, 2, 3]], np.int32), (I,)),
    Case("GatherV2", "boolean_mask", al.boolean_mask, lambda x, m: x[m], (F, np.array([True, False]))),
    Case("GatherV2", "boolean_mask-2d-mask", al.boolean_mask, lambda x, m: x[m], (F3D, B)),
    Case("GatherV2", "boolean_mask-axis1", lambda x, m: al.boolean_mask(x, m, axis=1), lambda x, m: x[:, m],
         (F3D, np.array([True, False, True]))),
    # -- checks ----------------------------------------------------------------------------------
    Case("EnsureShape", "partial", lambda x: al.ensure_shape(x, [2, None]) * 2, lambda x: x * 2, (F,)),
    # -- random numbers: the seeding rule of autoloop.random, against the documented streams --------
    Case("RandomUniform", "op-seed", _seeded(lambda: al.random.uniform([2, 3], seed=7)),
         lambda: _stream(5, 7).random((2, 3), dtype=np.float32), ()),
    Case("RandomUniform", "counter-seeds-and-range", _seeded(lambda: [al.random.uniform([4], -2.0, 2.0),
                                                                       al.random.uniform([4], -2.0, 2.0)]),
         lambda: [_stream(5, n).random(4, dtype=np.float32) * 4 - 2 for n in (0, 1)], ()),
    Case("RandomUniform", "int64", _seeded(lambda: al.random.uniform([5], 3, 9, dtype=al.int64, seed=1), 11),
         lambda: _stream(11, 1).integers(3, 9, 5, dtype=np.int64), ()),
    Case("RandomUniform", "tensor-shape-float64", _seeded(lambda n: al.random.uniform(al.stack([n, 2]),
                                                                                      dtype=al.float64, seed=2)),
         lambda n: _stream(5, 2).random((n, 2)), (np.array(3, np.int32),)),
    Case("RandomNormal", "mean-stddev", _seeded(lambda: al.random.normal([3, 2], 10.0, 0.5, seed=3)),
         lambda: _stream(5, 3).standard_normal((3, 2), dtype=np.float32) * np.float32(0.5) + np.float32(10), ()),
    Case("RandomNormal", "float64-broadcast-mean", _seeded(lambda m: al.random.normal([2, 3], m, dtype=al.float64,
                                                                                      seed=4)),
         lambda m: _stream(5, 4).standard_normal((2, 3)) + m, (np.array([0.0, 10.0, 20.0]),)),
    Case("TruncatedNormal", "within-two-stddev", _seeded(lambda: al.random.truncated_normal([3, 2], 1.0, 0.5, seed=3)),
         lambda: _truncated(_stream(5, 3), (3, 2)) * np.float32(0.5) + np.float32(1), ()),
    Case("StatelessRandomUniform", "seed-pair", lambda: al.random.stateless_uniform([2, 3], seed=[4, 9]),
         lambda: _stream(4, 9).random((2, 3), dtype=np.float32), ()),
    Case("StatelessRandomUniform", "tensor-seed-int-range",
         lambda s: al.random.stateless_uniform([5], seed=s, minval=2, maxval=7, dtype=al.int64),
         lambda s: _stream(*s).integers(2, 7, 5, dtype=np.int64), (np.array([3, 1], np.int32),)),
    Case("StatelessRandomNormal", "mean-stddev", lambda: al.random.stateless_normal([3], seed=[1, 2], mean=2.0,
                                                                                   stddev=3.0),
         lambda: _stream(1, 2).standard_normal(3, dtype=np.float32) * np.float32(3) + np.float32(2), ()),
    # -- sequences, segments, matrices (checked against TensorFlow 2.21) ---------------------------------
    Case("SearchSorted", "left-batched", al.searchsorted,
         lambda s, v: np.stack([np.searchsorted(r, q) for r, q in zip(s, v)]).astype(np.int32),
         (np.sort(F, axis=1), F2)),
    Case("SearchSorted", "right-int64", lambda s, v: al.searchsorted(s, v, side="right", out_type=al.int64),
         lambda s, v: np.searchsorted(s, v, side="right").astype(np.int64),
         (np.array([1, 2, 2, 3], np.int32), np.array([2, 0, 9], np.int32))),
    Case("Unique", "first-appearance", lambda x: list(al.unique(x)),
         lambda x: [np.array([3, 1, 2], np.int32), np.array([0, 1, 0, 2, 1], np.int32)],
         (np.array([3, 1, 3, 2, 1], np.int32),)),
    Case("SegmentReduce", "segment_sum", lambda d: al.math.segment_sum(d, [0, 0, 2]),
         lambda d: np.stack([d[0] + d[1], np.zeros(4, np.float32), d[2]]), (M,)),
    Case("SegmentReduce", "segment_max-empty-is-0", lambda d: al.math.segment_max(d, [0, 2]),
         lambda d: np.array([d[0], 0, d[1]], np.int32), (np.array([5, -4], np.int32),)),
    Case("SegmentReduce", "unsorted_min-dropped-and-empty", lambda d: al.math.unsorted_segment_min(d, [1, -1, 1, 0], 3),
         lambda d: np.array([d[3], min(d[0], d[2]), np.finfo(np.float32).max], np.float32), (V,)),
    Case("SegmentReduce", "unsorted_prod-2d-ids", lambda d: al.math.unsorted_segment_prod(d, [[0, 1, 0], [1, 1, 0]], 2),
         lambda d: np.array([d[0, 0] * d[0, 2] * d[1, 2], d[0, 1] * d[1, 0] * d[1, 1]], np.float64), (D.T.copy(),)),
    Case("SelectV2", "linspace-vectors-axis1", lambda a, b: al.linspace(a, b, 5, axis=1),
         lambda a, b: np.linspace(a, b, 5, axis=1, dtype=np.float32), (V, V * 3 + 1)),
    Case("SelectV2", "linspace-ints-one", lambda: [al.linspace(0, 1, 3), al.linspace(2.0, 5.0, 1)],
         lambda: [np.array([0.0, 0.5, 1.0]), np.array([2.0], np.float32)], ()),
    Case("Less", "sequence_mask", lambda n: al.sequence_mask(n, 4, dtype=al.float32),
         lambda n: (np.arange(4) < n[..., None]).astype(np.float32), (np.array([[1, 3], [0, 4]], np.int32),)),
    Case("Less", "sequence_mask-longest", al.sequence_mask, lambda n: np.arange(n.max()) < n[:, None],
         (np.array([1, 3, 2], np.int64),)),
    Case("RandomUniform", "dropout", _seeded(lambda x: al.nn.dropout(x, rate=0.25, seed=2)),
         lambda x: x / np.float32(0.75) * (_stream(5, 2).random(x.shape, dtype=np.float32) >= 0.25), (F,)),
    Case("MatrixInverse", "batch", al.linalg.inv, np.linalg.inv, (np.eye(3) * 2 + BATCH[:, :, :3] * 0.1,)),
    Case("MatrixSolve", "rhs", al.linalg.solve, np.linalg.solve,
         (np.eye(3, dtype=np.float32) * 3 + M[:, :3] * 0.1, M)),
    Case("Cholesky", "spd", al.linalg.cholesky, np.linalg.cholesky, (M @ M.T + 3 * np.eye(3, dtype=np.float32),)),
    # -- TensorArray additions ------------------------------------------------------------------------
    Case("TensorListConcat", "rows-of-different-lengths", _tensor_array_concat, lambda x: x, (M,)),
    Case("TensorListSplit", "rows", _tensor_array_split, lambda x: x[1:], (M,)),
]


def _set(tensor, indices, updates):
    result = tensor.copy()
    result[tuple(np.moveaxis(indices, -1, 0))] = updates
    return result
