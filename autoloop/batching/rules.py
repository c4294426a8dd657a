"""Batching rules of ordinary ops: how each maps over a new leading entry axis.

A rule is ``rule(node, inputs, batched, batching) -> (outputs, batched)``:

- `node` is the op's node in the graph being batched (its attrs, and its
  inputs' unbatched dtypes and shapes: ``node.inputs[k].shape``);
- `inputs` holds one Tensor per input: a *batched* one (``batched[k]``)
  has the entries on a new axis 0 in front of the node's shape, an
  unbatched one is the value every entry shares;
- `batching` is the run's `autoloop.batching.entries.Batching` (its number
  of entries, and ``batching.broadcast(t)`` for a shared value);
- the result is one Tensor per output of the node and whether each is
  batched. Rules call ordinary ops, so they build nodes while tracing.

A rule raises `NoRule` for inputs it cannot batch (a gather whose params
and indices are both per entry); the interpreter then runs the op once per
entry (`autoloop.batching.interpreter`). `rule_for` reads the op's
registration first (`OpDef.batch`), then the families below: element-wise
ops align their operands' trailing axes, ops with axes shift them by one,
reductions over ``axis=None`` reduce every axis but the entries'.

    >>> rule_for("Sum")(sum_node, [x_batched], [True], batching)    # reduce_sum(x, axis=1) -> axis 2
"""

from __future__ import annotations

import numpy as np

from autoloop.batching.entries import batch_size_of, with_rank
from autoloop.ir.graph import op_attrs_of
from autoloop.ir.lazy import resolve
from autoloop.ops import registry
from autoloop.ops.dispatch import apply, convert


class NoRule(Exception):
    """The op has no batching rule for these inputs; the message says why."""


def rule_for(op_name: str):
    """The batching rule of ordinary op `op_name`, or None."""
    declared = registry.get(op_name).batch
    return resolve(declared) if declared is not None else RULES.get(op_name)


def public_attrs(node) -> dict:
    """`node`'s attrs as its op reads them (`autoloop.ir.graph.op_attrs_of`)."""
    return op_attrs_of(node.attrs)


def unbatched_rank(value) -> int:
    if value.shape.rank is None:
        raise NoRule(f"the rank of {value.name} is not known while tracing")
    return value.shape.rank


def _shift(axis, rank: int):
    """An axis of the unbatched value as an axis of the batched one."""
    return axis + 1 if axis >= 0 else axis


def _shift_axes(axes, rank: int):
    if axes is None:
        return tuple(range(1, rank + 1))
    if isinstance(axes, int):
        return _shift(axes, rank)
    return tuple(_shift(axis, rank) for axis in axes)


def _only_first(batched, what: str) -> None:
    if any(batched[1:]):
        raise NoRule(f"an operand other than the first ({what}) differs per entry")


# -- the families -----------------------------------------------------------------------------
def elementwise(node, inputs, batched, batching):
    """Element-wise ops: batched operands get 1-sized axes so that every operand aligns on the right."""
    rank = max(unbatched_rank(v) for v in node.inputs)
    aligned = [with_rank(t, unbatched_rank(v), rank) if b else t for t, v, b in zip(inputs, node.inputs, batched)]
    return outputs(apply(node.op, aligned, public_attrs(node))), [True] * len(node.outputs)


def outputs(result) -> list:
    return list(result) if isinstance(result, tuple) else [result]


def axes_attr(name: str, none_means_all: bool = True):
    """Ops along the axes of attr `name` (an int, a tuple, or None for every axis): the axes shift by one."""
    def rule(node, inputs, batched, batching):
        _only_first(batched, name)
        rank = unbatched_rank(node.inputs[0])
        attrs = public_attrs(node)
        if attrs.get(name) is None and not none_means_all:
            raise NoRule(f"{name}=None")
        attrs[name] = _shift_axes(attrs.get(name), rank)
        return outputs(apply(node.op, inputs, attrs)), [True] * len(node.outputs)
    return rule


def _squeeze(node, inputs, batched, batching):
    axis = node.attrs["axis"]
    if axis is None:  # the 1-sized axes of one entry, which must be known
        shape = node.inputs[0].shape
        if shape.rank is None or any(dim is None for dim in shape.dims):
            raise NoRule("squeeze(axis=None) of a value whose shape is not fully known")
        axis = tuple(k for k, dim in enumerate(shape.dims) if dim == 1)
    attrs = dict(public_attrs(node), axis=_shift_axes(axis, unbatched_rank(node.inputs[0])))
    return [apply("Squeeze", inputs, attrs)], [True]


def _expand_dims(node, inputs, batched, batching):
    axis = node.attrs["axis"]
    return [apply("ExpandDims", inputs, dict(public_attrs(node), axis=_shift(axis, 0)))], [True]


def _transpose(node, inputs, batched, batching):
    rank = unbatched_rank(node.inputs[0])
    perm = node.attrs["perm"]
    perm = tuple(reversed(range(rank))) if perm is None else tuple(perm)
    return [apply("Transpose", inputs, dict(public_attrs(node), perm=(0,) + tuple(p + 1 for p in perm)))], [True]


def _matmul(node, inputs, batched, batching):
    ranks = [unbatched_rank(v) for v in node.inputs]
    if min(ranks) < 2:
        raise NoRule("a product with a vector operand")
    return elementwise(node, inputs, batched, batching)


def _reshape(node, inputs, batched, batching):
    from autoloop.ops.api import cast, concat, reshape
    _only_first(batched, "the shape")
    target = node.attrs.get("shape")
    if target is not None and -1 not in target:  # rows stay rows: [-1, ...] (a form scan's compaction follows)
        return [apply("Reshape", inputs[:1], {"shape": (-1,) + tuple(target)})], [True]
    target = convert(np.array(target, np.int32)) if target is not None else inputs[1]
    entries = reshape(cast(convert(batch_size_of(inputs[0])), target.dtype), [1])
    return [reshape(inputs[0], concat([entries, target], 0))], [True]


def _strided_slice(node, inputs, batched, batching):
    _only_first(batched, "an index")
    spec = (("slice", None, None, None),) + tuple(node.attrs["spec"])
    return [apply("StridedSlice", inputs, dict(public_attrs(node), spec=spec))], [True]


def _gather(node, inputs, batched, batching):
    axis = node.attrs["axis"]
    if batched == [True, False]:
        return [apply("GatherV2", inputs, dict(public_attrs(node), axis=_shift(axis, 0)))], [True]
    if batched == [False, True] and axis == 0:  # a lookup per entry: the entries lead the indices and the result
        return [apply("GatherV2", inputs, public_attrs(node))], [True]
    raise NoRule("a gather whose indices differ per entry along an axis other than 0, or whose params and "
                 "indices both differ per entry")


def _joined(node, inputs, batched, batching):
    """Pack / ConcatV2: every operand batched (shared ones broadcast), the axis shifted."""
    inputs = [t if b else batching.broadcast(t) for t, b in zip(inputs, batched)]
    attrs = dict(public_attrs(node), axis=_shift(node.attrs["axis"], 0))
    return [apply(node.op, inputs, attrs)], [True]


def _tile(node, inputs, batched, batching):
    _only_first(batched, "the multiples")
    if node.attrs.get("multiples") is None:
        raise NoRule("multiples given as a tensor")
    return [apply("Tile", inputs, dict(public_attrs(node), multiples=(1,) + tuple(node.attrs["multiples"])))], [True]


def _one_hot(node, inputs, batched, batching):
    _only_first(batched, "on/off values")
    return [apply("OneHot", inputs, dict(public_attrs(node), axis=_shift(node.attrs["axis"], 0)))], [True]


def _shape(node, inputs, batched, batching):
    """One entry's shape: the same for every entry (what a per-entry loop sees)."""
    return [apply("Shape", inputs, public_attrs(node))[1:]], [False]


def _size(node, inputs, batched, batching):
    from autoloop.ops.api import cast, reduce_prod
    shape = apply("Shape", inputs, {"out_type": node.attrs["out_type"]})[1:]
    return [cast(reduce_prod(shape), node.attrs["out_type"])], [False]


def _rank(node, inputs, batched, batching):
    return [convert(unbatched_rank(node.inputs[0]))], [False]


# -- shapes given as an operand: the entries lead the new shape ------------------------------------------
def _with_entries(shape, batched_value):
    """The vector ``[entries] + shape`` (`shape` an int tuple, or an integer vector whose dtype it keeps)."""
    from autoloop.ops.api import concat
    if isinstance(shape, tuple):
        entries = batch_size_of(batched_value)
        if isinstance(entries, int):
            return convert(np.array((entries,) + shape, np.int32))
        shape = convert(np.array(shape, np.int32))
    return concat([_entries_vector(batched_value, shape.dtype), shape], 0)


def _entries_vector(batched_value, dtype):
    """``[entries]`` of `batched_value`, an integer vector of `dtype`."""
    from autoloop.ops.api import cast, reshape
    return reshape(cast(convert(batch_size_of(batched_value)), dtype), [1])


def _target_length(node) -> int:
    """How many axes the shape a BroadcastTo or SumToShape gives has (known while tracing)."""
    if node.attrs.get("shape") is not None:
        return len(node.attrs["shape"])
    return unbatched_rank(node.outputs[0])


def _broadcast_to(node, inputs, batched, batching):
    """Each entry broadcast to the shape: its axes aligned on the right first, the entries kept in front."""
    _only_first(batched, "the shape")
    x = with_rank(inputs[0], unbatched_rank(node.inputs[0]), _target_length(node))
    shape = tuple(node.attrs["shape"]) if node.attrs.get("shape") is not None else inputs[1]
    return [apply("BroadcastTo", [x, _with_entries(shape, inputs[0])])], [True]


def _sum_to_shape(node, inputs, batched, batching):
    """Each entry summed to the shape: the leading axes broadcasting added are summed first, so that the
    entries stay on axis 0 (a right-aligned sum to ``[entries] + shape`` would reach into them)."""
    from autoloop.ops.api import reduce_sum
    _only_first(batched, "the shape")
    extra = unbatched_rank(node.inputs[0]) - _target_length(node)
    x = reduce_sum(inputs[0], axis=list(range(1, 1 + extra))) if extra > 0 else inputs[0]
    return [apply("SumToShape", [x, _with_entries(inputs[1], inputs[0])])], [True]


def _ensure_shape(node, inputs, batched, batching):
    from autoloop.shapes import TensorShape
    shape = TensorShape([None]).concatenate(node.attrs["shape"])
    return [apply("EnsureShape", inputs, dict(public_attrs(node), shape=shape))], [True]


def _strided_slice_grad(node, inputs, batched, batching):
    """A slice's gradient: written into zeros of ``[entries] + shape``, every entry whole on axis 0."""
    _only_first(batched, "the shape or an index")
    spec = (("slice", None, None, None),) + tuple(node.attrs["spec"])
    shape = _with_entries(inputs[1], inputs[0])
    return [apply("StridedSliceGrad", [inputs[0], shape, *inputs[2:]], dict(public_attrs(node), spec=spec))], [True]


def _padded(node, inputs, batched, batching):
    """Pad / PadGrad: nothing added along the entries' axis."""
    _only_first(batched, "the padding value")
    paddings = ((0, 0),) + tuple(tuple(pair) for pair in node.attrs["paddings"])
    return [apply(node.op, inputs, dict(public_attrs(node), paddings=paddings))], [True]


def _einsum(node, inputs, batched, batching):
    """A fresh label for the entries, in front of each batched operand's term and of the result's."""
    import string
    from autoloop.ops.linalg_ops import parse_equation
    terms, output = parse_equation(node.attrs["equation"], len(inputs))
    used = {label for term in terms + [output] for label in term}
    entry = next(label for label in string.ascii_letters if label not in used)
    written = [[entry] + term if flag else term for term, flag in zip(terms, batched)]
    equation = ",".join("".join(term) for term in written) + "->" + entry + "".join(output)
    return [apply("Einsum", inputs, dict(public_attrs(node), equation=equation))], [True]


def _gather_nd(node, inputs, batched, batching):
    """Per-entry params read at shared indices: the entries' axis moved behind the indexed axes (each
    coordinate then reads a slice holding every entry), gathered, and moved back in front."""
    from autoloop.ops.api import transpose
    if batched != [True, False]:
        raise NoRule("the indices differ per entry")
    depth = _index_depth(node.inputs[1])
    rank = unbatched_rank(node.inputs[0])
    moved = transpose(inputs[0], list(range(1, depth + 1)) + [0] + list(range(depth + 1, rank + 1)))
    gathered = apply("GatherNd", [moved, inputs[1]])
    lead = unbatched_rank(node.inputs[1]) - 1
    total = unbatched_rank(node.outputs[0])
    return [transpose(gathered, [lead] + list(range(lead)) + list(range(lead + 1, total + 1)))], [True]


def _index_depth(indices) -> int:
    """How many leading axes each coordinate of `indices` names (its last axis, known while tracing)."""
    depth = indices.shape[-1] if indices.shape.rank else None
    if depth is None:
        raise NoRule("the depth of the indices is not known while tracing")
    return depth


def _scatter_nd(node, inputs, batched, batching):
    """Per-entry updates scattered at shared indices: the entries' axis moved behind the indexed axes (it
    is then one more axis the updates carry), scattered, and moved back in front."""
    from autoloop.ops.api import concat, transpose
    if batched != [False, True, False]:
        raise NoRule("indices or the shape differ per entry")
    depth = _index_depth(node.inputs[0])
    lead, rank = unbatched_rank(node.inputs[0]) - 1, unbatched_rank(node.inputs[1])
    moved = transpose(inputs[1], list(range(1, lead + 1)) + [0] + list(range(lead + 1, rank + 1)))
    dims = concat([inputs[2][:depth], _entries_vector(inputs[1], inputs[2].dtype), inputs[2][depth:]], 0)
    scattered = apply("ScatterNd", [inputs[0], moved, dims])
    total = unbatched_rank(node.outputs[0])
    return [transpose(scattered, [depth] + list(range(depth)) + list(range(depth + 1, total + 1)))], [True]


_ELEMENTWISE = (
    "Add", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Maximum", "Minimum", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor", "LogicalAnd", "LogicalOr", "Less", "LessEqual", "Greater", "GreaterEqual",
    "Equal", "NotEqual", "Neg", "Abs", "Square", "LogicalNot", "Invert", "Sqrt", "Exp", "Log", "Sin", "Cos",
    "Tan", "Tanh", "Sigmoid", "Identity", "Cast", "Ceil", "Floor", "IsFinite", "IsNan", "IsInf", "Log1p", "Expm1",
    "Relu", "Round", "Rsqrt", "Sign", "StopGradient", "SelectV2", "ClipByValue", "ZerosLike", "OnesLike", "AddN",
    "Atan2", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Reciprocal", "Softplus", "Elu", "Selu", "LeakyRelu",
    "SquaredDifference", "Erf", "MatrixInverse", "Cholesky",  # the matrix ops map over leading axes
)

RULES = {name: elementwise for name in _ELEMENTWISE}
RULES.update({name: axes_attr("axis") for name in ("Sum", "Prod", "Mean", "Max", "Min", "Any", "All")})
RULES.update({name: axes_attr("axis", none_means_all=False) for name in (
    "ArgMax", "ArgMin", "Softmax", "LogSoftmax", "Cumsum", "Cumprod", "ReverseV2", "Unpack", "Roll")})
RULES.update({
    "Squeeze": _squeeze,
    "ExpandDims": _expand_dims,
    "Transpose": _transpose,
    "MatMul": _matmul,
    "Reshape": _reshape,
    "StridedSlice": _strided_slice,
    "GatherV2": _gather,
    "Pack": _joined,
    "ConcatV2": _joined,
    "Tile": _tile,
    "OneHot": _one_hot,
    "Shape": _shape,
    "Size": _size,
    "Rank": _rank,
    "BroadcastTo": _broadcast_to,
    "SumToShape": _sum_to_shape,
    "EnsureShape": _ensure_shape,
    "StridedSliceGrad": _strided_slice_grad,
    "Einsum": _einsum,
    "ScatterNd": _scatter_nd,
    "GatherNd": _gather_nd,
    "Pad": _padded,
    "PadGrad": _padded,
})
