"""The statements of one graph body: nested values, names, their release, in-place updates.

`codegen.Generator.graph_body` writes each graph (the function's own, a
loop's cond and body, a branch) through a `GraphBody`; the rules are those
of `autoloop.execute.codegen`'s docstring:

- every op runs in graph order (the reference interpreter's), so a value
  nests into its user only where that keeps the order (`pending`, `_take`);
- a name of an array is deleted after the statement holding its last read
  (`Generator.release` counts the reads);
- a ufunc kernel writes its result into an input array of at least
  `IN_PLACE_MIN_BYTES` that this body allocated with a ufunc and nothing
  else reads (`_in_place_input`);
- a loop body's result is bound to its loop variable at once where nothing
  reads the variable's old value afterwards (`_direct_outputs`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from autoloop.execute.expressions import Expr
from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects
from autoloop.ir.graph import Graph, Node, Value
from autoloop.ops import registry
from autoloop.ir.graph import op_attrs_of

if TYPE_CHECKING:
    from autoloop.execute.codegen import Generator

# numpy reuses a temporary for the next operator from this size on (its NPY_MIN_ELIDE_BYTES); below
# it, a kernel's ``out=`` keyword costs more than the allocation it saves.
IN_PLACE_MIN_BYTES = 256 * 1024


class GraphBody:
    """The statements of one graph body, with values used once nested into their user.

    Values waiting to be nested sit on `pending`, a stack in graph order
    whose texts, read left to right, evaluate their ops in graph order. A
    node may nest pending inputs only if they are the top of the stack, in
    the order its template evaluates them; anything pending below them is
    written as a statement first (`_flush`). Every statement therefore
    evaluates its ops in graph order after every earlier statement's.
    """

    def __init__(self, gen: Generator, graph: Graph, indent: int, nested: bool, into=None):
        self.gen, self.graph, self.indent, self.nested = gen, graph, indent, nested
        self.nodes = [n for n in graph.live_nodes(is_leaf=_all_folded) if n.op != "Placeholder"]
        self.constants = {n for n in self.nodes if n.op == "Const" or _all_folded(n)}
        self.uses: dict[Value, int] = {}
        for node in self.nodes:
            if node not in self.constants:
                for value in node.inputs:
                    self.uses[value] = self.uses.get(value, 0) + 1
        self.outputs = set(graph.outputs)
        for value in graph.outputs:
            self.uses[value] = self.uses.get(value, 0) + 1
        self.pending: dict[Value, Expr] = {}  # a stack, bottom first
        self.into = self._direct_outputs(into) if into is not None and gen.nest else {}

    def write(self) -> list:
        for node in self.nodes:
            op = control_flow.lookup(node.op)
            if node in self.constants:
                self._constant(node)
            elif op is not None:
                self._control_flow(node, op)
            else:
                self._op(node)
            if self.gen.check:
                for value in node.outputs:
                    self.gen.line(self.indent, f"_check({self.gen.names[value]}, {self.gen.bind(value, 'spec')})",
                                  node)
        if not self.nested:
            self._flush(len(self.pending))
            return [self.gen.names[v] for v in self.graph.outputs]
        nested = self._take([v for v in self.graph.outputs if v in self.pending])
        self._flush(len(self.pending))
        return [nested.get(v) or self.gen.names[v] for v in self.graph.outputs]

    # -- nodes ---------------------------------------------------------------
    def _constant(self, node: Node) -> None:
        for value in node.outputs:
            constant = node.attrs["value"] if node.op == "Const" else value.constant
            if value in self.gen.python_ints:
                constant = int(constant)
            self.gen.names[value] = self.gen.bind(constant)

    def _op(self, node: Node) -> None:
        gen = self.gen
        attrs = op_attrs_of(node.attrs)
        kernel = registry.get(node.op).kernel_for("numpy")
        template = _template(kernel, node, attrs)
        in_place = None
        if template is None:
            in_place = self._in_place_input(node, kernel, attrs)
            call = functools.partial(kernel.fn, **attrs) if attrs else kernel.fn
            fields = [f"{{{i}}}" for i in range(len(node.inputs))]
            if in_place is not None:
                fields.append(f"out={{{in_place}}}")
            template = gen.template(f"{gen.bind(call, 'k')}({', '.join(fields)})")
            plain = [i for i in range(len(node.inputs)) if i != in_place]
        else:
            template = gen.template(template)
            plain = template.nestable()
        args = self._arguments(node, plain)
        reads = [value for value, arg in zip(node.inputs, args) if not isinstance(arg, Expr)]
        reads += [value for arg in args if isinstance(arg, Expr) for value in arg.reads]
        expr = template.fill(args, node, reads)
        (output,) = node.outputs if len(node.outputs) == 1 and not node.tuple_result else (None,)
        if output is not None and self._nestable(node, output):
            self.pending[output] = expr
            return
        self._flush(len(self.pending))
        targets = [self.into.get(value) or gen.fresh() for value in node.outputs]
        if not targets:
            gen.statement(self.indent, "{0}", [expr], node)
        elif node.tuple_result:
            gen.statement(self.indent, f"{', '.join(targets)}, = {{0}}", [expr], node)
        else:
            gen.statement(self.indent, f"{targets[0]} = {{0}}", [expr], node)
        for value, name in zip(node.outputs, targets):
            self._name(value, name)

    def _control_flow(self, node: Node, op) -> None:
        writer = op.kernel_for("numpy")
        groups = control_flow.operands(node)
        first = [value for group in getattr(writer, "nested_operands", ()) for value in groups[group]]
        wanted = [value for value in first if value in self.pending]
        others = [value for value in node.inputs if value in self.pending and value not in wanted]
        taken = self._take(wanted, others)
        self._flush(len(self.pending))  # earlier than anything the node's statements evaluate
        gen = self.gen
        outer = gen._nested_inputs, gen._output_names, gen._read_outputs  # a writer may write nested blocks
        gen._nested_inputs = dict(taken)
        gen._output_names = {value: self.into[value] for value in node.outputs if value in self.into}
        gen._read_outputs = {value for value in node.outputs if self.uses.get(value)}
        writer(gen, node, self.indent)
        gen._nested_inputs, gen._output_names, gen._read_outputs = outer
        self._named_outputs(node)
        # The names the nested operands read were counted by the writer's statement that evaluated them.
        self.gen.release(self.indent, [value for value in node.inputs if value not in taken])

    def _arguments(self, node: Node, plain) -> list:
        """The inputs of `node` as names or nested expressions, flushing what cannot nest."""
        if not self.pending:
            return [self.gen.names[value] for value in node.inputs]
        order = [i for i in plain if node.inputs[i] in self.pending]
        wanted = [node.inputs[i] for i in order]
        others = [v for i, v in enumerate(node.inputs) if i not in order and v in self.pending]
        nested = self._take(wanted, others)
        return [nested.get(value) or self.gen.names[value] for value in node.inputs]

    def _take(self, wanted: list[Value], others=()) -> dict[Value, Expr]:
        """Pop the top of `pending` as far as it is a subsequence of `wanted` (evaluation order).

        The popped values nest; everything pending below them that the
        caller needs by name (`others`, the rest of `wanted`) is flushed
        with what lies below it, so graph order holds.
        """
        taken, end = {}, len(wanted)
        for value in reversed(self.pending):
            position = next((i for i in range(end - 1, -1, -1) if wanted[i] is value), None)
            if position is None:
                break
            taken[value], end = self.pending[value], position
        for value in taken:
            del self.pending[value]
        must_name = {v for v in list(wanted) + list(others) if v not in taken}
        positions = [i for i, value in enumerate(self.pending) if value in must_name]
        if positions:
            self._flush(max(positions) + 1)
        return taken

    def _flush(self, count: int) -> None:
        """Write the bottom `count` pending values as statements, in order."""
        flushed = list(self.pending.items())[:count]
        for value, _ in flushed:
            del self.pending[value]
        for value, expr in flushed:
            name = self.into.get(value) or self.gen.fresh()
            self.gen.statement(self.indent, f"{name} = {{0}}", [expr], value.node)
            self._name(value, name)

    def _name(self, value: Value, name: str) -> None:
        self.gen.names[value] = name
        left = self.uses.get(value, 0)
        self.gen._uses_left[value] = left
        if value not in self.outputs and value.shape.rank != 0:
            self.gen._releasable.add(value)  # an array, maybe large: deleted after its last use

    def _named_outputs(self, node: Node) -> None:
        for value in node.outputs:
            self._name(value, self.gen.names[value])

    def _nestable(self, node: Node, value: Value) -> bool:
        """Whether `value` may wait to be written inside its only user's expression."""
        if not self.gen.nest or self.uses.get(value) != 1 or has_effects(node) or value in self.into:
            return False
        return self.nested or value not in self.outputs  # the function's own results stay named

    def _direct_outputs(self, into) -> dict[Value, str]:
        """The outputs that may be bound to their `into` name at once: the value of the graph input of
        that name is read by nothing after the node that computes the output (see `graph_body`).

        Everything before that node in graph order has run when its
        statement runs (pending values are flushed before a statement), and
        only nodes after it run later.
        """
        position = {node: index for index, node in enumerate(self.nodes)}
        last_read: dict[Value, int] = {}
        for node in self.nodes:
            if node not in self.constants:
                for value in node.inputs:
                    last_read[value] = position[node]
        direct = {}
        for value, name, parameter in zip(self.graph.outputs, into, self.graph.inputs):
            node = value.node
            if node not in position or node in self.constants or self.graph.outputs.count(value) != 1:
                continue
            if control_flow.lookup(node.op) is not None and node.op != "Cond":
                continue  # a loop's own variables must stay apart from the enclosing loop's
            if parameter in self.outputs or last_read.get(parameter, -1) > position[node]:
                continue
            direct[value] = name
        return direct

    # -- in place ------------------------------------------------------------
    def _in_place_input(self, node: Node, kernel, attrs) -> int | None:
        """The input a ufunc kernel may overwrite with its result (`out=`), or None.

        Only a large array this block allocated (a ufunc's result) that
        nothing else reads, of the result's dtype and exact static shape.
        """
        if not self.gen.nest or attrs or node.tuple_result or len(node.outputs) != 1 or has_effects(node):
            return None
        if not _is_ufunc(kernel.fn):
            return None
        (output,) = node.outputs
        if not output.shape.is_fully_defined() or not output.shape.rank:  # a scalar is immutable
            return None
        if output.dtype.size * output.shape.num_elements() < IN_PLACE_MIN_BYTES:
            return None
        for position, value in enumerate(node.inputs):
            if (value.node.graph is self.graph and _allocates(value.node) and self.uses.get(value) == 1
                    and value not in self.outputs and value.dtype is output.dtype and value.shape == output.shape
                    and node.inputs.count(value) == 1):
                return position
        return None


def _is_ufunc(fn) -> bool:
    return isinstance(fn, np.ufunc) and fn.nout == 1


def _allocates(node: Node) -> bool:
    """Whether `node`'s result is always a new array (a ufunc's, through its kernel or template)."""
    if node.op in ("Placeholder", "Const") or _all_folded(node) or control_flow.lookup(node.op) is not None:
        return False
    kernel = registry.get(node.op).kernel_for("numpy")
    return _is_ufunc(kernel.fn) and len(node.outputs) == 1 and not node.tuple_result


def _template(kernel, node: Node, attrs) -> str | None:
    """The kernel's inline expression: its scalar form where tracing proved every input a scalar."""
    types = [v.dtype for v in node.inputs]
    if kernel.scalar_expr is not None and all(v.shape.rank == 0 for v in node.inputs):
        scalar = kernel.scalar_expr
        if callable(scalar):
            scalar = scalar(attrs, types)
        if scalar is not None:
            return scalar
    template = kernel.expr(attrs) if callable(kernel.expr) else kernel.expr
    if template is not None and "{*}" in template:  # every input, comma-separated
        template = template.replace("{*}", ", ".join(f"{{{i}}}" for i in range(len(node.inputs))))
    return template


def _all_folded(node: Node) -> bool:
    """Whether every output of `node` was computed while tracing (its inputs are then not needed)."""
    if not node.outputs or any(v.constant is None for v in node.outputs):
        return False  # control-flow nodes land here: their outputs are never folded
    return not has_effects(node)
