"""Running a ``Scan`` node: the reference interpreter's rule and the numpy code generator's.

The interpreter hands the node's `ScanPlan` and its cond and body (run node
by node) to `autoloop.control_flow.scan_run.run_scan`, the frame loop that
eager mode uses too. The code generator writes a scan with one scalar
condition as an inline ``while`` loop, as it writes a ``While`` (no call
per frame), sharing only the frame limit and the final stacking with
`scan_run`::

    # Scan scan
    sv3 = c0
    limit4 = frame_limit5([p0], None, None)
    step6 = 0
    frames7 = []
    while step6 < limit4:
        x8 = p0[step6]
        v9 = (sv3 + x8)
        frames7.append(sv3)
        sv3 = v9
        step6 += 1
    v10 = stack_frames11(plan12, 0, frames7)

A batched scan (cond_dims) defines cond and body as two nested functions
with the sub-graphs inlined and calls `run_scan`, whose masking and
compaction are the same for every mode.
"""

from __future__ import annotations

import numpy as np

from autoloop.control_flow.scan_run import ScanPlan, frame_limit, run_scan, scalar_test, stack_frames
from autoloop.execute.errors import raise_for_node
from autoloop.ir import control_flow


def plan_of(node) -> ScanPlan:
    """The static facts of the Scan `node` that the frame loop needs."""
    attrs = node.attrs
    frames = attrs["body"].outputs[:attrs["num_ys"]]
    return ScanPlan(
        has_cond=attrs["has_cond"], cond_before_body=attrs["cond_before_body"],
        entry_rank=attrs["cond_dims"].rank, compaction=attrs["compaction"],
        ys_dtypes=tuple(np.dtype(y.dtype.as_numpy_dtype) for y in frames),
        ys_frames=tuple(frame.as_tuple() for frame in attrs["ys_frames"]),
        return_tensor_arrays=attrs["return_tensor_arrays"],
        ys_labels=tuple(attrs.get("ys_names", ())), state_labels=tuple(attrs.get("names", ())),
        masked_because=attrs.get("_masked_because"))


# -- the reference interpreter --------------------------------------------------------------
class _InSubgraph(Exception):
    """An error raised by a node of the cond or body: already reported as that node's."""

    def __init__(self, error: Exception):
        super().__init__()
        self.error = error


def interpret_scan(node, inputs: list, run_graph) -> list:
    """Reference rule of ``Scan``: the frame loop, with cond and body run by the interpreter."""
    groups = control_flow.split(node, inputs)
    cond_graph, body_graph = node.attrs["cond"], node.attrs["body"]
    cond_captures, body_captures = list(groups.cond_captures), list(groups.body_captures)

    def run(graph, args):
        try:
            return run_graph(graph, args)
        except Exception as error:  # noqa: BLE001 - passed on unchanged below
            raise _InSubgraph(error) from None

    def cond(*args):
        return run(cond_graph, list(args) + cond_captures)[0] if cond_graph.outputs else True

    def body(*args):
        return run(body_graph, list(args) + body_captures)

    spatial_dim = groups.spatial_dim[0] if groups.spatial_dim else None
    max_seq_len = groups.max_seq_len[0] if groups.max_seq_len else None
    try:
        return run_scan(plan_of(node), cond, body, list(groups.initial), list(groups.xs), spatial_dim, max_seq_len)
    except _InSubgraph as inside:
        raise inside.error from None
    except Exception as error:  # noqa: BLE001 - the loop's own errors are the Scan node's
        raise_for_node(node, error)


# -- the numpy code generator ------------------------------------------------------------------
def write_scan(gen, node, indent: int) -> None:
    """An inline loop for one scalar condition; a call of the frame loop for a batched one."""
    if node.attrs["cond_dims"].rank:
        _write_batched(gen, node, indent)
    else:
        _write_single(gen, node, indent)


def _write_single(gen, node, indent: int) -> None:
    """A ``while`` loop over the frames with cond and body inlined; see the module docstring."""
    groups = control_flow.split(node, [gen.names[v] for v in node.inputs])
    cond, body, num_ys = node.attrs["cond"], node.attrs["body"], node.attrs["num_ys"]
    state = [gen.fresh("sv") for _ in groups.initial]
    limit, step = gen.fresh("limit"), gen.fresh("step")
    frames = [gen.fresh("frames") for _ in range(num_ys)]
    spatial_dim = groups.spatial_dim[0] if groups.spatial_dim else "None"
    max_seq_len = groups.max_seq_len[0] if groups.max_seq_len else "None"
    bounded = bool(groups.xs or groups.spatial_dim or groups.max_seq_len)  # else the limit is None
    gen.line(indent, f"# Scan {node.name}")
    gen.assign(indent, state, list(groups.initial), node)
    gen.line(indent, f"{limit} = {gen.bind(frame_limit, 'frame_limit')}([{', '.join(groups.xs)}], {spatial_dim}, "
                     f"{max_seq_len})", node)
    gen.line(indent, f"{step} = 0")
    for name in frames:
        gen.line(indent, f"{name} = []")
    gen.line(indent, f"while {step} < {limit}:" if bounded else "while True:")
    frame = [gen.fresh("x") for _ in groups.xs]
    for name, values in zip(frame, groups.xs):
        gen.line(indent + 1, f"{name} = {values}[{step}]", node)
    if node.attrs["has_cond"] and node.attrs["cond_before_body"]:
        _write_test(gen, node, cond, frame + state + list(groups.cond_captures), indent + 1)
    results = gen.graph_body(body, indent + 1, frame + state + list(groups.body_captures))
    for name, result in zip(frames, results[:num_ys]):
        gen.line(indent + 1, f"{name}.append({result})")
    gen.assign(indent + 1, state, results[num_ys:], node)
    gen.line(indent + 1, f"{step} += 1")
    if node.attrs["has_cond"] and not node.attrs["cond_before_body"]:
        if bounded:  # no test after the last frame: its result would not matter
            gen.line(indent + 1, f"if {step} >= {limit}: break")
        _write_test(gen, node, cond, frame + state + list(groups.cond_captures), indent + 1)
    plan = gen.bind(plan_of(node), "plan")
    stacked = [gen.fresh() for _ in frames]
    for index, (name, items) in enumerate(zip(stacked, frames)):
        gen.line(indent, f"{name} = {gen.bind(stack_frames, 'stack_frames')}({plan}, {index}, {items})", node)
    lengths = gen.fresh()
    gen.line(indent, f"{lengths} = {gen.bind(np.int32, 'int32')}({step})")
    for value, name in zip(node.outputs, stacked + state + [lengths]):
        gen.names[value] = name


def _write_test(gen, node, cond, inputs, indent: int) -> None:
    (test,) = gen.graph_body(cond, indent, inputs)
    if cond.outputs[0].shape.rank is None:  # known to be one boolean only when it runs
        test = f"{gen.bind(scalar_test, 'scalar_test')}({test})"
    gen.line(indent, f"if not {test}: break", node)


def _write_batched(gen, node, indent: int) -> None:
    """Two nested functions (cond and body, sub-graphs inlined) and one call of the frame loop."""
    groups = control_flow.split(node, [gen.names[v] for v in node.inputs])
    leading = len(groups.xs) + len(groups.initial)
    gen.line(indent, f"# Scan {node.name}")
    cond_fn = _write_function(gen, "scan_cond", node.attrs["cond"], leading, groups.cond_captures, indent)
    body_fn = _write_function(gen, "scan_body", node.attrs["body"], leading, groups.body_captures, indent)
    spatial_dim = groups.spatial_dim[0] if groups.spatial_dim else "None"
    max_seq_len = groups.max_seq_len[0] if groups.max_seq_len else "None"
    outputs = [gen.fresh() for _ in node.outputs]
    call = (f"{gen.bind(run_scan, 'run_scan')}({gen.bind(plan_of(node), 'plan')}, {cond_fn}, {body_fn}, "
            f"[{', '.join(groups.initial)}], [{', '.join(groups.xs)}], {spatial_dim}, {max_seq_len})")
    gen.line(indent, f"{', '.join(outputs)}, = {call}", node)
    for value, name in zip(node.outputs, outputs):
        gen.names[value] = name


def _write_function(gen, prefix: str, graph, leading: int, captures, indent: int) -> str:
    """``def name(a0, a1, ...):`` running `graph`; its captures are the enclosing code's names."""
    name = gen.fresh(prefix)
    params = [gen.fresh("a") for _ in range(leading)]
    gen.line(indent, f"def {name}({', '.join(params)}):")
    results = gen.graph_body(graph, indent + 1, params + list(captures))
    if prefix == "scan_cond":
        gen.line(indent + 1, f"return {results[0]}" if results else "return True")
    else:
        gen.line(indent + 1, f"return ({''.join(r + ', ' for r in results)})")
    return name
