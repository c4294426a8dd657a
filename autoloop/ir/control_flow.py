"""Control-flow ops, each declared once: ``While``, ``Cond`` and ``Scan``.

A control-flow node holds sub-graphs in its attrs and takes everything they
read as explicit inputs. Its `ControlFlowOp` says, in one place:

- ``subgraphs``: the attr names of its sub-graphs;
- ``operands``: how its inputs are laid out, as consecutive named groups
  whose sizes are attrs of the node (JAX's ``cond_nconsts``/``body_nconsts``).
  A group with ``captures_of`` holds the outer values that sub-graph
  captured, in the order of its `Graph.captures`; their placeholders are the
  sub-graph's *last* inputs. `operands(node)` is the one accessor every
  consumer uses (code generation, the verifier, the interpreter, pruning,
  rewrites, lowering and gradients);
- ``infer``: the ``(dtype, shape)`` of each output, from the node;
- ``verify``: the op's own invariants, as problems found (the verifier
  checks the layout and the captures of every op the same way);
- ``interpret``: the reference interpreter's rule,
  ``rule(node, input_values, run_graph) -> output values``;
- ``kernels``: per backend, how it runs there: ``"numpy"`` is the code
  generator's writer ``write(gen, node, indent)``; ``"jax"`` the JAX
  lowering's rule ``rule(lowering, node, input_values) -> output values``
  (`autoloop.backends.jax`);
- ``lower``: the rule giving its dataflow form
  (``While`` -> Enter/Merge/Switch/NextIteration/Exit, ``Cond`` -> Switch/Merge;
  `autoloop.execute.dataflow.lower`), ``rule(lowering, node, context, env,
  control) -> completion nodes``; an op without one cannot run in a Session.
- ``gradient``: reverse mode. A ``gradient`` rule has an ordinary op's
  signature (`autoloop.ops.registry`); the ones of ``While`` and ``Cond``
  live in `autoloop.autodiff`.
- ``jvp``: forward mode, with an ordinary op's ``jvp`` signature (the
  tangents carried as extra loop variables or branch outputs).

Rules that live in a higher layer are named ``"module:function"`` and
imported on first use (`autoloop.ir.lazy`), so the arrows between layers
point down. Adding a control-flow op is one `register` call here plus the
function that builds its node while tracing (``autoloop.control_flow``).

    >>> groups = operands(while_node)
    >>> groups.loop_vars, groups.body_captures, groups.maximum_iterations
    ((<Value ...>, <Value ...>), (<Value ...>,), ())
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from autoloop.dtypes import bool_, int32, int64, variant
from autoloop.ir.lazy import resolve
from autoloop.shapes import TensorShape


@dataclass(frozen=True)
class OperandGroup:
    """`size` consecutive inputs named `name`; `size` is an attr name or a fixed number.

    `captures_of` names the sub-graph whose captured outer values the group
    holds. An `optional` group has 0 or 1 inputs, its size attr a bool.
    """

    name: str
    size: str | int
    captures_of: str | None = None
    optional: bool = False

    def size_of(self, attrs) -> int:
        return self.size if isinstance(self.size, int) else int(attrs[self.size])


@dataclass(frozen=True)
class ControlFlowOp:
    """Everything about one control-flow op; see the module docstring."""

    name: str
    subgraphs: tuple[str, ...]
    operands: tuple[OperandGroup, ...]
    infer: Callable
    verify: Callable
    interpret: str | Callable
    kernels: Mapping[str, str | Callable] = field(default_factory=dict)
    lower: str | Callable | None = None
    gradient: str | Callable | None = None
    jvp: str | Callable | None = None

    def kernel_for(self, backend: str):
        """The rule running this op on `backend`, imported if named; KeyError if there is none."""
        try:
            return resolve(self.kernels[backend])
        except KeyError:
            raise KeyError(f"control-flow op {self.name} has no {backend!r} rule") from None

    def interpreter_rule(self):
        return resolve(self.interpret)

    def capture_groups(self) -> list[OperandGroup]:
        return [group for group in self.operands if group.captures_of is not None]


_REGISTRY: dict[str, ControlFlowOp] = {}


def register(op: ControlFlowOp) -> ControlFlowOp:
    if op.name in _REGISTRY:
        raise ValueError(f"control-flow op {op.name!r} is registered twice")
    _REGISTRY[op.name] = op
    return op


def lookup(op_name: str) -> ControlFlowOp | None:
    """The declaration of `op_name`, or None for an ordinary op."""
    return _REGISTRY.get(op_name)


def all_control_flow_ops() -> dict[str, ControlFlowOp]:
    return dict(_REGISTRY)


def subgraph_attrs(op_name: str) -> tuple[str, ...]:
    """The attr names that hold the sub-graphs of an `op_name` node, as registered; () for an ordinary op.

    The one list every walker reads (`autoloop.ir.graph.Node.subgraphs`,
    cloning, the verifier): only these attrs hold graphs.
    """
    op = _REGISTRY.get(op_name)
    return op.subgraphs if op is not None else ()


# -- the operand layout ---------------------------------------------------------------
class Operands(dict):
    """A node's inputs by group name, each a tuple; ``groups.loop_vars`` reads ``groups["loop_vars"]``."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def operands(node) -> Operands:
    """`node`'s inputs split into its op's named groups (the one layout accessor)."""
    return split(node, node.inputs)


def split(node, items) -> Operands:
    """`items` (one per input of `node`: values, names, arrays) split into named groups.

    Raises ValueError when the group sizes recorded in the attrs do not add
    up to the number of items.
    """
    op = _REGISTRY[node.op]
    groups = Operands()
    position = 0
    for group in op.operands:
        size = group.size_of(node.attrs)
        groups[group.name] = tuple(items[position:position + size])
        position += size
    if position != len(items):
        raise ValueError(f"{node.op} node {node.name}: its operand groups take {position} inputs, "
                         f"it has {len(items)}")
    return groups


def group_start(node, group_name: str) -> int:
    """The position among `node`'s inputs where its operand group `group_name` starts."""
    position = 0
    for group in _REGISTRY[node.op].operands:
        if group.name == group_name:
            return position
        position += group.size_of(node.attrs)
    raise KeyError(group_name)


def join(op_name: str, **groups) -> tuple[list, dict]:
    """Inputs and size attrs for a node of `op_name` with the given groups.

        >>> inputs, sizes = join("Cond", pred=[p], true_captures=[x], false_captures=[])
        >>> sizes
        {'true_nconsts': 1, 'false_nconsts': 0}
    """
    op = _REGISTRY[op_name]
    unknown = set(groups) - {group.name for group in op.operands}
    if unknown:
        raise ValueError(f"{op_name} has no operand group {sorted(unknown)}")
    inputs: list = []
    sizes: dict[str, int] = {}
    for group in op.operands:
        items = list(groups.get(group.name, ()))
        if isinstance(group.size, int):
            if len(items) != group.size:
                raise ValueError(f"{op_name}: group {group.name} takes {group.size} inputs, got {len(items)}")
        elif group.optional:
            if len(items) > 1:
                raise ValueError(f"{op_name}: optional group {group.name} takes at most one input")
            sizes[group.size] = bool(items)
        else:
            sizes[group.size] = len(items)
        inputs.extend(items)
    return inputs, sizes


def regroup(node, **changed) -> None:
    """Replace some of `node`'s operand groups (inputs and size attrs together)."""
    groups = dict(operands(node))
    groups.update(changed)
    inputs, sizes = join(node.op, **groups)
    node.inputs = tuple(inputs)
    node.attrs.update(sizes)


def leading_inputs(node, subgraph_attr: str) -> int:
    """How many of a sub-graph's inputs come before its captures."""
    op = _REGISTRY[node.op]
    sub = node.attrs[subgraph_attr]
    group = next((g for g in op.capture_groups() if g.captures_of == subgraph_attr), None)
    captured = group.size_of(node.attrs) if group is not None else 0
    return len(sub.inputs) - captured


def sync_captures(node) -> None:
    """Make `node`'s capture groups list what its sub-graphs captured since it was built.

    A rewrite that builds into a sub-graph may capture new outer values
    (appended to the sub-graph's captures and inputs); this appends them to
    the node's inputs.
    """
    op = _REGISTRY[node.op]
    changed = {group.name: tuple(node.attrs[group.captures_of].captures) for group in op.capture_groups()}
    regroup(node, **changed)


# -- While ------------------------------------------------------------------------------
def _scalar_of(value, dtypes) -> bool:
    return value.dtype in dtypes and value.shape.rank in (0, None)


def _fits(value, dtype, shape) -> bool:
    return value.dtype is dtype and value.shape.is_subtype_of(shape)


def _while_infer(node):
    """The outputs have the loop values' dtypes and their shape invariants (the body's parameters)."""
    count = node.attrs["num_loop_vars"]
    return [(p.dtype, p.shape) for p in node.attrs["body"].inputs[:count]]


def _while_problems(node):
    cond, body = node.attrs["cond"], node.attrs["body"]
    count = node.attrs["num_loop_vars"]
    groups = operands(node)
    for key, sub in (("cond", cond), ("body", body)):
        if leading_inputs(node, key) != count:
            yield (f"sub-graph {sub.name!r} takes {len(sub.inputs)} inputs, expected {count} loop "
                   f"values and {len(sub.captures)} captures")
            return
    for c, b in zip(cond.inputs[:count], body.inputs[:count]):
        if c.dtype is not b.dtype or c.shape != b.shape:
            yield f"cond parameter {c.name} and body parameter {b.name} disagree on the loop value's type"
    if len(cond.outputs) != 1 or not _scalar_of(cond.outputs[0], (bool_,)):
        yield "cond must return one boolean scalar"
    if len(body.outputs) != count:
        yield f"body returns {len(body.outputs)} values, expected {count}"
    for result, param in zip(body.outputs, body.inputs[:count]):
        if not _fits(result, param.dtype, param.shape):
            yield (f"body returns {result.dtype.name}{result.shape} where {param.dtype.name}{param.shape} "
                   f"is expected")
    for initial, param in zip(groups.loop_vars, body.inputs[:count]):
        if not _fits(initial, param.dtype, param.shape):
            yield (f"loop value {initial.name} ({initial.dtype.name}{initial.shape}) does not fit its "
                   f"invariant {param.dtype.name}{param.shape}")
    for limit in groups.maximum_iterations:
        if not _scalar_of(limit, (int32, int64)):
            yield f"maximum_iterations {limit.name} is not an integer scalar"


register(ControlFlowOp(
    "While",
    subgraphs=("cond", "body"),
    operands=(
        OperandGroup("loop_vars", "num_loop_vars"),
        OperandGroup("cond_captures", "cond_nconsts", captures_of="cond"),
        OperandGroup("body_captures", "body_nconsts", captures_of="body"),
        OperandGroup("maximum_iterations", "has_maximum_iterations", optional=True),
    ),
    infer=_while_infer,
    verify=_while_problems,
    interpret="autoloop.execute.interpreter:run_while",
    kernels={"numpy": "autoloop.execute.codegen:write_while", "jax": "autoloop.backends.jax.control_flow:lower_while"},
    lower="autoloop.execute.dataflow.lower:lower_while",  # -> Enter/Merge/Switch/NextIteration/Exit
    gradient="autoloop.autodiff.while_grad:while_gradient",
    jvp="autoloop.autodiff.control_flow_jvp:while_jvp",
))


# -- Cond -------------------------------------------------------------------------------
def _cond_infer(node):
    """Each output has the branches' dtype and the most specific shape compatible with both."""
    true_graph, false_graph = node.attrs["true_graph"], node.attrs["false_graph"]
    return [(t.dtype, t.shape.most_specific_compatible_shape(f.shape))
            for t, f in zip(true_graph.outputs, false_graph.outputs)]


def _cond_problems(node):
    (pred,) = operands(node).pred
    if not _scalar_of(pred, (bool_,)):
        yield f"predicate {pred.name} is not a boolean scalar"
    for key, what in (("true_graph", "true branch"), ("false_graph", "false branch")):
        branch = node.attrs[key]
        if leading_inputs(node, key) != 0:
            yield f"{what} takes inputs other than its captures"
        if len(branch.outputs) != len(node.outputs):
            yield f"{what} returns {len(branch.outputs)} values, expected {len(node.outputs)}"
        for result, value in zip(branch.outputs, node.outputs):
            if not _fits(result, value.dtype, value.shape):
                yield (f"{what} returns {result.dtype.name}{result.shape} where {value.dtype.name}{value.shape} "
                       f"is expected")


register(ControlFlowOp(
    "Cond",
    subgraphs=("true_graph", "false_graph"),
    operands=(
        OperandGroup("pred", 1),
        OperandGroup("true_captures", "true_nconsts", captures_of="true_graph"),
        OperandGroup("false_captures", "false_nconsts", captures_of="false_graph"),
    ),
    infer=_cond_infer,
    verify=_cond_problems,
    interpret="autoloop.execute.interpreter:run_cond",
    kernels={"numpy": "autoloop.execute.codegen:write_cond", "jax": "autoloop.backends.jax.control_flow:lower_cond"},
    lower="autoloop.execute.dataflow.lower:lower_cond",  # -> Switch/Merge pairs
    gradient="autoloop.autodiff.cond_grad:cond_gradient",
    jvp="autoloop.autodiff.control_flow_jvp:cond_jvp",
))


# -- Scan -------------------------------------------------------------------------------
# Its meaning in plain Python is the docstring of autoloop.control_flow.scan. Both sub-graphs
# take the frame of each xs tensor, then the state, then their captures; cond returns no
# value (no cond given) or one boolean of shape cond_dims; body returns the ys frames, then
# the new state. Outputs: the stacked ys (or TensorArray flows), the final state, lengths.
# The meaning is the masked one; compaction (attr "compact") is how the numpy executor may run a
# body proven to treat entries independently, with the same results, so a backend with static
# shapes (XLA) runs every Scan masked, as a lax.while_loop.
SCAN_COMPACTION = ("mask", "compact")  # a batched scan masks finished entries, or drops them (scan_run)


def _scan_frame_count(node):
    """The number of frames when it is known while tracing (no cond, known lengths), else None."""
    from autoloop.ir.graph import known_value  # graph.py imports this module's users
    if node.attrs["has_cond"]:
        return None
    groups = operands(node)
    counts = [x.shape[0] if x.shape.rank else None for x in groups.xs]
    counts += [known_value(v) for v in groups.spatial_dim + groups.max_seq_len]
    if not counts or any(count is None for count in counts):
        return None
    return max(0, min(int(count) for count in counts))


def _scan_infer(node):
    """ys: [frames] + frame shape (or a TensorArray flow); the state keeps its initial type; lengths: cond_dims."""
    body = node.attrs["body"]
    frames = _scan_frame_count(node)
    specs = []
    for y, frame in zip(body.outputs, node.attrs["ys_frames"]):
        if node.attrs["return_tensor_arrays"]:
            specs.append((variant, TensorShape([])))
        else:
            specs.append((y.dtype, TensorShape([frames]).concatenate(frame)))
    specs += [(v.dtype, v.shape) for v in operands(node).initial]
    specs.append((int32, node.attrs["cond_dims"]))
    return specs


def _scan_problems(node):
    cond, body = node.attrs["cond"], node.attrs["body"]
    groups = operands(node)
    num_xs, num_state, num_ys = len(groups.xs), len(groups.initial), node.attrs["num_ys"]
    entries = node.attrs["cond_dims"]
    for key, sub in (("cond", cond), ("body", body)):
        if leading_inputs(node, key) != num_xs + num_state:
            yield (f"sub-graph {sub.name!r} takes {len(sub.inputs)} inputs, expected {num_xs} frames, "
                   f"{num_state} state values and {len(sub.captures)} captures")
            return
    for c, b in zip(cond.inputs[:num_xs + num_state], body.inputs):
        if c.dtype is not b.dtype or c.shape != b.shape:
            yield f"cond parameter {c.name} and body parameter {b.name} disagree"
    for x, param in zip(groups.xs, body.inputs):
        if x.shape.rank == 0 or x.dtype is not param.dtype or not x.shape[1:].is_compatible_with(param.shape):
            yield f"xs value {x.name} ({x.dtype.name}{x.shape}) has no frames of type {param.dtype.name}{param.shape}"
    params = body.inputs[num_xs:num_xs + num_state]
    for initial, param in zip(groups.initial, params):
        if not _fits(initial, param.dtype, param.shape):
            yield f"state value {initial.name} ({initial.dtype.name}{initial.shape}) does not fit {param.dtype.name}{param.shape}"
    expected_cond = 1 if node.attrs["has_cond"] else 0
    if len(cond.outputs) != expected_cond:
        yield f"cond returns {len(cond.outputs)} values, expected {expected_cond}"
    ranks = (entries.rank,) if entries.rank else (0, None)
    for test in cond.outputs:
        if test.dtype is not bool_ or test.shape.rank not in ranks:
            yield f"cond returns {test.dtype.name}{test.shape}, expected booleans of shape {entries}"
    if len(body.outputs) != num_ys + num_state:
        yield f"body returns {len(body.outputs)} values, expected {num_ys} frames and {num_state} state values"
        return
    for y, frame in zip(body.outputs, node.attrs["ys_frames"]):
        if not y.shape.is_compatible_with(frame):
            yield f"body returns a frame of shape {y.shape} where {frame} is expected"
    for result, param in zip(body.outputs[num_ys:], params):
        if not _fits(result, param.dtype, param.shape):
            yield f"body returns {result.dtype.name}{result.shape} where {param.dtype.name}{param.shape} is expected"
    for limit in groups.spatial_dim + groups.max_seq_len:
        if not _scalar_of(limit, (int32, int64)):
            yield f"frame count {limit.name} is not an integer scalar"
    yield from _scan_entry_problems(node, params, entries)


def _scan_entry_problems(node, params, entries):
    """With cond_dims, axis 0 of each state value and frame (and of each xs frame) holds the entries, left unknown
    in the sub-graphs."""
    compaction = node.attrs["compaction"]
    if compaction not in SCAN_COMPACTION:
        yield f"compaction {compaction!r} is not one of {SCAN_COMPACTION}"
    if not entries.rank:
        if compaction != "mask":
            yield "compaction needs cond_dims"
        return
    body = node.attrs["body"]
    for value in params:
        if value.shape.rank is None or value.shape.rank < entries.rank or value.shape[0] is not None:
            yield f"state parameter {value.name} ({value.shape}) must hold the entries on axis 0, left unknown"
    for value in body.outputs[:node.attrs["num_ys"]]:
        if value.shape.rank is None or value.shape.rank < entries.rank:
            yield f"frame {value.name} ({value.shape}) must hold the entries {entries} on its leading axes"
    if compaction != "mask":
        problem = resolve("autoloop.control_flow.scan_entries:entrywise_problem")(node)
        if problem is not None:
            yield f"compaction {compaction!r}, but {problem}"


register(ControlFlowOp(
    "Scan",
    subgraphs=("cond", "body"),
    operands=(
        OperandGroup("initial", "num_state"),
        OperandGroup("xs", "num_xs"),
        OperandGroup("cond_captures", "cond_nconsts", captures_of="cond"),
        OperandGroup("body_captures", "body_nconsts", captures_of="body"),
        OperandGroup("spatial_dim", "has_spatial_dim", optional=True),
        OperandGroup("max_seq_len", "has_max_seq_len", optional=True),
    ),
    infer=_scan_infer,
    verify=_scan_problems,
    interpret="autoloop.execute.scan:interpret_scan",
    kernels={"numpy": "autoloop.execute.scan:write_scan", "jax": "autoloop.backends.jax.scan:lower_scan"},
    lower="autoloop.execute.dataflow.lower:lower_as_one_node",  # one node, run by its interpreter rule
    gradient="autoloop.autodiff.scan_grad:scan_gradient",
    jvp="autoloop.autodiff.control_flow_jvp:scan_jvp",
))
