"""Which batched scans may run their body on the active entries only (compaction).

Compaction gathers the rows of the state (axis 0) whose entries are still
active, runs cond and body on those rows, and scatters the results back.
That equals running on every row only when row ``b`` of each result depends
on row ``b`` of the state alone. This analysis proves it for a Scan node,
or names the first node where it cannot:

- every value of the cond and body graphs is *per entry* (its axis 0 is the
  entry axis: the state parameters, and what ops compute from them row by
  row) or *shared* (it does not depend on the state: captures, constants);
- a node with no per-entry input computes shared values;
- a node with a per-entry input needs a rule in `RULES` (by op name, a table
  lookup) saying that its outputs are per entry: element-wise ops whose
  other operands broadcast over the trailing axes, reductions and
  normalisations over axes other than 0, ``x @ W``, slices that keep axis 0,
  embedding lookups ``gather(table, ids)``, ...;
- the body's results and the cond's test must be per entry;
- ``shape(h)`` of a per-entry ``h`` counts the entries on axis 0: it may
  only size a value row by row (``SumToShape``, ``reshape(g, shape(h))``,
  ``broadcast_to(c, shape(h))``, ``fill``, a slice's gradient: what
  gradients write), never
  be read as numbers (``shape(h)[0]``).

Anything else (an op without a rule, ``shape(h)[0]``, a reduction over
axis 0, a print of the state, a captured tensor of the batch size) is a
*problem*: ``scan(compaction="auto")`` then masks instead, and
``compaction=True`` raises it. Per-entry inputs belong in the state, where
they are gathered with the rest.

    >>> entrywise_problem(scan_node) is None     # h = tanh(h @ W): rows are independent
    True
"""

from __future__ import annotations

from autoloop.ir import control_flow
from autoloop.ops.location import format_location

SHARED, ENTRY = "shared", "per entry"
ROWS = "the shape of a per-entry value"  # counts the entries on axis 0: only sizes values row by row


class Problem(Exception):
    """Why a node's outputs are not per entry."""


def entrywise_problem(node, per_entry=frozenset(), candidates=frozenset(), adopted=None) -> str | None:
    """None when the Scan `node`'s cond and body treat entries independently, else why not.

    The captured outer values in `per_entry` count as per entry too. A
    captured value in `candidates` that an element-wise op combines with a
    per-entry value of its own rank (its axis 0 meets the entries') is added
    to the set `adopted` and counted per entry from there on
    (`autoloop.control_flow.scan_captures` then checks it from the start).
    """
    groups = control_flow.operands(node)
    leading = len(groups.xs) + len(groups.initial)
    for key in ("cond", "body"):
        sub = node.attrs[key]
        kinds = {id(v): (ENTRY if position < leading else SHARED) for position, v in enumerate(sub.inputs)}
        kinds.update((id(p), ENTRY) for outer, p in sub.captures.items() if outer in per_entry)
        adoptable = {id(p): outer for outer, p in sub.captures.items() if outer in candidates}
        problem = _walk(sub, kinds, adoptable, adopted)
        if problem is not None:
            return problem
        for value in sub.outputs:
            if kinds[id(value)] is not ENTRY:
                return f"the {key}'s result {value.name} does not come from the state row by row"
    return None


def _walk(graph, kinds: dict, adoptable=None, adopted=None) -> str | None:
    for node in graph.nodes:
        if node.op == "Placeholder":
            continue
        if adoptable and RULES.get(node.op) is _elementwise:
            _adopt(node, kinds, adoptable, adopted)
        inputs = [kinds[id(v)] for v in node.inputs]
        if ENTRY not in inputs and ROWS not in inputs:
            kinds.update((id(v), SHARED) for v in node.outputs)
            continue
        rule = RULES.get(node.op)
        try:
            if rule is None:
                raise Problem(f"{node.op} is not known to treat entries independently")
            if ROWS in inputs and node.op not in SIZED_BY_ROWS:
                raise Problem("it reads the Shape of a per-entry value, whose axis 0 counts the entries")
            outputs = rule(node, inputs)
        except Problem as problem:
            return (f"{node.op} (node {node.name}, {format_location(node.location)}) mixes entries: {problem}. "
                    f"Keep per-entry values in the state")
        kinds.update((id(v), kind) for v, kind in zip(node.outputs, outputs))
    return None


def _adopt(node, kinds, adoptable, adopted) -> None:
    """Count as per entry the candidate captures this element-wise node lines up with per-entry operands."""
    if not any(kinds[id(v)] is ENTRY for v in node.inputs) or node.outputs[0].shape.rank is None:
        return
    rank = node.outputs[0].shape.rank
    for value in node.inputs:
        if (id(value) in adoptable and kinds[id(value)] is SHARED and value.shape.rank == rank
                and value.shape[0] != 1):
            kinds[id(value)] = ENTRY
            adopted.add(adoptable[id(value)])


# -- rules: (node, input kinds) -> output kinds, or raise Problem ---------------------------------
def _rank(value) -> int:
    if value.shape.rank is None:
        raise Problem(f"the rank of {value.name} is unknown")
    return value.shape.rank


def _elementwise(node, kinds):
    """Per entry when each per-entry operand has the result's rank and the others broadcast below axis 0."""
    rank = _rank(node.outputs[0])
    for value, kind in zip(node.inputs, kinds):
        if kind is ENTRY and _rank(value) != rank:
            raise Problem(f"{value.name} ({value.shape}) broadcasts its entry axis against axis "
                          f"{rank - _rank(value)} of the result")
        if kind is SHARED and _rank(value) == rank and value.shape[0] != 1:
            raise Problem(f"the shared {value.name} ({value.shape}) has an axis 0 of its own; pass it in the state")
    return [ENTRY] * len(node.outputs)


def _only_first_per_entry(node, kinds):
    if any(kind is ENTRY for kind in kinds[1:]):
        raise Problem("an operand other than the first depends on the state")


def _axes_attr(name: str = "axis"):
    """Per entry when the op's axes (attr `name`, an int, a tuple, None for all) leave axis 0 alone."""
    def rule(node, kinds):
        _only_first_per_entry(node, kinds)
        rank = _rank(node.inputs[0])
        axes = node.attrs[name]
        if axes is None:
            raise Problem("it works across every axis, the entry axis included")
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        if any(axis % max(rank, 1) == 0 for axis in axes):
            raise Problem(f"it works along axis 0 (axis={node.attrs[name]!r}), the entry axis")
        return [ENTRY] * len(node.outputs)
    return rule


def _all_per_entry_along(node, kinds):
    """Concat / stack of per-entry values of one rank along an axis other than 0."""
    if any(kind is not ENTRY for kind in kinds):
        raise Problem("it joins per-entry values with shared ones")
    rank = _rank(node.outputs[0])
    if node.attrs["axis"] % rank == 0:
        raise Problem("it joins along axis 0, the entry axis")
    return [ENTRY] * len(node.outputs)


def _matmul(node, kinds):
    a, b = node.inputs
    a_rank, b_rank = _rank(a), _rank(b)
    if kinds == [ENTRY, SHARED] and a_rank >= 2 and b_rank <= 2:
        return [ENTRY]
    if kinds == [SHARED, ENTRY] and a_rank == 2 and b_rank >= 3:
        return [ENTRY]
    if kinds == [ENTRY, ENTRY] and a_rank == b_rank >= 3:
        return [ENTRY]
    raise Problem(f"a product of {a.shape} ({kinds[0]}) and {b.shape} ({kinds[1]}) contracts or "
                  f"broadcasts the entry axis")


def _transpose(node, kinds):
    perm = node.attrs["perm"]
    if perm is None:  # reversed axes
        perm = tuple(reversed(range(_rank(node.inputs[0]))))
    if perm[0] != 0:
        raise Problem(f"perm {list(perm)} moves the entry axis")
    return [ENTRY]


def _expand_dims(node, kinds):
    if node.attrs["axis"] % (_rank(node.inputs[0]) + 1) == 0:
        raise Problem("it inserts an axis in front of the entry axis")
    return [ENTRY]


def _slice(node, kinds):
    _only_first_per_entry(node, kinds)
    _keeps_axis_0(node.attrs["spec"], _rank(node.inputs[0]))
    return [ENTRY]


def _slice_gradient(node, kinds):
    """``StridedSliceGrad(g, shape(x), ...)``: a slice of per-entry rows written back into zeros of x's shape."""
    if kinds[:2] != [ENTRY, ROWS] or ENTRY in kinds[2:] or ROWS in kinds[2:]:
        raise Problem("the slice it writes back is not one of per-entry rows")
    _keeps_axis_0(node.attrs["spec"], _rank(node.outputs[0]))
    return [ENTRY]


def _keeps_axis_0(spec, rank: int) -> None:
    """Nothing, when the slice `spec` of a value of `rank` keeps axis 0 whole; else a Problem."""
    first = spec[0] if spec else ("ellipsis",)
    if first == ("slice", None, None, None):
        return
    if first == ("ellipsis",) and sum(1 for item in spec[1:] if item[0] in ("index", "slice")) < rank:
        return
    raise Problem("the slice does not keep axis 0 whole")


def _gather(node, kinds):
    axis = node.attrs["axis"]
    if kinds == [ENTRY, SHARED] and axis != 0:
        return [ENTRY]
    if kinds == [SHARED, ENTRY] and axis == 0:
        return [ENTRY]  # an embedding lookup: row b of the ids picks row b of the result
    raise Problem("it gathers along the entry axis")


def _one_hot(node, kinds):
    _only_first_per_entry(node, kinds)
    if node.attrs["axis"] == 0:
        raise Problem("it puts the classes on axis 0")
    return [ENTRY]


def _leading_attr_is(name: str, neutral):
    """Per entry when attr `name`'s entry for axis 0 is `neutral` (tile multiples 1, padding (0, 0))."""
    def rule(node, kinds):
        _only_first_per_entry(node, kinds)
        value = node.attrs.get(name)
        if value is None or _first(value) != neutral:
            raise Problem(f"its {name} change axis 0")
        return [ENTRY]
    return rule


def _first(value):
    first = value[0]
    return tuple(first) if isinstance(first, list | tuple) else first


def _reshape(node, kinds):
    """Per entry for ``reshape(x, [-1, ...])`` that keeps the size of each row, or ``reshape(g, shape(h))`` of
    per-entry values (as many rows, so each row keeps its size)."""
    if kinds == [ENTRY, ROWS]:
        return [ENTRY]
    shape = node.attrs.get("shape")
    rows = node.inputs[0].shape[1:]
    if len(node.inputs) != 1 or shape is None or not shape or shape[0] != -1 or not rows.is_fully_defined():
        raise Problem("it may move elements across rows")
    rest = list(shape[1:])
    if -1 in rest or _product(rest) != _product(rows.as_list()):
        raise Problem(f"the rows of {node.inputs[0].shape} do not become rows of {list(shape)}")
    return [ENTRY]


def _product(dims) -> int:
    total = 1
    for dim in dims:
        total *= dim
    return total


def _shape(node, kinds):
    return [ROWS]


def _sized_by_rows(node, kinds):
    """``SumToShape(g, shape(h))``, ``BroadcastTo(c, shape(h))``, ``Fill(shape(h), c)``: row b of the result
    comes from row b of a per-entry operand of the result's rank, or from shared values broadcast below axis 0."""
    rank = _rank(node.outputs[0])
    for value, kind in zip(node.inputs, kinds):
        if kind is ENTRY and _rank(value) != rank:
            raise Problem(f"{value.name} ({value.shape}) is summed or broadcast across the entry axis")
        if kind is SHARED and _rank(value) == rank and value.shape[0] != 1:
            raise Problem(f"the shared {value.name} ({value.shape}) has an axis 0 of its own")
    if ROWS not in kinds:
        raise Problem("its target shape is not that of a per-entry value")
    return [ENTRY]


def _passes_value(node, kinds):
    """``CheckDefined(defined, value)``: the value, per entry when the flag is shared."""
    if kinds[0] is ENTRY:
        raise Problem("whether the value is defined depends on the state")
    return [ENTRY]


def _rank_only(node, kinds):
    return [SHARED]


def _ensure_shape(node, kinds):
    shape = node.attrs["shape"]
    if shape.rank is not None and shape.rank and shape[0] is not None:
        raise Problem(f"it requires {shape[0]} rows")
    return [ENTRY]


_ELEMENTWISE = (
    "Add", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Maximum", "Minimum", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor", "LogicalAnd", "LogicalOr", "Less", "LessEqual", "Greater", "GreaterEqual",
    "Equal", "NotEqual", "Neg", "Abs", "Square", "LogicalNot", "Invert", "Sqrt", "Exp", "Log", "Sin", "Cos",
    "Tanh", "Sigmoid", "Identity", "Cast", "Ceil", "Floor", "IsFinite", "Log1p", "Relu", "Round", "Rsqrt",
    "Sign", "StopGradient", "SelectV2", "ClipByValue", "ZerosLike", "OnesLike", "AddN",
)

RULES = {name: _elementwise for name in _ELEMENTWISE}
RULES.update({name: _axes_attr("axis") for name in (
    "Sum", "Prod", "Mean", "Max", "Min", "Any", "All", "ArgMax", "ArgMin", "Softmax", "LogSoftmax", "Cumsum",
    "Cumprod", "Sort", "ArgSort", "ReverseV2", "Roll", "Squeeze", "Unpack", "SplitV")})
RULES.update({
    "MatMul": _matmul,
    "Transpose": _transpose,
    "ExpandDims": _expand_dims,
    "StridedSlice": _slice,
    "ConcatV2": _all_per_entry_along,
    "Pack": _all_per_entry_along,
    "GatherV2": _gather,
    "OneHot": _one_hot,
    "Tile": _leading_attr_is("multiples", 1),
    "Pad": _leading_attr_is("paddings", (0, 0)),
    "Reshape": _reshape,
    "CheckDefined": _passes_value,
    "Rank": _rank_only,
    "EnsureShape": _ensure_shape,
    "Shape": _shape,
    "SumToShape": _sized_by_rows,
    "BroadcastTo": _sized_by_rows,
    "Fill": _sized_by_rows,
    "StridedSliceGrad": _slice_gradient,
})
SIZED_BY_ROWS = ("SumToShape", "BroadcastTo", "Fill", "Reshape", "StridedSliceGrad")  # the ops that may take a ROWS operand
