"""The graph IR: `Graph`, `Node`, `Value`, the build context and the verifier."""

from autoloop.ir.graph import Graph, Node, Value
from autoloop.ir.context import building, current_graph

__all__ = ["Graph", "Node", "Value", "building", "current_graph"]
