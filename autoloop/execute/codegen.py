"""Compile a graph into one generated Python function.

A ``While`` becomes a Python ``while`` loop and a ``Cond`` an ``if``/``else``,
with their sub-graphs inlined; ops with an ``expr`` template are written as
Python expressions, others call their kernel; folded constants and kernels
are bound once and read as local names. Nothing is interpreted per call and
no shape or dtype that tracing proved is checked again, so a loop costs
about what the same loop written by hand over numpy costs. For
``sum_square`` the generated code reads::

    def run(p0):
        c0, c1, c4, = _constants
        _token = _ignore()
        try:
            # While while
            lv2, lv3 = c0, c1
            while (lv2 < p0):
                lv3 = (lv3 + (lv2 * lv2))
                lv2 = (lv2 + c4)
            return (lv3,)
        except Exception as _error:
            _reraise(_error)
        except KeyboardInterrupt as _interrupt:
            _locate(_interrupt)
            raise
        finally:
            _restore(_token)

How it is written (the rules torch.fx's code generator and a careful numpy
programmer follow):

- **Graph order.** Nodes are evaluated in graph order, the order the
  reference interpreter runs them in (the verifier guarantees it is a
  topological order of data and ordering edges), so effects happen in
  program order and the first failing op is the interpreter's.
- **Nesting.** A value used once is written inside the expression that uses
  it, where that keeps graph order (`statements.GraphBody`) and its template
  evaluates the placeholder exactly once (`expressions.placeholders`). Fewer
  names make a scalar loop faster and let numpy reuse the temporary of
  ``x * 0.5`` for ``+ 0.25``. The loop test becomes the ``while`` condition
  when the cond graph is one expression. Graph outputs of the function stay
  named.
- **Loop variables.** A body result is bound to its loop variable at once
  where nothing reads the variable's old value afterwards (`graph_body`'s
  ``into``), as in the loop by hand. A loop variable that only counts or
  accumulates a constant is a Python int inside the loop
  (`autoloop.execute.counters`).
- **Release.** A named array is deleted after the statement holding its
  last use, so it does not live into the next iteration.
- **In place.** A ufunc kernel whose input is a large array that this
  iteration allocated and nothing else reads writes into it
  (``k11(v10, out=v10)``): never an input, a loop value, a constant, a view
  or a value that is returned.
- **Errors.** Every statement is mapped to its node, and every op in it to
  its columns, so a failure names the op that failed and the user's line
  (`CompiledGraph`). Nesting needs the columns of the failing instruction,
  which Python gives from 3.11 on; before that every value is named. The
  function itself ignores numpy's floating-point errors and hands failures
  to that mapping, so a call of the graph is one Python call.

A control-flow node is written by its op's ``"numpy"`` rule
(`autoloop.ir.control_flow`), with the `Generator` methods below.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

from autoloop.execute.counters import python_ints
from autoloop.execute.expressions import Expr, Template
from autoloop.execute.statements import GraphBody
from autoloop.ir import control_flow
from autoloop.ir.graph import Graph, Node, Value

# Nested expressions need the columns of a failing instruction to name the failing op.
NESTING = sys.version_info >= (3, 11)


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
        return GraphBody(self, graph, indent, nested, into).write()

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
    global. ``run`` is complete: it ignores numpy's floating-point errors
    while it runs (``_ignore``/``_restore``, `autoloop.ops.error_state`) and
    hands a failure to ``_reraise`` (a ``KeyboardInterrupt`` to ``_locate``),
    which the caller binds (`CompiledGraph`): a call of the graph is one
    Python call. `variant` rewrites its first two lines and its return
    line into another entry point with the same body at the same lines.
    """
    gen = Generator(check)
    params = [f"p{i}" for i in range(len(graph.inputs))]
    results = gen.graph_body(graph, 2, params)
    gen.results = results
    gen.line(2, _RETURN)
    gen.return_line = len(gen.lines)
    bound = list(gen._bound.values())
    if bound:
        gen.namespace["_constants"] = tuple(gen.namespace[name] for name in bound)
    gen.params, gen.constants = params, bound
    body = _cut(gen, 0)
    gen.lines.extend(["", "", "    _token = _ignore()", "    try:"])
    _paste(gen, body)
    gen.lines.extend(["    except Exception as _error:",
                      "        _reraise(_error)",
                      "    except KeyboardInterrupt as _interrupt:",
                      "        _locate(_interrupt)",
                      "        raise",
                      "    finally:",
                      "        _restore(_token)"])
    gen.return_line += 4
    gen.lines = variant(gen, inputs="positional", result="tuple")
    return gen


_RETURN = "return ..."  # the return line's place, written by `variant`


def variant(gen: Generator, inputs: str, result: str) -> list[str]:
    """The lines of `gen` with its entry point written: `inputs` ``"positional"`` (``run(p0, p1)``) or ``"sequence"``
    (``run(inputs)``); `result` ``"tuple"`` (the outputs), ``"finish"`` (``_finish(outputs)``) or
    ``"one"`` (``_one(output)``, for a graph with one output). Only lines 1 and 2 and the return line
    change, so the line and column maps of the body hold for every variant."""
    constants = f"{', '.join(gen.constants)}, = _constants" if gen.constants else ""
    if inputs == "positional":
        header, unpack = f"def run({', '.join(gen.params)}):", constants or "pass"
    else:
        header = "def run(inputs):"
        unpack = "; ".join(part for part in (f"{', '.join(gen.params)}, = inputs" if gen.params else "",
                                             constants) if part) or "pass"
    names = ", ".join(gen.results) + ("," if len(gen.results) == 1 else "")
    returned = {"tuple": f"({names})", "finish": f"_finish(({names}))", "one": f"_one({', '.join(gen.results)})"}
    if result == "one" and len(gen.results) != 1:
        raise ValueError(f"result='one' needs a graph with one output, this one has {len(gen.results)}")
    lines = list(gen.lines)
    lines[0], lines[1] = header, "    " + unpack
    lines[gen.return_line - 1] = "        return " + returned[result]
    return lines
