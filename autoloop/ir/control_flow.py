"""Control-flow ops, each declared once: ``While``, ``Cond`` (and later ``Scan``).

A control-flow node holds sub-graphs in its attrs and takes everything they
read as explicit inputs. Its `ControlFlowOp` says, in one place:

- ``subgraphs``: the attr names of its sub-graphs;
- ``operands``: how its inputs are laid out, as consecutive named groups
  whose sizes are attrs of the node (JAX's ``cond_nconsts``/``body_nconsts``).
  A group with ``captures_of`` holds the outer values that sub-graph
  captured, in the order of its `Graph.captures`; their placeholders are the
  sub-graph's *last* inputs. `operands(node)` is the one accessor every
  consumer uses (code generation, the verifier, the interpreter, pruning,
  rewrites, and later lowering and gradients);
- ``infer``: the ``(dtype, shape)`` of each output, from the node;
- ``verify``: the op's own invariants, as problems found (the verifier
  checks the layout and the captures of every op the same way);
- ``interpret``: the reference interpreter's rule,
  ``rule(node, input_values, run_graph) -> output values``;
- ``kernels``: per backend, how it runs there: ``"numpy"`` is the code
  generator's writer ``write(gen, node, indent)``; a ``"jax"`` entry comes
  with the JAX backend;
- ``lower``: the rule giving its dataflow form
  (``While`` -> Enter/Merge/Switch/NextIteration/Exit, ``Cond`` -> Switch/Merge;
  `autoloop.execute.dataflow.lower`), ``rule(lowering, node, context, env,
  control) -> completion nodes``; ``gradient``: an empty slot for reverse mode.

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

from autoloop.dtypes import bool_, int32, int64
from autoloop.ir.lazy import resolve


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
    inputs, sizes = [], {}
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
    kernels={"numpy": "autoloop.execute.codegen:write_while"},
    lower="autoloop.execute.dataflow.lower:lower_while",  # -> Enter/Merge/Switch/NextIteration/Exit
    gradient=None,  # an iteration counter and stacks of per-iteration values: the autodiff issue
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
    kernels={"numpy": "autoloop.execute.codegen:write_cond"},
    lower="autoloop.execute.dataflow.lower:lower_cond",  # -> Switch/Merge pairs
    gradient=None,  # the autodiff issue
))
