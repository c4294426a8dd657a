"""TF1 graphs: `Graph`, the default graph, `disable_eager_execution`, `control_dependencies`, `Operation`.

A `Graph` is built by running ops while it is the default graph: inside
``with graph.as_default():`` (or ``with Session(graph):``), or anywhere
after `disable_eager_execution()`, which makes ops outside any block go to
`get_default_graph()`. Nothing runs until a `Session` runs it.

Unlike a traced function, the top level of a TF1 graph has no automatic
ordering: an op runs when a fetch needs it, and ops are ordered only by
data and by `control_dependencies` blocks. Inside ``while_loop`` and
``cond`` bodies effects (variable reads and updates, ``autoloop.print``)
keep program order, each iteration after the previous one, so results do
not depend on ``parallel_iterations``.

    g = Graph()
    with g.as_default():
        x = autoloop.constant(2) * 3
    with Session(graph=g) as sess:
        sess.run(x)         # 6
"""

from __future__ import annotations

import contextlib
import threading

from autoloop import nest
from autoloop.ir import context
from autoloop.ir.effects import has_effects
from autoloop.ir import graph as ir_graph
from autoloop.ops.dispatch import apply, convert
from autoloop.tensor import Tensor

class ThreadStack:
    """A stack per thread (of default graphs, of default sessions), as TensorFlow keeps them."""

    def __init__(self):
        self._local = threading.local()

    def items(self) -> list:
        items = getattr(self._local, "items", None)
        if items is None:
            items = self._local.items = []
        return items

    def top(self):
        items = self.items()
        return items[-1] if items else None

    @contextlib.contextmanager
    def pushed(self, item):
        items = self.items()
        items.append(item)
        try:
            yield item
        finally:
            items.pop()


_default_graphs = ThreadStack()  # made default by as_default()


class Graph:
    """A TF1 graph: ops added while it is the default graph, run by a `Session`."""

    def __init__(self):
        self._graph = _IRGraph(self)
        self.variables: dict = {}  # full name -> Variable, the global variables collection
        self._lock = threading.Lock()
        self._lowered = (None, None)  # (node count when lowered, the dataflow form)

    @property
    def graph(self):
        """The IR graph holding this graph's nodes (``autoloop.ir.graph.Graph``)."""
        return self._graph

    @contextlib.contextmanager
    def as_default(self):
        """Make this the default graph inside the block: ops made there are added to it."""
        with _default_graphs.pushed(self), context.building(self._graph):
            yield self

    def get_operations(self) -> list:
        return [Operation(node) for node in self._graph.nodes]

    def lowered(self):
        """The dataflow form of the graph as it is now (lowered again after ops were added)."""
        from autoloop.execute.dataflow import lower
        with self._lock:
            version, lowered = self._lowered
            if version != len(self._graph.nodes):
                lowered = lower(self._graph)
                self._lowered = (len(self._graph.nodes), lowered)
            return lowered

    def __repr__(self):
        return f"<autoloop.compat.v1.Graph: {len(self._graph.nodes)} nodes>"


class _IRGraph(ir_graph.Graph):
    """The IR graph of a TF1 `Graph`: TF1-style at its top level, and knowing its owner."""

    def __init__(self, owner: Graph):
        super().__init__("graph")
        self.tf1_style = True  # ops run when needed, ordered by data and control_dependencies
        self.owner = owner


class _Defaults:
    """The program's default graph (TensorFlow keeps one per program too)."""

    def __init__(self):
        self.graph = Graph()
        self.eager_disabled = False


_DEFAULTS = _Defaults()


def get_default_graph() -> Graph:
    """The innermost graph made default by ``as_default()`` in this thread, else the program's default graph."""
    top = _default_graphs.top()
    return top if top is not None else _DEFAULTS.graph


def reset_default_graph() -> None:
    """Replace the program's default graph by a new, empty one.

    AssertionError inside a ``with graph.as_default()`` or Session block,
    as in TensorFlow.
    """
    if _default_graphs.items():
        raise AssertionError("Do not use reset_default_graph() inside a `with graph.as_default()` or "
                             "`with Session()` block: leave the block first")
    _DEFAULTS.graph = Graph()


def disable_eager_execution() -> None:
    """From now on, ops made outside any graph block are added to `get_default_graph()` (TF1 behaviour)."""
    _DEFAULTS.eager_disabled = True
    context.set_default_graph(lambda: _DEFAULTS.graph._graph)


def enable_eager_execution() -> None:
    """Undo `disable_eager_execution`: ops outside any graph block run at once again."""
    _DEFAULTS.eager_disabled = False
    context.set_default_graph(None)


def executing_eagerly_outside_functions() -> bool:
    return not _DEFAULTS.eager_disabled


def building_graph(what: str):
    """The IR graph ops go into now; RuntimeError naming `what` when ops run eagerly."""
    graph = context.current_graph()
    if graph is None:
        raise RuntimeError(f"{what} needs a graph: call it inside `with autoloop.compat.v1.Graph().as_default():` "
                           f"or a `with Session():` block, or call "
                           f"autoloop.compat.v1.disable_eager_execution() first")
    return graph


def v1_graph_of(graph) -> Graph | None:
    """The `Graph` an IR graph (or one of its sub-graphs) belongs to, or None for a traced function's."""
    while graph.parent is not None:
        graph = graph.parent
    return graph.owner if isinstance(graph, _IRGraph) else None


# -- operations and ordering ---------------------------------------------------------------------
class Operation:
    """A graph node as TF1 code sees it: run it for its effect (``init.run()``), or depend on it."""

    def __init__(self, node):
        self.node = node

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def type(self) -> str:
        return self.node.op

    @property
    def graph(self) -> Graph | None:
        return v1_graph_of(self.node.graph)

    @property
    def outputs(self) -> list:
        return [Tensor(value=v) for v in self.node.outputs]

    def run(self, feed_dict=None, session=None):
        """Run this operation in `session` (default: the default Session)."""
        self.node.run(feed_dict=feed_dict, session=session)

    def __repr__(self):
        return f"<autoloop.compat.v1.Operation {self.name!r} type={self.type}>"


def node_of(value):
    """The graph node an Operation, Tensor, Variable or IR node stands for (what an edge comes from)."""
    if isinstance(value, Operation):
        return value.node
    if hasattr(value, "op") and hasattr(value.op, "control_inputs"):  # a symbolic Tensor
        return value.op
    if hasattr(value, "control_inputs"):  # an IR node
        return value
    as_operation = getattr(type(value), "_as_operation", None)
    if as_operation is not None:  # a Variable: its handle
        return as_operation(value).node
    raise TypeError(f"expected an Operation or a graph tensor, got {type(value).__name__} {value!r}")


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Ops made in the block run after every op in `control_inputs` (Operations or tensors of this graph).

    ``None`` clears the dependencies of the blocks around. Eagerly (no graph)
    the block does nothing, as in TensorFlow 2.
    """
    graph = context.current_graph()
    if graph is None:
        yield
        return
    saved = list(graph.control_dependencies)
    if control_inputs is None:
        graph.control_dependencies = []
    else:
        nodes = [node_of(item) for item in nest.flatten(list(control_inputs))]
        for node in nodes:
            if node.graph is not graph:
                raise ValueError(f"control_dependencies: {node.name} belongs to graph {node.graph.name!r}, not to the "
                                 f"graph being built here ({graph.name!r}); inside a while_loop or cond body, depend "
                                 f"on ops made in that body")
        graph.control_dependencies = saved + [n for n in nodes if n not in saved]
    try:
        yield
    finally:
        graph.control_dependencies = saved


def no_op(name=None) -> Operation | None:
    """An op that does nothing (its ordering edges are the point); None eagerly."""
    if context.current_graph() is None:
        return None
    apply("NoOp", [], name=name or "NoOp")
    return Operation(context.current_graph().nodes[-1])


def group(*inputs, name=None) -> Operation | None:
    """One op that runs after all of `inputs` (Operations or tensors)."""
    with control_dependencies([i for i in nest.flatten(list(inputs)) if i is not None]):
        return no_op(name=name or "group_deps")


def call_as_one_op(call):
    """Inline `call` (a traced function called at this TF1 graph's top level) as TF runs a function call op.

    TF's automatic control dependencies: the function's effects (asserts,
    prints, variable updates) run in program order, each after the one
    before, and every tensor it returns is read after the last of them, so
    fetching any one of its results runs all of its effects (and a failed
    assert stops the run). Without them the graph's top level would order
    nothing and prune every effect no fetch reads.
    """
    graph = context.current_graph()
    start = len(graph.nodes)
    results = call()
    effects = [node for node in graph.nodes[start:] if has_effects(node)]
    if not effects:
        return results
    for before, node in zip(effects, effects[1:]):
        if before not in node.control_inputs:
            node.control_inputs = node.control_inputs + (before,)

    def after_effects(leaf):
        if isinstance(leaf, Tensor) and leaf.is_symbolic and leaf._value.graph is graph:
            return identity_with_dependencies(leaf, [effects[-1]])
        return leaf
    return nest.map_structure(after_effects, results)


def identity_with_dependencies(value, control_inputs):
    """`value`, read after `control_inputs` have run (TF's ``with_dependencies``)."""
    with control_dependencies(control_inputs):
        return apply("Identity", [convert(value)])
