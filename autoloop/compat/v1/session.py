"""`Session`: runs a TF1 graph on the dataflow executor.

``sess.run(fetches, feed_dict)`` runs only what `fetches` need, through
the graph's dataflow form (loops as Enter/Merge/Switch/NextIteration/Exit
frames, `autoloop.execute.dataflow`), and returns numpy values in the
structure of `fetches` (a tensor, an Operation (None), a variable, or
lists, tuples, dicts and namedtuples of them). `feed_dict` gives values to
placeholders (or to any tensor of the graph), checked against their dtype
and shape. Each Session holds its own values of the graph's variables.

The first run with given fetches, feeds and targets makes its dataflow
`Plan` (what runs; each loop compiled into one node or run as frames, by
the cost rule of `autoloop.execute.dataflow.plan`), and the Session keeps
it for the next such run. ``run(..., run_metadata=RunMetadata())`` tells
how each loop ran (``run_metadata.loops``), and with
``options=RunOptions(trace_level=RunOptions.FULL_TRACE)`` every kernel's
start, end and thread (`autoloop.compat.v1.timeline`).

``with Session() as sess:`` makes `sess` the default session and its graph
the default graph inside the block (so ``op.run()``, ``tensor.eval()`` and
``variable.eval()`` work there), and closes it at the end.

    x = placeholder(autoloop.float32, shape=[None])
    with Session() as sess:
        sess.run({"double": x * 2}, feed_dict={x: [1, 2]})   # {'double': array([2., 4.], dtype=float32)}
"""

from __future__ import annotations

import contextlib

import numpy as np

from autoloop import dtypes, nest
from autoloop.compat.v1.graph import Operation, ThreadStack, get_default_graph, v1_graph_of
from autoloop.compat.v1.timeline import RunMetadata, RunOptions, clock_offset
from autoloop.errors import InvalidArgumentError
from autoloop.execute import dataflow
from autoloop.ir import graph as ir_graph
from autoloop.ops.v1_ops import VariableCell
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, check_conversion

_default_sessions = ThreadStack()  # made default by ``with sess:`` or ``sess.as_default()``


def get_default_session():
    """The innermost Session made default in this thread (``with sess:`` or ``sess.as_default()``), or None."""
    return _default_sessions.top()


def session_or_default(session, what: str):
    session = session if session is not None else get_default_session()
    if session is None:
        raise ValueError(f"Cannot {what}: no default Session is registered. Use `with Session() as sess:` "
                         f"around it, or pass session=sess")
    return session


class Session:
    """Runs a `Graph` (default: the default graph); see the module docstring."""

    def __init__(self, target="", graph=None, config=None):
        if target:
            raise NotImplementedError(f"Session(target={target!r}): autoloop runs graphs in this process only")
        self.graph = graph if graph is not None else get_default_graph()
        self._cells: dict = {}  # Variable -> this session's VariableCell
        self._closed = False
        self._entered: list = []
        self._plans: dict = {}  # (fetches, feeds, targets) -> the dataflow Plan of such a run
        self._plans_of = None  # the dataflow form those plans are of

    # -- running -------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of `fetches` (same structure), running only what they need; see the module docstring.

        `options` (a `RunOptions`) with a trace level above ``NO_TRACE`` records
        every kernel run in `run_metadata` (a `RunMetadata`): see `autoloop.compat.v1.timeline`.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if options is not None and not isinstance(options, RunOptions):
            raise TypeError(f"options must be a RunOptions, got {type(options).__name__} {options!r}")
        if run_metadata is not None and not isinstance(run_metadata, RunMetadata):
            raise TypeError(f"run_metadata must be a RunMetadata, got {type(run_metadata).__name__}")
        lowered = self.graph.lowered()
        leaves = nest.flatten(fetches)
        outputs, targets, places = [], [], []
        for leaf in leaves:
            kind, item = self._fetch(leaf, lowered)
            if kind == "value":
                places.append(len(outputs))
                outputs.append(item)
            else:
                places.append(None)
                targets.extend(item)
        feeds = self._feeds(feed_dict or {}, lowered)
        plan = self._plan(lowered, outputs, list(feeds), targets)
        tracing = options is not None and options.trace_level > RunOptions.NO_TRACE and run_metadata is not None
        trace = [] if tracing else None
        offset = clock_offset()
        values = dataflow.execute(plan, list(feeds.values()), trace=trace)
        if run_metadata is not None:
            run_metadata.record(plan, trace, offset)
        results = [None if place is None else _numpy(values[place]) for place in places]
        return nest.pack_sequence_as(fetches, results)

    def _plan(self, lowered, outputs, fed, targets) -> dataflow.Plan:
        """The plan of a run with these fetches, feeds and targets: made at its first run, kept here."""
        if self._plans_of is not lowered:  # ops were added to the graph since: plan afresh
            self._plans, self._plans_of = {}, lowered
        key = (tuple(map(id, outputs)), tuple(map(id, fed)), tuple(map(id, targets)))
        plan = self._plans.get(key)
        if plan is None:  # setdefault: threads planning at once agree on one
            plan = self._plans.setdefault(key, dataflow.Plan(lowered, outputs, fed, targets))
        return plan

    def _fetch(self, leaf, lowered):
        """("value", output) for something with a value, ("op", nodes to run) for an Operation."""
        variable_of = getattr(type(leaf), "_as_autoloop_tensor", None)
        if variable_of is not None:
            self._check_graph(leaf.graph, leaf)
            leaf = leaf._snapshot
        if isinstance(leaf, str):
            leaf = self._by_name(leaf)
        if isinstance(leaf, Operation):
            self._check_graph(leaf.graph, leaf)
            return "op", lowered.completions[leaf.node]
        if isinstance(leaf, Tensor):
            if not leaf.is_symbolic:
                raise TypeError(f"Fetch argument {leaf!r} is an eager tensor: it has its value already "
                                f"(.numpy()); fetch tensors of the Session's graph")
            value = leaf._value
            self._check_graph(v1_graph_of(value.graph), leaf)
            if value.graph is not self.graph.graph:
                raise ValueError(f"Fetch argument {leaf.name} is computed inside a while_loop or cond body; fetch "
                                 f"the loop's or cond's results instead")
            return "value", lowered.values[value]
        raise TypeError(f"Fetch argument {leaf!r} has invalid type {type(leaf).__name__}: fetch tensors, "
                        f"operations or variables of the graph (in lists, tuples or dicts)")

    def _check_graph(self, graph, leaf) -> None:
        if graph is not self.graph:
            raise ValueError(f"{getattr(leaf, 'name', leaf)!r} is not an element of this Session's graph: make it "
                             f"while that graph is the default (with graph.as_default():)")

    def _by_name(self, name: str):
        node_name, _, index = name.partition(":")
        for node in self.graph.graph.nodes:
            if node.name == node_name:
                if not index:
                    return Operation(node)
                return Tensor(value=node.outputs[int(index)])
        raise KeyError(f"The name {name!r} refers to nothing in this Session's graph")

    def _feeds(self, feed_dict, lowered) -> dict:
        feeds = {}
        for key, given in feed_dict.items():
            tensor = self._by_name(key) if isinstance(key, str) else key
            if not isinstance(tensor, Tensor) or not tensor.is_symbolic:
                raise TypeError(f"feed_dict keys must be placeholders or tensors of the graph, got {key!r}")
            self._check_graph(v1_graph_of(tensor._value.graph), tensor)
            feeds[lowered.values[tensor._value]] = feed_value(tensor, given)
        for variable in self.graph.variables.values():
            handle = lowered.values.get(variable._handle._value)
            if handle is not None:
                feeds[handle] = self._cell(variable)
        return feeds

    def _cell(self, variable) -> VariableCell:
        cell = self._cells.get(variable)
        if cell is None:  # setdefault: threads running at once agree on one cell
            cell = self._cells.setdefault(variable, VariableCell(variable._name))
        return cell

    # -- lifetime and defaults ---------------------------------------------------------------------
    def close(self) -> None:
        self._closed = True
        self._cells = {}

    @contextlib.contextmanager
    def as_default(self):
        """Make this the default session inside the block (its graph does not become the default graph)."""
        with _default_sessions.pushed(self):
            yield self

    def __enter__(self):
        blocks = contextlib.ExitStack()
        blocks.enter_context(self.as_default())
        blocks.enter_context(self.graph.as_default())
        self._entered.append(blocks)
        return self

    def __exit__(self, *exc_info):
        self._entered.pop().close()
        self.close()
        return False

    def __repr__(self):
        return f"<autoloop.compat.v1.Session on {self.graph!r}{' (closed)' if self._closed else ''}>"


def feed_value(tensor: Tensor, given):
    """`given` as a value for `tensor`: its dtype (no lossy conversion) and a compatible shape."""
    dtype = tensor.dtype
    what = f"the placeholder {tensor.op.name!r}" if tensor.op.op == "Placeholder" else f"the tensor {tensor.name}"
    if isinstance(given, Tensor):
        given = given.numpy()
    array = np.asarray(given)
    if array.dtype.kind not in "biuf" or dtype is dtypes.variant:
        raise TypeError(f"cannot feed {given!r} to {what}: it is not a number or an array of numbers")
    try:
        check_conversion(array, dtype, given)
    except (TypeError, ValueError) as error:
        raise type(error)(f"cannot feed a {array.dtype} value to {what}, which is {dtype.name}: {error}; "
                          f"convert it first (numpy's .astype), or give the placeholder a dtype that holds it"
                          ) from None
    array = array.astype(dtype.as_numpy_dtype, copy=False)
    if not TensorShape(array.shape).is_compatible_with(tensor.shape):
        raise InvalidArgumentError(f"cannot feed a value of shape {array.shape} to {what}, which has shape "
                                   f"{tensor.shape}: give a value of that shape, or a placeholder shape with "
                                   f"None where sizes vary")
    return array[()] if array.ndim == 0 else array


def _numpy(value):
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


def _evaluate_in_default_session(tensor, feed_dict):
    """``tensor.eval()``: its value in the default Session (NotImplemented when there is none)."""
    session = get_default_session()
    if session is None:
        return NotImplemented
    return session.run(tensor, feed_dict=feed_dict)


def _run_node(node, feed_dict, session):
    """``tensor.op.run()``: run the node in `session` or the default Session."""
    session_or_default(session, f"run {node.name}").run(Operation(node), feed_dict=feed_dict)


Tensor.default_session_evaluate = _evaluate_in_default_session
ir_graph.Node.session_run = _run_node
