"""The text form of a lowered graph (``autoloop graph --lowered``).

Each frame is a block nested in the frame around it, placed where its
first node comes; inside, nodes are listed in the order lowering made them.
An input made further down (a ``NextIteration`` read by a ``Merge``) is a
back-edge and says so; ordering edges are marked ``^`` as in the functional
form::

    frame while (parallel_iterations=10) {
      while/Enter:0: int32[] = Enter(Const:0) [is_constant=False, loop_var='i']
      while/Merge:0: int32[] = Merge(while/Enter:0, while/NextIteration:0 <back edge>) [loop=True, ...]
"""

from __future__ import annotations

from autoloop.execute.dataflow.form import Frame
from autoloop.ir.graph import op_attrs_of
from autoloop.ir.printer import format_attr

_HIDDEN_ATTRS = {"frame_name", "parallel_iterations"}  # shown once, on the frame's header


def format_dataflow(graph) -> str:
    blocks: dict = {graph.root: []}  # frame -> its items: nodes and inner frames, in order

    def block(frame):
        if frame not in blocks:
            blocks[frame] = []
            block(frame.parent).append(frame)
        return blocks[frame]

    for node in graph.nodes:
        block(node.frame).append(node)
    position = {id(node): k for k, node in enumerate(graph.nodes)}
    params = ", ".join(f"{v.name}: {_type(v)}" for v in graph.inputs)
    lines = [f"dataflow graph {graph.name}({params}) {{"]
    _write(blocks, graph.root, position, "  ", lines)
    lines.append(f"  return {', '.join(v.name for v in graph.outputs)}".rstrip())
    lines.append("}")
    return "\n".join(lines)


def _write(blocks, frame, position, indent, lines):
    for item in blocks[frame]:
        if isinstance(item, Frame):
            lines.append(f"{indent}frame {item.name} (parallel_iterations={item.parallel_iterations}) {{")
            _write(blocks, item, position, indent + "  ", lines)
            lines.append(f"{indent}}}")
        elif item.op != "Placeholder":
            lines.append(indent + _node_line(item, position))


def _node_line(node, position) -> str:
    outs = ", ".join(f"{v.name}: {_type(v)}" for v in node.outputs) or node.name
    args = [v.name + (" <back edge>" if position[id(v.node)] > position[id(node)] else "") for v in node.inputs]
    args += [f"^{before.name}" for before in node.control_inputs]
    attrs = ", ".join(f"{k}={format_attr(v)}" for k, v in op_attrs_of(node.attrs).items()
                      if k not in _HIDDEN_ATTRS and not _is_graph(v))
    return f"{outs} = {node.op}({', '.join(args)})" + (f" [{attrs}]" if attrs else "")


def _type(value) -> str:
    return f"{value.dtype.name}{value.shape}"


def _is_graph(value) -> bool:
    return hasattr(value, "nodes") and hasattr(value, "captures")
