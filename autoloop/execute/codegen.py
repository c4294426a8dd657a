"""Compile a graph into one generated Python function.

A ``While`` becomes a Python ``while`` loop and a ``Cond`` an ``if``/``else``,
with their sub-graphs inlined; ops with an ``expr`` template are written as
Python expressions, others call their kernel; folded constants and kernels
are bound once and read as local names. Nothing is interpreted per call and
no shape or dtype that tracing proved is checked again, so a loop costs
about what the same loop written by hand over numpy costs. For
``sum_square`` the generated code reads::

    def run(p0):
        c3, = _constants
        v0 = (p0 - p0)
        # While while
        lv1, lv2 = v0, v0
        while (lv1 < p0):
            lv2 = (lv2 + (lv1 * lv1))
            lv1 = (lv1 + c3)
        return (lv2,)

How it is written (the rules torch.fx's code generator and a careful numpy
programmer follow):

- **Graph order.** Nodes are evaluated in graph order, the order the
  reference interpreter runs them in (the verifier guarantees it is a
  topological order of data and ordering edges), so effects happen in
  program order and the first failing op is the interpreter's.
- **Nesting.** A value used once is written inside the expression that uses
  it, where that keeps graph order (`_Block`) and its template evaluates
  the placeholder exactly once (`expressions.placeholders`). Fewer names
  make a scalar loop faster and let numpy reuse the temporary of ``x * 0.5``
  for ``+ 0.25``. The loop test becomes the ``while`` condition when the
  cond graph is one expression. Graph outputs of the function stay named.
- **Loop variables.** A body result is bound to its loop variable at once
  where nothing reads the variable's old value afterwards (`graph_body`'s
  ``into``), as in the loop by hand.
- **Release.** A named array is deleted after the statement holding its
  last use, so it does not live into the next iteration.
- **In place.** A ufunc kernel whose input is a large array that this
  iteration allocated and nothing else reads writes into it
  (``k11(v10, out=v10)``): never an input, a loop value, a constant, a view
  or a value that is returned.
- **Errors.** Every statement is mapped to its node, and every op in it to
  its columns, so a failure names the op that failed and the user's line
  (`CompiledGraph`). Nesting needs the columns of the failing instruction,
  which Python gives from 3.11 on; before that every value is named.

A control-flow node is written by its op's ``"numpy"`` rule
(`autoloop.ir.control_flow`), with the `Generator` methods below.
"""

from __future__ import annotations

import functools
import itertools
import sys

import numpy as np

from autoloop.execute.counters import python_ints
from autoloop.execute.expressions import Expr, Template
from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects
from autoloop.ir.graph import Graph, Node, Value
from autoloop.ops import registry

# Nested expressions need the columns of a failing instruction to name the failing op.
NESTING = sys.version_info >= (3, 11)
# numpy reuses a temporary for the next operator from this size on (its NPY_MIN_ELIDE_BYTES); below
# it, a kernel's ``out=`` keyword costs more than the allocation it saves.
IN_PLACE_MIN_BYTES = 256 * 1024


class Generator:
    """Writes the source of one graph, collecting the constants it refers to.

    Control-flow writers use: `names` (value -> name), `fresh`, `bind`,
    `line`, `statement`, `assign` and `graph_body`. A writer whose first
    statement evaluates some operand groups before anything else may name
    them in a ``nested_operands`` attribute (``("pred",)``): those inputs
    may then be nested expressions, which it reads with `input_exprs` and
    writes through `statement` or `assign` (a line that opens a block
    releases their names after the block: `release`).
    """

    def __init__(self, check: bool = False):
        self.lines: list[str] = []
        self.namespace: dict[str, object] = {"np": np}  # expression templates may name numpy
        self.names: dict[Value, str] = {}
        self.line_nodes: dict[int, Node] = {}  # line number -> the node its statement runs
        self.line_spans: dict[int, tuple] = {}  # line number -> (start, end, node) of each op on it
        self.check = check
        self.nest = NESTING and not check  # checked mode names every value, to check it
        self._counter = itertools.count()
        self._bound: dict[int, str] = {}
        self._templates: dict[str, Template] = {}
        self._uses_left: dict[Value, int] = {}  # named values of the open blocks: reads still to write
        self._releasable: set[Value] = set()
        self._nested_inputs: dict[Value, Expr] = {}  # for the control-flow node being written
        self._output_names: dict[Value, str] = {}  # likewise
        self._read_outputs: set[Value] = set()  # likewise
        self.python_ints: set[Value] = set()  # constants bound as Python ints (loop counters' bounds, steps)

    # -- naming ------------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        return f"{prefix}{next(self._counter)}"

    def bind(self, obj, prefix: str = "c") -> str:
        """A name of the generated code that holds `obj` (a local of ``run``, bound once per call)."""
        key = id(obj)
        if key not in self._bound:
            name = self.fresh(prefix)
            self.namespace[name] = obj
            self._bound[key] = name
        return self._bound[key]

    # -- writing -------------------------------------------------------------
    def line(self, indent: int, text: str, node: Node | None = None, spans=()) -> None:
        self.lines.append("    " * indent + text)
        if node is not None:
            self.line_nodes[len(self.lines)] = node
        if spans:
            shift = 4 * indent
            self.line_spans[len(self.lines)] = tuple((start + shift, end + shift, op) for start, end, op in spans)

    def statement(self, indent: int, template: str, args=(), node: Node | None = None, release: bool = True) -> None:
        """One line, `template` filled with `args` (names or nested `Expr`s, evaluated here, once).

        Names whose last use this line holds are released after it (a line
        that opens a block, ``if ...:``, passes ``release=False``: the
        block releases them after the whole statement).
        """
        expr = self.template(template).fill(list(args))
        self.line(indent, expr.text, node, expr.spans)
        if release:
            self.release(indent, [value for arg in args if isinstance(arg, Expr) for value in arg.reads])

    def input_exprs(self, node: Node) -> list:
        """The inputs of a control-flow node: names, or nested `Expr`s for its ``nested_operands``."""
        return [self._nested_inputs.pop(value, None) or self.names[value] for value in node.inputs]

    def assign(self, indent: int, targets: list[str], sources, node=None) -> None:
        """``a, b = x, y`` (or ``a = x`` for one name: a trailing comma would make a tuple); ``a = a`` is left out."""
        pairs = [(target, source) for target, source in zip(targets, sources) if target != source]
        if pairs:
            fields = ", ".join(f"{{{i}}}" for i in range(len(pairs)))
            self.statement(indent, f"{', '.join(target for target, _ in pairs)} = {fields}",
                           [source for _, source in pairs], node)

    def release(self, indent: int, reads) -> None:
        """Count `reads` as written; ``del`` each named array whose last read that was."""
        dead = []
        for value in reads:
            left = self._uses_left.get(value)
            if left is None:
                continue
            self._uses_left[value] = left - 1
            if left == 1 and value in self._releasable:
                dead.append(self.names[value])
        if dead:
            self.line(indent, f"del {', '.join(dead)}")

    def graph_body(self, graph: Graph, indent: int, input_names, nested: bool = False, into=None) -> list:
        """Write `graph`'s nodes; return its outputs: names, or with `nested` also `Expr`s.

        With `nested`, an output may be an expression still to evaluate: the
        caller writes all outputs in its very next statement, in order
        (``lv1, lv2 = (lv1 + c6), v5``), through `statement` or `assign`.
        `into` names, per output, where the caller will store it (a loop's
        variables, which are also the graph's first inputs): an output is
        bound to that name at once where nothing reads the input of that
        name afterwards (``lv2 = (lv2 + (lv1 * lv1))``), and returned as it.
        """
        for value, name in zip(graph.inputs, input_names):
            self.names[value] = name
        return _Block(self, graph, indent, nested, into).write()

    def output_name(self, value: Value) -> str:
        """The name a control-flow writer binds its output `value` to: fresh, or the one its block chose."""
        return self._output_names.pop(value, None) or self.fresh()

    def is_read(self, value: Value) -> bool:
        """Whether anything reads output `value` of the control-flow node being written."""
        return value in self._read_outputs

    def template(self, text: str) -> Template:
        """`text` as a `Template`, split once per generator."""
        template = self._templates.get(text)
        if template is None:
            template = self._templates[text] = Template(text)
        return template


class _Block:
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
        attrs = {k: v for k, v in node.attrs.items() if not k.startswith("_")}
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


# -- control flow: the "numpy" rules of the ops in autoloop.ir.control_flow -----------------
def write_while(gen: Generator, node: Node, indent: int) -> None:
    """A ``while`` loop over the body graph; the cond graph is its condition when it is one expression.

    A loop variable that only counts or accumulates a constant is a Python
    int inside the loop (`counters.python_ints`), converted back to its numpy
    type after it.
    """
    cond, body = node.attrs["cond"], node.attrs["body"]
    groups = control_flow.split(node, gen.input_exprs(node))
    read = [gen.is_read(value) for value in node.outputs]
    loop_vars = [gen.fresh("lv") for _ in groups.loop_vars]
    initial, cond_captures = list(groups.loop_vars), list(groups.cond_captures)
    gen.line(indent, f"# While {node.name}")
    integers = python_ints(node) if gen.nest else []
    for integer in integers:
        initial[integer.position] = gen.template("int({0})").fill([initial[integer.position]])
        gen.python_ints.add(integer.step)
        if integer.bound is not None:
            _python_int_bound(gen, node, integer.bound, cond_captures, indent)
    gen.assign(indent, loop_vars, initial, node)
    limit = groups.maximum_iterations[0] if groups.maximum_iterations else None
    counter = gen.fresh("it") if limit is not None else None
    if counter:
        gen.line(indent, f"{counter} = 0")
    mark = len(gen.lines)
    (test,) = gen.graph_body(cond, indent + 1, loop_vars + cond_captures, nested=True)
    if len(gen.lines) == mark:  # the test is one expression: the loop's condition
        within = f"{counter} < {limit} and " if counter else ""
        gen.statement(indent, f"while {within}{{0}}:", [test], node, release=False)  # a Ctrl-C often lands here
    else:
        cond_lines = _cut(gen, mark)
        gen.line(indent, "while True:", node)
        if counter:
            gen.line(indent + 1, f"if {counter} >= {limit}: break", node)
        _paste(gen, cond_lines)
        gen.statement(indent + 1, "if not {0}: break", [test], node, release=False)
    if counter:
        gen.line(indent + 1, f"{counter} += 1")
    results = gen.graph_body(body, indent + 1, loop_vars + list(groups.body_captures), nested=True, into=loop_vars)
    gen.assign(indent + 1, loop_vars, results, node)
    for integer in integers:
        name, dtype = loop_vars[integer.position], node.outputs[integer.position].dtype
        if not read[integer.position]:
            continue  # nothing reads it after the loop
        if integer.bound is not None:
            gen.line(indent, f"{name} = np.{dtype.name}({name})  # the counter back to its numpy type")
        else:
            bits = 8 * dtype.size
            gen.line(indent, f"{name} = np.uint{bits}({name} & 0x{(1 << bits) - 1:X}).view(np.{dtype.name})"
                             f"  # wrapped around as {dtype.name} wraps")
    for value, name in zip(node.outputs, loop_vars):
        gen.names[value] = name


def _python_int_bound(gen: Generator, node: Node, bound: Value, cond_captures: list, indent: int) -> None:
    """Make a counter's bound a Python int: a constant bound once, a captured value before the loop."""
    cond = node.attrs["cond"]
    captured = [i for i, value in enumerate(cond.inputs[node.attrs["num_loop_vars"]:]) if value is bound]
    if not captured:
        gen.python_ints.add(bound)
        return
    (index,) = captured
    name = gen.fresh("bound")
    gen.line(indent, f"{name} = int({cond_captures[index]})")
    cond_captures[index] = name


write_while.nested_operands = ("loop_vars",)  # the first statement assigns their initial values


def write_cond(gen: Generator, node: Node, indent: int) -> None:
    """An ``if``/``else`` whose branches write the same output names."""
    true_graph, false_graph = node.attrs["true_graph"], node.attrs["false_graph"]
    groups = control_flow.split(node, gen.input_exprs(node))
    outputs = [gen.output_name(value) for value in node.outputs]
    gen.statement(indent, "if {0}:", groups.pred, node, release=False)
    _branch(gen, true_graph, indent + 1, list(groups.true_captures), outputs, node)
    gen.line(indent, "else:")
    _branch(gen, false_graph, indent + 1, list(groups.false_captures), outputs, node)
    if isinstance(groups.pred[0], Expr):
        gen.release(indent, groups.pred[0].reads)  # names read by the predicate, not before both branches
    for value, name in zip(node.outputs, outputs):
        gen.names[value] = name


write_cond.nested_operands = ("pred",)


def _branch(gen: Generator, graph: Graph, indent: int, captures, outputs, node) -> None:
    mark = len(gen.lines)
    results = gen.graph_body(graph, indent, captures, nested=True)
    gen.assign(indent, outputs, results, node)
    if len(gen.lines) == mark:
        gen.line(indent, "pass")


def _cut(gen: Generator, mark: int) -> list:
    """Remove the lines written after line `mark`, with their node and span entries."""
    lines = []
    for number in range(mark + 1, len(gen.lines) + 1):
        lines.append((gen.lines[number - 1], gen.line_nodes.pop(number, None), gen.line_spans.pop(number, ())))
    del gen.lines[mark:]
    return lines


def _paste(gen: Generator, lines) -> None:
    for text, node, spans in lines:
        gen.lines.append(text)
        if node is not None:
            gen.line_nodes[len(gen.lines)] = node
        if spans:
            gen.line_spans[len(gen.lines)] = spans


def generate(graph: Graph, check: bool = False) -> Generator:
    """The generator holding `graph`'s source as a function ``run(p0, p1, ...)``.

    Constants and kernels reach ``run`` as one tuple, ``_constants``,
    unpacked into locals on entry: a loop reads a local faster than a
    global.
    """
    gen = Generator(check)
    params = [f"p{i}" for i in range(len(graph.inputs))]
    results = gen.graph_body(graph, 1, params)
    gen.line(1, f"return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    header = [f"def run({', '.join(params)}):"]
    bound = list(gen._bound.values())
    if bound:
        header.append(f"    {', '.join(bound)}, = _constants")
        gen.namespace["_constants"] = tuple(gen.namespace[name] for name in bound)
    body = _cut(gen, 0)
    gen.lines.extend(header)
    _paste(gen, body)
    return gen
