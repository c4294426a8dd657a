"""Executors: the compiled numpy executor (default) and, later, the dataflow one."""

from autoloop.execute.executor import CompiledGraph

__all__ = ["CompiledGraph"]
