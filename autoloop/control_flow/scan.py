"""`scan`: RETURNN's extended loop — frames in, frames out, and each entry stopping on its own.

Reference semantics (what every mode computes; ``where`` and ``any`` are
element-wise, a scalar ``active`` without ``cond_dims``)::

    def scan(body, initial=None, xs=None, ys=None, cond=None, spatial_dim=None, cond_dims=None,
             cond_before_body=True, max_seq_len=None):
        limit = min(len(xs), spatial_dim, max_seq_len)      # those given; None: unbounded
        state, frames, step = initial, [], 0
        active, lengths = ones(cond_dims, bool), zeros(cond_dims, int32)
        while limit is None or step < limit:
            x = xs[step] if xs is not None else None           # every tensor of xs, on axis 0
            if cond is not None and (cond_before_body or step > 0):
                active &= cond(x if cond_before_body else previous_x, state)
            if not any(active):
                break
            y, new_state = body(x, state)
            state = where(active, new_state, state)            # entry b: row b of each state tensor
            frames.append(where(active, y, 0))
            lengths += active
            previous_x, step = x, step + 1
        return stack(frames), state, lengths

So an entry's state stops changing once its cond is false, its later
frames are zeros, and ``lengths`` counts the frames it ran: 0 for an entry
false from the start, or 1 with ``cond_before_body=False`` (a do-while,
whose cond sees the frame it just ran). `cond` should have no effects.

Outside a trace the loop runs at once over eager tensors. Inside one, cond
and body are each traced once into the sub-graphs of a single ``Scan`` node
(`autoloop.ir.control_flow`); the frame loop itself is
`autoloop.control_flow.scan_run`, shared by every mode. With ``cond_dims``
the entry axis (axis 0 of the state) is left unknown while tracing, since
compaction runs the body on fewer rows:

- ``compaction="auto"`` (the default): in a trace, when the body and cond
  treat entries independently (`autoloop.control_flow.scan_entries`), the
  rows of finished entries are dropped as they finish, so the work follows
  the sum of the lengths; otherwise, and eagerly, finished entries are
  masked (the work follows batch x longest);
- ``compaction=True``: the same, but a ValueError if the body mixes entries
  (eagerly, cond and body are traced once more to check); on
  ``backend="jax"`` it also asks for the compacted form whatever the cost
  rule says (`autoloop.backends.jax.scan_form`: stages of halving size);
- ``compaction=False``: always run every entry, masked.

The gradient of a compacted scan is compacted too
(`autoloop.autodiff.scan_compacted_grad`): each entry's backward pass runs
its own trip count.

Sequences of different lengths (RETURNN's layout): with ``cond_dims=[B]``,
each tensor of `xs` is ``[frames, B, ...]`` (time-major, entries on axis 1),
and the body sees the frame ``[B, ...]`` of the entries still running.
A tensor the cond or body captures from around the scan whose leading axis
is the entries' (``lengths`` in ``state.t < lengths``) is carried with the
entries when its uses prove it per entry (`autoloop.control_flow.scan_captures`),
so it is compacted with the state. ``spatial_dim`` may also be one length
per entry (an int tensor of shape ``[B]``, RETURNN's dynamic size): entry
b then runs ``spatial_dim[b]`` frames, or fewer if its cond fails first.

    >>> ys, state, lengths = scan(body=lambda x, s: (s + x, s + x), initial=constant(0),
    ...                           xs=constant([1, 2, 3]), ys=TensorSpec([], int32))
    >>> ys.numpy(), state.numpy(), lengths.numpy()
    (array([1, 3, 6], dtype=int32), np.int32(6), np.int32(3))
"""

from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from autoloop import dtypes, nest
from autoloop.control_flow.composite import CompositeTensor
from autoloop.control_flow.loop_vars import LoopVars, check_iteration
from autoloop.control_flow.scan_arguments import (
    check_callable, describe, dims_text, entry_shape, frame_count, frame_shape, frames_of, merge_entries, templates)
from autoloop.control_flow.scan_captures import blocker, capture_entry_constants, carry_in_state, per_entry_captures
from autoloop.control_flow.scan_entries import entrywise_problem
from autoloop.control_flow.scan_by_while import scan_by_while
from autoloop.control_flow.scan_run import ScanPlan, frame_limit, run_scan
from autoloop.control_flow.tensor_array import TensorArray
from autoloop.ir import context, control_flow
from autoloop.ops import recording
from autoloop.ir.graph import Graph
from autoloop.ops.dispatch import convert, graph_value
from autoloop.ops.location import user_location
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor, eager

_COMPACTION = {False: "mask", True: "compact", "auto": "compact"}
_STATE_HINT = "give the initial value the shape it keeps in the loop ({label}: {shape}); scan keeps each state shape."


def scan(*, body: Callable[..., Any], initial: Any = None, xs: Any = None, ys: Any = None,
         cond: Callable[..., Any] | None = None, spatial_dim: Any = None, cond_dims: Any = None,
         cond_before_body: bool = True, max_seq_len: Any = None, return_tensor_arrays: bool = False,
         compaction: str = "auto", name: str | None = None) -> Any:
    """Run `body` over frames; returns ``(ys, final_state, lengths)``. See the module docstring.

    `body(x, state) -> (y, state)`; `cond(x, state)` returns a boolean, or
    booleans of shape `cond_dims`. `ys` holds per-frame templates
    (`TensorSpec`s or example tensors) in the structure `y` has; the frames
    come back stacked on a new axis 0, or as TensorArrays with
    `return_tensor_arrays`. `lengths` is int32 of shape `cond_dims` (a
    scalar without). Raises TypeError/ValueError naming the argument at
    fault.
    """
    if _per_entry(spatial_dim):
        return _scan_per_entry_lengths(body=body, initial=initial, xs=xs, ys=ys, cond=cond, lengths=spatial_dim,
                                       cond_dims=cond_dims, cond_before_body=cond_before_body, max_seq_len=max_seq_len,
                                       return_tensor_arrays=return_tensor_arrays, compaction=compaction, name=name)
    call = _ScanCall(body=body, initial=initial, xs=xs, ys=ys, cond=cond, spatial_dim=spatial_dim,
                     cond_dims=cond_dims, cond_before_body=cond_before_body, max_seq_len=max_seq_len,
                     return_tensor_arrays=return_tensor_arrays, compaction=compaction, name=name or "scan")
    graph = context.current_graph()
    if graph is not None:
        return call.results(call.build(graph).outputs, symbolic=True)
    return call.run_eagerly()


def _per_entry(spatial_dim) -> bool:
    """Whether spatial_dim gives one length per entry (RETURNN's dynamic sizes) rather than one number of frames."""
    if isinstance(spatial_dim, Tensor):
        return spatial_dim.shape.rank not in (0, None)
    return isinstance(spatial_dim, np.ndarray | list | tuple) and np.ndim(spatial_dim) > 0


def _scan_per_entry_lengths(*, body, initial, xs, ys, cond, lengths, cond_dims, cond_before_body, max_seq_len,
                            return_tensor_arrays, compaction, name):
    """`scan` with ``spatial_dim=lengths``, one length per entry: entry b runs ``lengths[b]`` frames (fewer if
    its cond fails first); a step counter per entry joins the state, and `lengths` is captured per entry."""
    from autoloop.ops.api import logical_and, zeros
    lengths = convert(lengths)
    if not lengths.dtype.is_integer:
        raise TypeError(f"scan: a per-entry spatial_dim must hold integer lengths, got {lengths.dtype.name}")
    if not cond_before_body:
        raise ValueError("scan: a per-entry spatial_dim (lengths) needs cond_before_body=True: an entry of length 0 "
                         "runs no frame")
    entries = entry_shape(cond_dims if cond_dims is not None else lengths.shape.as_list())
    merge_entries(entries, lengths.shape, entries.rank, "spatial_dim (one length per entry)")
    check_callable(body, "body")

    def test(x, state):
        user_state, step = state if initial is not None else (None, state)
        running = step < lengths
        return running if cond is None else logical_and(running, cond(x, user_state))

    def step_body(x, state):
        user_state, step = state if initial is not None else (None, state)
        y, new_state = body(x, user_state)
        return y, ((new_state, step + 1) if initial is not None else step + 1)

    counter = zeros(lengths.shape if lengths.shape.is_fully_defined() else _shape_of(lengths), dtypes.int32)
    start = (initial, counter) if initial is not None else counter
    frames, state, ran = scan(body=step_body, initial=start, xs=xs, ys=ys, cond=test,
                              cond_dims=entries.as_list(), max_seq_len=max_seq_len,
                              return_tensor_arrays=return_tensor_arrays, compaction=compaction, name=name)
    return frames, state[0] if initial is not None else None, ran


def _shape_of(tensor):
    from autoloop.ops.api import shape
    return shape(tensor)


class _ScanCall:
    """One call of `scan`: its arguments checked and flattened, and the ways to run it."""

    def __init__(self, *, body, initial, xs, ys, cond, spatial_dim, cond_dims, cond_before_body, max_seq_len,
                 return_tensor_arrays, compaction, name):
        check_callable(body, "body")
        if cond is not None:
            check_callable(cond, "cond")
        for flag, what in ((cond_before_body, "cond_before_body"), (return_tensor_arrays, "return_tensor_arrays")):
            if not isinstance(flag, bool):
                raise TypeError(f"scan: {what} must be True or False, got {flag!r}")
        if not isinstance(compaction, bool) and compaction != "auto":
            raise ValueError(f"scan: compaction must be True, False or 'auto', got {compaction!r}")
        if cond is None and spatial_dim is None and xs is None:
            raise ValueError(
                "scan needs to know when to stop: pass cond (a function of (x, state) returning booleans), "
                "spatial_dim (a number of frames) or xs (tensors whose axis 0 holds the frames); got none of them")
        if cond_dims is not None and cond is None:
            raise ValueError(f"scan: cond_dims={dims_text(cond_dims)} is the shape of cond's result, but no cond "
                             f"was given")
        self.body, self.cond, self.name = body, cond, name
        self.cond_before_body, self.return_tensor_arrays = cond_before_body, return_tensor_arrays
        self.compaction = _COMPACTION[compaction]
        self.compaction_required = compaction is True
        self.entries = entry_shape(cond_dims)
        self.spatial_dim = frame_count(spatial_dim, "spatial_dim")
        self.max_seq_len = frame_count(max_seq_len, "max_seq_len")
        self.xs = frames_of(xs)
        self.xs_components = self.xs.components() if self.xs is not None else []
        self.state = LoopVars(initial, None, root="initial") if initial is not None else None
        self.ys, self.ys_labels, self.templates = templates(ys)
        self._learned = None  # the state as the traced body returned it
        self._carried = 0  # captured per-entry tensors the Scan node carries after the state (scan_captures)
        if self.entries.rank:
            self._check_entries()
        self.invariants = [self._invariant(c.shape) for c in self._state_components()]

    # -- the structures ------------------------------------------------------------------
    def _state_components(self) -> list:
        return self.state.components() if self.state is not None else []

    def _state_labels(self) -> list:
        return self.state.component_labels() if self.state is not None else []

    def _invariant(self, shape: TensorShape) -> TensorShape:
        """A state value's shape inside the loop: with cond_dims, the entry axis is left unknown."""
        return TensorShape([None]).concatenate(shape[1:]) if self.entries.rank else shape

    def _check_entries(self) -> None:
        """With cond_dims, every state tensor and frame holds the entries on its leading axes."""
        rank, entries = self.entries.rank, self.entries
        if self.state is None:
            raise ValueError("scan: with cond_dims, the state (initial) must hold the entries on axis 0; it is None")
        for label, leaf in zip(self.state.labels, self.state.leaves):
            if isinstance(leaf, CompositeTensor):
                raise TypeError(f"scan: with cond_dims every state value holds the entries on axis 0, but "
                                f"{label} is a {type(leaf).__name__}; use cond_dims=None")
        for label, component in zip(self._state_labels(), self._state_components()):
            entries = merge_entries(entries, component.shape, rank, f"the state value {label}")
        for label, (_, frame) in zip(self.ys_labels, self.templates):
            entries = merge_entries(entries, frame, rank, f"the frame template {label}")
        for label, component in zip(self.xs.component_labels() if self.xs is not None else [], self.xs_components):
            entries = merge_entries(entries, component.shape[1:], rank,
                                    f"{label} (xs with cond_dims hold [frames, *entries, ...])")
        self.entries = entries
        self.templates = [(dtype, entries.concatenate(frame[rank:]).merge_with(frame)) for dtype, frame in self.templates]

    # -- checking what cond and body return ----------------------------------------------------
    def _test(self, result) -> Tensor:
        test = result if isinstance(result, Tensor) else convert(result)
        if test.dtype is not dtypes.bool_:
            raise TypeError(f"scan: cond must return booleans, got a {test.dtype.name} tensor of shape {test.shape}")
        rank = test.shape.rank
        if not self.entries.rank and rank not in (0, None):
            raise ValueError(
                f"scan: cond returned booleans of shape {test.shape} but cond_dims is None: a scan's cond returns "
                f"one boolean, or pass cond_dims={test.shape.as_list()} to stop each entry on its own")
        entries = self._invariant(self.entries)
        if self.entries.rank and not (rank == self.entries.rank and test.shape.is_compatible_with(entries)):
            raise ValueError(f"scan: cond returned booleans of shape {test.shape}, expected cond_dims {self.entries}")
        return test

    def _split(self, result):
        """The body's ``(y, state)``: the frames as tensors, the state flattened, both checked."""
        if not isinstance(result, tuple | list) or nest.is_namedtuple(result) or len(result) != 2:
            raise TypeError(f"scan: body must return a pair (y, state), got {describe(result)}")
        y, new_state = result
        frames = self._check_frames(y)
        if self.state is None:
            if new_state is not None:
                raise ValueError(f"scan: body returned a state ({describe(new_state)}) but initial is None; "
                                 f"pass the initial state as initial")
            return frames, None
        after = check_iteration(self.state, new_state, self.invariants, _STATE_HINT)
        return frames, after

    def _check_frames(self, y) -> list:
        if self.ys is None:
            if y is not None:
                raise ValueError(f"scan: body returned a frame y ({describe(y)}) but ys is None; pass ys, a "
                                 f"template (TensorSpec) per frame value, to collect the frames")
            return []
        try:
            nest.assert_same_structure(self.ys, y, check_types=False)
        except (ValueError, TypeError):
            raise ValueError(
                f"scan: body's y must have the structure of ys: ys is "
                f"{nest.map_structure_up_to_leaves(self.ys)!r}, y is {nest.map_structure_up_to_leaves(y)!r}") from None
        frames = []
        for label, (dtype, shape), leaf in zip(self.ys_labels, self.templates, nest.flatten(y)):
            if leaf is None:
                raise ValueError(f"scan: the body's frame for {label} is None; it must be a tensor like its template "
                                 f"({dtype.name} of shape {shape})")
            frame = convert(leaf, dtype if isinstance(leaf, bool | int | float) else None)
            if frame.dtype is not dtype:
                raise TypeError(f"scan: the body's frame for {label} is {frame.dtype.name} but its template is "
                                f"{dtype.name}; cast it (autoloop.cast) or change the template")
            if not frame.shape.is_compatible_with(self._invariant(shape)):
                raise ValueError(f"scan: the body's frame for {label} has shape {frame.shape}, which does not "
                                 f"match its template {shape}")
            frames.append(frame)
        return frames

    # -- eagerly ------------------------------------------------------------------------------
    def run_eagerly(self):
        if recording.anywhere() and recording.active():  # a GradientTape records: it must see every op
            return self.run_by_while()
        compaction = "compact" if self.compaction_required and self.entries.rank else "mask"
        if compaction == "compact":
            self._prove_entrywise()
        current = {"state": self.state}  # the state as the body last returned it (what it learned)

        def arguments(arrays):
            x = self.xs.pack([eager(a) for a in arrays[:len(self.xs_components)]]) if self.xs else None
            state = current["state"]
            if state is not None:
                state = state.pack([eager(a) for a in arrays[len(self.xs_components):]])
            return x, state

        def cond(*arrays):
            return self._test(self.cond(*arguments(arrays))).numpy()

        def body(*arrays):
            frames, after = self._split(self.body(*arguments(arrays)))
            if after is not None:
                current["state"] = LoopVars(nest.pack_sequence_as(self.state.structure, after.leaves))
            components = after.components() if after is not None else []
            return [t._numpy for t in frames + components]

        outputs = run_scan(self.plan(compaction), cond, body, [c._numpy for c in self._state_components()],
                           [c._numpy for c in self.xs_components], _numpy_of(self.spatial_dim),
                           _numpy_of(self.max_seq_len))
        learned = current["state"]
        return self.results([eager(v) for v in outputs], symbolic=False, learned=learned)

    def run_by_while(self):
        """The scan as a `while_loop` of ops (`autoloop.control_flow.scan_by_while`), eagerly."""
        def unpack(x, state):
            return (self.xs.pack(x) if self.xs is not None else None,
                    self.state.pack(state) if self.state is not None else None)

        def cond(x, state):
            return self._test(self.cond(*unpack(x, state)))

        def body(x, state):
            frames, after = self._split(self.body(*unpack(x, state)))
            return frames, after.components() if after is not None else []

        limit = frame_limit([c._numpy for c in self.xs_components], _numpy_of(self.spatial_dim),
                            _numpy_of(self.max_seq_len))
        outputs = scan_by_while(cond, body, self._state_components(), self.xs_components,
                                None if limit is None else convert(np.int32(limit)), has_cond=self.cond is not None,
                                cond_before_body=self.cond_before_body, entry_rank=self.entries.rank,
                                ys_specs=self.templates, return_tensor_arrays=self.return_tensor_arrays,
                                name=self.name)
        return self.results(outputs, symbolic=False)

    def _prove_entrywise(self) -> None:
        """Eagerly with compaction=True: trace cond and body once, to check they treat entries independently."""
        scratch = Graph(f"{self.name}_check")
        with context.building(scratch):
            self.build(scratch)

    # -- in a graph --------------------------------------------------------------------------
    def build(self, outer: Graph):
        """Trace cond and body, add the Scan node to `outer`; returns the node."""
        initial = [graph_value(outer, c) for c in self._state_components()]
        xs = [graph_value(outer, c) for c in self.xs_components]
        cond_graph = Graph(f"{self.name}_cond", outer)
        x, state = self._parameters(cond_graph, xs, initial)
        if self.cond is not None:
            with context.building(cond_graph):
                cond_graph.outputs = [graph_value(cond_graph, self._test(self.cond(x, state)))]
        body_graph = Graph(f"{self.name}_body", outer)
        x, state = self._parameters(body_graph, xs, initial)
        with context.building(body_graph):
            frames, after = self._split(self.body(x, state))
            components = after.components() if after is not None else []
            body_graph.outputs = [graph_value(body_graph, t) for t in frames + components]
        self._learned = after
        limits = {key: [graph_value(outer, t)] if t is not None else []
                  for key, t in (("spatial_dim", self.spatial_dim), ("max_seq_len", self.max_seq_len))}
        inputs, sizes = control_flow.join("Scan", initial=initial, xs=xs, cond_captures=cond_graph.captures,
                                          body_captures=body_graph.captures, **limits)
        attrs = dict(cond=cond_graph, body=body_graph, **sizes, num_ys=len(frames), has_cond=self.cond is not None,
                     cond_before_body=self.cond_before_body, cond_dims=self.entries, compaction="mask",
                     return_tensor_arrays=self.return_tensor_arrays,
                     ys_frames=tuple(frame_shape(f.shape, t) for f, (_, t) in zip(frames, self.templates)),
                     names=tuple(self._state_labels()), ys_names=tuple(self.ys_labels))
        draft = types.SimpleNamespace(op="Scan", attrs=attrs, inputs=tuple(inputs))
        if self.entries.rank and self.compaction != "mask" and entrywise_problem(draft) is not None:
            capture_entry_constants(draft, outer)
            carried = per_entry_captures(draft)  # read from around the scan, but the entries' own: they follow them
            if carried:
                carry_in_state(draft, carried)
            attrs["names"] += tuple(f"captured {v.name}" for v in carried)
            self._carried = len(carried)
        attrs["compaction"] = self._compaction_for(draft)
        specs = control_flow.lookup("Scan").infer(draft)
        return outer.add_node("Scan", draft.inputs, attrs, specs, location=user_location(), name=self.name)

    def _parameters(self, graph: Graph, xs, initial):
        """The sub-graph's placeholders for one frame of xs and for the state, packed as the user's structures."""
        frames = [Tensor(value=graph.add_input(v.dtype, self._invariant(v.shape[1:]), name="x")) for v in xs]
        params = [Tensor(value=graph.add_input(v.dtype, invariant, name="state"))
                  for v, invariant in zip(initial, self.invariants)]
        x = self.xs.pack(frames) if self.xs is not None else None
        state = self.state.pack(params) if self.state is not None else None
        return x, state

    def _compaction_for(self, draft) -> str:
        if not self.entries.rank or self.compaction == "mask":
            return "mask"
        problem = entrywise_problem(draft)
        if problem is None:
            if self.compaction_required:  # backend="jax" compacts then whatever its cost rule says (scan_form)
                draft.attrs["_compaction_required"] = True
            return self.compaction
        if self.compaction_required:
            raise ValueError(f"scan(compaction=True) needs a body and cond that treat entries independently, "
                             f"but {problem}; or pass compaction=False (or 'auto', which masks then)")
        # For --explain and the long-tail warning (scan_run): what mixes entries even with the captures of the
        # entries' size taken per entry, when that is another node.
        draft.attrs["_masked_because"] = blocker(draft) or problem
        return "mask"

    # -- results ---------------------------------------------------------------------------------
    def plan(self, compaction: str) -> ScanPlan:
        return ScanPlan(
            has_cond=self.cond is not None, cond_before_body=self.cond_before_body, entry_rank=self.entries.rank,
            compaction=compaction, ys_dtypes=tuple(np.dtype(d.as_numpy_dtype) for d, _ in self.templates),
            ys_frames=tuple(shape.as_tuple() for _, shape in self.templates),
            return_tensor_arrays=self.return_tensor_arrays, ys_labels=tuple(self.ys_labels),
            state_labels=tuple(self._state_labels()))

    def results(self, outputs, symbolic: bool, learned=None):
        """``(ys, final_state, lengths)`` from the Scan's outputs (graph values or eager tensors)."""
        if symbolic:
            outputs, learned = [Tensor(value=v) for v in outputs], self._learned
        num_ys = len(self.templates)
        frames = []
        for tensor, (dtype, shape) in zip(outputs[:num_ys], self.templates):
            if self.return_tensor_arrays:
                tensor = TensorArray(dtype, dynamic_size=True, element_shape=shape, flow=tensor)
            frames.append(tensor)
        ys = nest.pack_sequence_as(self.ys, frames) if self.ys is not None else None
        state = None
        if self.state is not None:
            state = self.state.pack(outputs[num_ys:len(outputs) - 1 - self._carried])
            for leaf, taught in zip(nest.flatten(state), learned.leaves if learned is not None else []):
                if hasattr(leaf, "learn_from"):
                    leaf.learn_from(taught)
        return ys, state, outputs[-1]


def _numpy_of(tensor):
    return None if tensor is None else tensor.numpy()
