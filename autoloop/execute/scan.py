"""Running a ``Scan`` node: the reference interpreter's rule and the numpy code generator's.

Both hand the node's `ScanPlan` and its cond and body to
`autoloop.control_flow.scan_run.run_scan`, the one frame loop (masking,
compaction, stacking); they differ in how the sub-graphs run. The
interpreter runs them node by node; the generated code defines them as two
nested Python functions with the sub-graphs inlined, then calls the loop::

    # Scan scan
    def scan_cond3(a5, a6):
        v7 = (a5 < p1)
        return v7
    def scan_body4(a8, a9):
        ...
        return (v10, v11)
    v12, v13, v14, = run_scan(plan0, scan_cond3, scan_body4, [p0], [], None, None)
"""

from __future__ import annotations

import numpy as np

from autoloop.control_flow.scan_run import ScanPlan, run_scan
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
        ys_labels=tuple(attrs.get("ys_names", ())), state_labels=tuple(attrs.get("names", ())))


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
