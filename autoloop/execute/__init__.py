"""Executors: the compiled numpy executor (the default), the reference interpreter, and `dataflow` (what a compat.v1 Session runs)."""

from autoloop.execute.executor import CompiledGraph

__all__ = ["CompiledGraph"]
