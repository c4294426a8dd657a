"""The graph IR: `Graph`, `Node`, `Value` and the build context (`graph`, `context`);
the control-flow registry (`control_flow`), effects (`effects`), edits (`rewrite`)
and the verifier (`verify`)."""

from autoloop.ir.graph import Graph, Node, Value
from autoloop.ir.context import building, current_graph

__all__ = ["Graph", "Node", "Value", "building", "current_graph"]
