"""The JAX backend: a traced graph lowered to ``jax.numpy``/``jax.lax`` and compiled by XLA.

``autoloop.function(fn, backend="jax")`` runs each trace of `fn` through
here (needs ``pip install 'autoloop[jax]'``):

1. `analysis.ProgramFacts`: what the graph says before it runs: the
   run-time checks (`checks`), the buffer each list gets (`layouts`, with
   the lengths lists reach in `lengths` and `autoloop.ir.trips`), and TF1
   state, which it refuses;
2. `lowering.Lowering`: the graph interpreted under ``jax.jit``'s tracing,
   op by op through the registry's ``"jax"`` kernels (`kernels`; `buffers`
   for lists, `gradient_buffers` for what reverse mode saves) and the
   control-flow rules (`control_flow`: ``While`` ->
   ``lax.while_loop``, ``Cond`` -> ``lax.cond``; `scan`: ``Scan`` ->
   ``lax.scan`` or a masked ``lax.while_loop``);
3. `program.JaxProgram`: the jitted program, called per input signature,
   raising the numpy executor's errors for failed checks after the call.

Gradients need nothing of their own: autoloop's reverse mode is a graph
transformation (`autoloop.autodiff`), so the backward loops are ordinary
``While`` nodes and their saved values stacks (preallocated buffers here).
That is how the gradient of a loop with a data-dependent trip count runs
compiled on XLA, which ``jax.grad`` of ``lax.while_loop`` refuses; it needs a
bound on the loop's iterations: a counter the condition bounds (``for i in
range(n)``, ``while ... and k < n``), or a ``capacity`` (checked as the loop
runs: more iterations are an error, never a shorter loop), or in a program
safe to run twice one it grows itself (`growth`).

What XLA cannot compile (a loop variable whose shape changes, a list with
no bound, an array whose shape depends on values) is a `BackendError` at
trace time, naming the user's line and the fix.

This package is imported only when a backend="jax" function is first
traced; ``import autoloop`` never imports JAX.
"""

from autoloop.backends.jax.program import JaxProgram, compile_graph

__all__ = ["JaxProgram", "compile_graph"]
