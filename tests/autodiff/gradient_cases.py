"""The gradient table: cases that differentiate every op with a gradient rule.

A `GradCase` names the op it is about, a function of tensors (public API),
and how to make its arguments (random, in float64; integer arguments such as
indices are not differentiated). `test_rules.py` checks every case against
finite differences, traced and eagerly, and checks that every op with a rule
is in some case's graph. Generated rows cover broadcasting for every
element-wise binary op and every axis of every reduction.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

import autoloop as al
from autoloop.ops.dispatch import apply
from autoloop.ops.resize_ops import pad_rows
from autoloop.ops.gradient_support import sum_to_shape


class GradCase(NamedTuple):
    op: str
    id: str
    fn: Callable
    args: Callable  # rng -> tuple of numpy arguments
    step: float = 1e-6
    random: bool = False  # draws random numbers: checked eagerly with the seed reset before each run


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def away_from_zero(*shape):
    return lambda rng: rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def ints(values):
    return lambda rng: np.array(values, np.int32)


def args(*makers):
    return lambda rng: tuple(make(rng) for make in makers)


CASES: list[GradCase] = []


def case(op, name, fn, *makers, **options):
    CASES.append(GradCase(op, name, fn, args(*makers), **options))


# -- element-wise binary ops, with broadcasting --------------------------------------------
_BINARY = {
    "Add": (al.add, normal, normal),
    "Sub": (al.subtract, normal, normal),
    "Mul": (al.multiply, normal, normal),
    "RealDiv": (al.divide, normal, away_from_zero),
    "Pow": (al.pow, positive, normal),
    "FloorMod": (al.mod, normal, positive),
    "Maximum": (al.maximum, normal, normal),
    "Minimum": (al.minimum, normal, normal),
}
_BROADCASTS = {"same": ((2, 3), (2, 3)), "row": ((2, 3), (3,)), "column": ((2, 1), (1, 3)),
               "scalar": ((), (2, 3)), "leading": ((4, 2, 3), (2, 1))}
for _op, (_fn, _x, _y) in _BINARY.items():
    for _name, (_xs, _ys) in _BROADCASTS.items():
        case(_op, f"broadcast-{_name}", _fn, _x(*_xs), _y(*_ys))

# -- element-wise unary ops ------------------------------------------------------------------
_UNARY = {
    "Neg": (al.negative, normal), "Abs": (al.abs, away_from_zero), "Square": (al.square, normal),
    "Sqrt": (al.sqrt, positive), "Exp": (al.exp, normal), "Log": (al.log, positive), "Sin": (al.sin, normal),
    "Cos": (al.cos, normal), "Tanh": (al.tanh, normal), "Sigmoid": (al.sigmoid, normal),
    "Identity": (al.identity, normal), "Log1p": (al.math.log1p, positive), "Rsqrt": (al.math.rsqrt, positive),
    "Relu": (al.nn.relu, away_from_zero), "EnsureShape": (lambda x: al.ensure_shape(x, [2, None]), normal),
}
for _op, (_fn, _x) in _UNARY.items():
    case(_op, "2x3", _fn, _x(2, 3))
case("Cast", "float32-round-trip", lambda x: al.cast(al.cast(x, al.float32), al.float64) * x, normal(2, 3),
     step=1e-2)
case("Cast", "to-int-and-back", lambda x: al.cast(al.cast(x * 10, al.int32), al.float64) + x, normal(3))
case("PrintV1", "identity", lambda x: al.compat.v1.Print(x, [x], "value: ") * x, normal(3))  # TF1's Print
for _op in ("CheckDefined", "CheckAssigned"):
    case(_op, "defined", lambda x, o=_op: apply(o, [al.constant(True), x], {"message": "m", "error": "UnboundLocalError"}),
         normal(3))

# -- matmul and einsum ---------------------------------------------------------------------------
for _name, (_a, _b) in {"matrix": ((2, 3), (3, 4)), "vector-matrix": ((3,), (3, 4)),
                        "matrix-vector": ((2, 3), (3,)), "dot": ((3,), (3,)),
                        "batch-broadcast": ((2, 2, 3), (3, 4)), "batch-both": ((2, 3, 4), (1, 4, 2))}.items():
    case("MatMul", _name, al.matmul, normal(*_a), normal(*_b))
for _equation, _shapes in {"ij,jk->ik": ((2, 3), (3, 4)), "ij->": ((2, 3),), "ij->j": ((2, 3),),
                           "ij,j->ij": ((2, 3), (3,)), "bij,bjk->bik": ((2, 2, 3), (2, 3, 2)),
                           "i,i->": ((3,), (3,)), "...ij,jk->...ik": ((2, 2, 3), (3, 2)),
                           "ij,k->ijk": ((2, 2), (3,))}.items():
    case("Einsum", _equation, lambda *xs, e=_equation: al.einsum(e, *xs), *[normal(*s) for s in _shapes])

# -- reductions over each axis ------------------------------------------------------------------------
_REDUCTIONS = {"Sum": al.reduce_sum, "Mean": al.reduce_mean, "Max": al.reduce_max, "Min": al.reduce_min,
               "Prod": al.reduce_prod}
for _op, _fn in _REDUCTIONS.items():
    for _axis in [None, 0, 1, 2, -1, (0, 2)]:
        for _keep in (False, True):
            case(_op, f"axis={_axis}-keepdims={_keep}", lambda x, f=_fn, a=_axis, k=_keep: f(x, a, keepdims=k),
                 normal(2, 3, 4))
case("Sum", "vector", al.reduce_sum, normal(5))
case("Max", "ties-share", lambda x: al.reduce_max(al.concat([x, x], 0)), normal(3))

# -- slicing, gathering, scattering ---------------------------------------------------------------
for _name, _key in {"ranges": (slice(1, None), slice(None, None, 2)), "index-newaxis": (0, None, Ellipsis, -1),
                    "reverse": (slice(None, None, -1),), "column": (slice(None), 1)}.items():
    case("StridedSlice", _name, lambda x, k=_key: x[k], normal(3, 4, 2))
case("StridedSlice", "dynamic-index", lambda x, i: x[i] * 2.0, normal(3, 2), ints(1))
case("StridedSliceGrad", "direct", lambda g: apply("StridedSliceGrad", [g, al.constant([3, 4], al.int32)],
                                                   {"spec": (("slice", 1, None, None), ("index", 2))}), normal(2))
case("GatherV2", "axis0-repeated", lambda p, i: al.gather(p, i), normal(4, 3), ints([1, 1, 3, 0]))
case("GatherV2", "axis1-matrix-indices", lambda p, i: al.gather(p, i, axis=1), normal(2, 4, 3),
     ints([[0, 3], [3, 3]]))
case("GatherV2", "scalar-index", lambda p, i: al.gather(p, i), normal(4, 3), ints(2))
case("GatherNd", "coordinates", al.gather_nd, normal(3, 4), ints([[0, 1], [2, 3], [0, 1]]))
case("GatherNd", "rows", al.gather_nd, normal(3, 4), ints([[2], [0]]))
case("ScatterNd", "repeated", lambda i, u: al.scatter_nd(i, u, [4]), ints([[1], [1], [3]]), normal(3))
case("TensorScatterUpdate", "distinct", al.tensor_scatter_nd_update, normal(4, 2), ints([[0], [2]]), normal(2, 2))
case("OneHot", "values", lambda i, on, off: al.one_hot(i, 3, on_value=on, off_value=off), ints([0, 2, 1, 5]),
     normal(), normal())
case("SelectV2", "broadcast", lambda x, y: al.where(al.constant([True, False, True]), x, y), normal(2, 3),
     normal(3))

# -- shapes ---------------------------------------------------------------------------------------------
case("ConcatV2", "axis1", lambda x, y: al.concat([x, y, x], 1), normal(2, 3), normal(2, 1))
case("ConcatV2", "axis-minus1", lambda x, y: al.concat([x, y], -1), normal(2, 3), normal(2, 2))
case("Pack", "axis0", lambda x, y: al.stack([x, y]), normal(2, 3), normal(2, 3))
case("Pack", "axis-minus1", lambda x, y: al.stack([x, y, x], axis=-1), normal(2), normal(2))
case("Unpack", "some-used", lambda x: al.unstack(x)[0] * al.unstack(x)[2], normal(3, 2))
case("Unpack", "axis1", lambda x: al.unstack(x, axis=1)[1], normal(2, 3))
case("Reshape", "static", lambda x: al.reshape(x, [3, -1]), normal(2, 3))
case("Reshape", "tensor-shape", al.reshape, normal(2, 3), ints([3, 2]))
case("Transpose", "default", al.transpose, normal(2, 3))
case("Transpose", "perm", lambda x: al.transpose(x, [2, 0, 1]), normal(2, 3, 4))
case("ExpandDims", "axis1", lambda x: al.expand_dims(x, 1), normal(2, 3))
case("Squeeze", "all", al.squeeze, normal(1, 3, 1))
case("Tile", "static", lambda x: al.tile(x, [2, 3]), normal(2, 3))
case("Tile", "tensor-multiples", al.tile, normal(2, 1), ints([1, 3]))
case("BroadcastTo", "row", lambda x: al.broadcast_to(x, [2, 3]), normal(3))
case("BroadcastTo", "column", lambda x: al.broadcast_to(x, [2, 2, 3]), normal(2, 1))
case("SumToShape", "undo-broadcast", lambda x: sum_to_shape(x, al.constant([1, 3], al.int32)), normal(2, 3))
case("SplitV", "some-used", lambda x: al.split(x, [1, 2], axis=1)[1] * 2.0, normal(2, 3))
case("SplitV", "equal", lambda x: al.split(x, 2)[0] + al.split(x, 2)[1], normal(4, 2))
for _mode in ("CONSTANT", "REFLECT", "SYMMETRIC"):
    case("Pad", _mode.lower(), lambda x, m=_mode: al.pad(x, [[2, 1], [1, 2]], mode=m), normal(3, 4))
case("Pad", "constant-value", lambda x, c: al.pad(x, [[1, 0], [0, 2]], constant_values=c), normal(2, 2), normal())
case("PadGrad", "reflect", lambda g: apply("PadGrad", [g], {"paddings": ((1, 1), (2, 0)), "mode": "REFLECT"}),
     normal(4, 5))
case("PadRows", "rows", lambda x: pad_rows(x, 4), normal(2, 3))
case("PadRowsGrad", "rows", lambda g: apply("PadRowsGrad", [g, al.constant([2, 3])], {}), normal(4, 3))
case("Fill", "value", lambda v: al.fill([2, 3], v), normal())
case("AddN", "three", lambda x, y: al.add_n([x, y, x]), normal(2, 3), normal(2, 3))

# -- ordering, running totals, normalizing ----------------------------------------------------------
case("ReverseV2", "two-axes", lambda x: al.reverse(x, [0, 1]), normal(2, 3))
case("Roll", "axis1", lambda x: al.roll(x, 2, 1), normal(2, 3))
case("Sort", "descending", lambda x: al.sort(x, direction="DESCENDING") * al.constant([1.0, 2.0, 3.0, 4.0], al.float64),
     normal(2, 4))
case("Sort", "axis0", lambda x: al.sort(x, axis=0) * al.constant([[1.0], [3.0], [5.0]], al.float64), normal(3, 2))
case("PermuteAlongAxis", "direct", lambda x, o: apply("PermuteAlongAxis", [x, o], {"axis": 1}), normal(2, 3),
     ints([[2, 0, 1], [1, 2, 0]]))
for _op, _fn in {"Cumsum": al.math.cumsum, "Cumprod": al.math.cumprod}.items():
    for _axis, _exclusive, _reverse in [(0, False, False), (1, True, False), (1, False, True), (0, True, True)]:
        case(_op, f"axis{_axis}-exclusive={_exclusive}-reverse={_reverse}",
             lambda x, f=_fn, a=_axis, e=_exclusive, r=_reverse: f(x, a, exclusive=e, reverse=r), away_from_zero(3, 4))
case("Softmax", "last", al.nn.softmax, normal(2, 3))
case("Softmax", "axis0", lambda x: al.nn.softmax(x, axis=0), normal(2, 3))
case("LogSoftmax", "last", al.nn.log_softmax, normal(2, 3))
case("ClipByValue", "python-bounds", lambda x: al.clip_by_value(x, -0.5, 0.7),
     lambda rng: rng.choice([-1.2, -0.9, -0.2, 0.1, 0.4, 1.3], (2, 3)) + rng.uniform(-0.05, 0.05, (2, 3)))
case("ClipByValue", "tensor-bounds", al.clip_by_value, normal(2, 3), lambda rng: rng.uniform(-0.8, -0.2, 3),
     lambda rng: np.array(rng.uniform(0.2, 0.8)))


# -- random numbers: differentiable in their parameters ------------------------------------------------
def _reseed():
    al.random.set_seed(7)


case("RandomNormal", "mean-stddev", lambda m, s: al.random.normal([2, 3], m, s, dtype=al.float64, seed=1),
     normal(3), positive(), random=True)
case("RandomUniform", "bounds", lambda lo, hi: al.random.uniform([2, 3], lo, hi, dtype=al.float64, seed=1),
     lambda rng: rng.uniform(-2, -1, (2, 1)), positive(), random=True)
case("TruncatedNormal", "mean-stddev", lambda m, s: al.random.truncated_normal([2, 3], m, s, dtype=al.float64,
                                                                            seed=1),
     normal(3), positive(), random=True)
case("StatelessRandomNormal", "mean-stddev", lambda m, s: al.random.stateless_normal([2, 3], [1, 2], m, s,
                                                                                    dtype=al.float64),
     normal(3), positive())
case("StatelessRandomUniform", "bounds", lambda lo, hi: al.random.stateless_uniform([2, 3], [3, 4], lo, hi,
                                                                                   dtype=al.float64),
     lambda rng: rng.uniform(-2, -1, (2, 1)), positive())
RESEED = _reseed

# -- py_function: differentiable through the autoloop ops its Python function runs --------------------------
case("PyFunction", "sin-times-x", lambda x: al.py_function(lambda t: al.sin(t) * t, [x], al.float64), normal(3))


# -- segments, matrices, TF1's placeholder_with_default ----------------------------------------------------
def _distinct(*shape):
    """Values far apart (a max or min segment has one clear winner), away from zero (prod)."""
    return lambda rng: (rng.permutation(int(np.prod(shape))).reshape(shape) + 1.0) * rng.choice([-1.0, 1.0], shape)


for _reduce in ("sum", "max", "min", "prod"):
    case("SegmentReduce", f"unsorted_{_reduce}",
         lambda d, r=_reduce: getattr(al.math, f"unsorted_segment_{r}")(d, [1, -1, 1, 0, 1], 2), _distinct(5, 2))
    case("SegmentReduce", f"sorted_{_reduce}", lambda d, r=_reduce: getattr(al.math, f"segment_{r}")(d, [0, 0, 2]),
         _distinct(3))
case("SegmentReduce", "prod-with-a-zero", lambda d: al.math.segment_prod(d * [1.0, 0.0, 1.0, 1.0], [0, 0, 1, 1]),
     normal(4))
case("SegmentReduce", "mean", lambda d: al.math.unsorted_segment_mean(d, [0, 2, 0], 3), normal(3, 2))


def _well_conditioned(size):
    return lambda rng: rng.standard_normal((size, size)) * 0.3 + np.eye(size) * 2


def _positive_definite(size):
    def make(rng):
        root = rng.standard_normal((size, size))
        return root @ root.T + np.eye(size) * size
    return make


case("MatrixInverse", "square", al.linalg.inv, _well_conditioned(3))
case("MatrixSolve", "rhs", al.linalg.solve, _well_conditioned(3), normal(3, 2))
case("Cholesky", "spd", lambda a: al.linalg.cholesky((a + al.transpose(a)) * 0.5), _positive_definite(3))
case("PlaceholderWithDefault", "identity",
     lambda x: __import__("autoloop.compat.v1", fromlist=["v1"]).placeholder_with_default(x, [None]) * 2, normal(3))


# -- TensorArrays (and, second order, the gradient lists they make) ---------------------------------------
def _array(x):
    return al.TensorArray(al.float64, size=x.shape[0]).unstack(x)


case("TensorListUnstack", "stack", lambda x: _array(x).stack() * 2.0, normal(3, 2))
case("TensorListRead", "reads", lambda x: _array(x).read(2) * _array(x).read(0), normal(3, 2))
case("TensorListWrite", "overwrite", lambda x, y: al.TensorArray(al.float64, size=2).write(0, x).write(1, y)
     .write(0, y * y).stack(), normal(2), normal(2))
case("TensorListGather", "repeated", lambda x: _array(x).gather([2, 0, 2]), normal(3, 2))
case("TensorListScatter", "scatter", lambda x, y: _array(x).scatter([2, 0], y).stack(), normal(3, 2), normal(2, 2))
case("TensorListSplit", "concat", lambda x: al.TensorArray(al.float64, size=2).split(x, [1, 3]).concat() * x,
     normal(4, 2))
case("TensorListStack", "write-stack", lambda x: al.TensorArray(al.float64, size=0, dynamic_size=True)
     .write(1, x).write(0, al.sin(x)).stack(), normal(3))
case("TensorListConcat", "pieces", lambda x: al.TensorArray(al.float64, size=0, dynamic_size=True, infer_shape=False)
     .write(0, x).write(1, x[:1] * 3.0).concat(), normal(2, 2))


def _first_order(build):
    """The gradient of sum(build(x)**3) with respect to x, as a function of x (for second-order cases)."""
    def gradient(x):
        with al.GradientTape() as tape:
            tape.watch(x)
            y = al.reduce_sum(al.pow(build(x), 3.0))
        return tape.gradient(y, x)
    return gradient


for _name, _build in {
        "read-stack": lambda x: _array(x).read(1) + _array(x).stack()[0],  # GradAccumulate, GradUnstack, GradAdd
        "write-overwrite": lambda x: al.TensorArray(al.float64, size=2).write(0, x[0]).write(0, x[1]).stack(),
        "gather": lambda x: _array(x).gather([0, 0, 2]),  # GradScatterAdd
        "scatter": lambda x: al.TensorArray(al.float64, size=3).scatter([1, 2], x[:2]).stack(),  # GradGather
        "unstack": lambda x: _array(x).stack(),  # GradStack
        "split-concat": lambda x: al.TensorArray(al.float64, size=2).split(x, [2, 1]).concat(),  # GradConcat/Split
}.items():
    case("TensorListGradRead", f"second-order-{_name}", _first_order(_build), normal(3, 2))

def _loop_power(x):
    """x ** 4 by a loop (its gradient saves values on stacks)."""
    return al.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, al.sin(y) * x), (0, x))[1]


case("StackPush", "second-order-loop", _first_order(_loop_power), normal(3))

OPS_IN_SECOND_ORDER = {"StackPush", "StackGet", "TensorListGradAdd", "TensorListGradRead", "TensorListGradAccumulate",
                       "TensorListGradScatterAdd", "TensorListGradErase", "TensorListGradGather",
                       "TensorListGradStack", "TensorListGradUnstack", "TensorListGradSplit",
                       "TensorListGradConcat"}


@al.custom_gradient
def _custom_sin(x):
    """sin with its gradient written by hand (the true one, so differences check it)."""
    return al.sin(x), lambda upstream: upstream * al.cos(x)


case("CustomGradient", "hand-written", lambda x: _custom_sin(x) * x, normal(2, 3))
