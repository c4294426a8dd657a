"""A readable text form of a graph (what ``autoloop graph`` prints).

Ordering edges are listed after a node's inputs, marked ``^`` as in
TensorFlow: ``PrintV2_1(Mul:0, ^PrintV2)`` runs after ``PrintV2``.
"""

from __future__ import annotations


def format_graph(graph, indent: str = "") -> str:
    lines = []
    params = ", ".join(f"{v.name}: {_type(v)}" for v in graph.inputs)
    lines.append(f"{indent}graph {graph.name}({params}) {{")
    for node in graph.nodes:
        if node.op == "Placeholder":
            continue
        outs = ", ".join(f"{v.name}: {_type(v)}" for v in node.outputs) or node.name  # no outputs: its name
        args = ", ".join([v.name for v in node.inputs] + [f"^{n.name}" for n in node.control_inputs])
        attrs = ", ".join(f"{k}={format_attr(v)}" for k, v in node.attrs.items() if not _is_graph(v))
        attrs = f" [{attrs}]" if attrs else ""
        lines.append(f"{indent}  {outs} = {node.op}({args}){attrs}")
        for key, sub in node.attrs.items():
            if _is_graph(sub):
                lines.append(f"{indent}    {key}:")
                lines.append(format_graph(sub, indent + "      "))
    results = ", ".join(v.name for v in graph.outputs)
    lines.append(f"{indent}  return {results}")
    lines.append(f"{indent}}}")
    return "\n".join(lines)


def _type(value) -> str:
    return f"{value.dtype.name}{value.shape}"


def _is_graph(value) -> bool:
    return hasattr(value, "nodes") and hasattr(value, "captures")


def format_attr(value) -> str:
    """An attribute as the text form shows it: small arrays in full, large ones by dtype and shape."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "ndim"):
        if value.size > 8:
            return f"<{value.dtype}{list(value.shape)}>"
        return repr(value.tolist())
    return repr(value)
