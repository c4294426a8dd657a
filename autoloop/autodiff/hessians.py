"""Second derivatives: `hessians` (reverse over reverse) and `hvp` (forward over reverse).

- ``hessians(ys, xs)`` inside a traced function (or a TF1 graph): for each x,
  the Jacobian of the gradient of ``sum(ys)`` with respect to x, shape
  ``x.shape + x.shape``, as ``tf.hessians``: one backward pass of the
  gradient per entry of x, in one row loop (`autoloop.autodiff.jacobian`).
- ``hvp(fn, primals, tangents)``: ``H v`` without forming ``H``: the
  gradient of ``fn`` computed inside a `ForwardAccumulator`, so one
  forward-mode sweep over the gradient's graph (its loops carry tangents
  beside their state). Eagerly or traced.
"""

from __future__ import annotations

from typing import Any

from autoloop.autodiff.forward import ForwardAccumulator
from autoloop.autodiff.graph_backprop import tensor_list, graph_gradients
from autoloop.autodiff.jacobian import UnconnectedGradients, jacobian
from autoloop.autodiff.tape import GradientTape
from autoloop.ir import context
from autoloop.ops.creation_ops import zeros_like
from autoloop.ops.dispatch import convert


def hessians(ys: Any, xs: Any, gate_gradients: bool = False, aggregation_method: Any = None,
             colocate_gradients_with_ops: bool = False, name: str = "hessians") -> list[Any]:
    """The Hessian of ``sum(ys)`` for each of `xs` (a list, as `gradients`); None where `ys` does not
    depend on an x. Inside a traced function; eagerly, nest two `GradientTape`s."""
    graph = context.current_graph()
    if graph is None:
        raise RuntimeError("autoloop.hessians is not supported when eager execution is enabled: nest two "
                           "GradientTapes (the outer one's jacobian of the inner one's gradient), or call "
                           "hessians inside an @autoloop.function")
    results: list[Any] = []
    for x in tensor_list(xs, "xs"):
        (gradient,) = graph_gradients(graph, ys, [x])
        if gradient is None:
            results.append(None)
            continue
        (hessian,) = jacobian(lambda seed, g=gradient, x=x: graph_gradients(graph, [g], [x], [seed]), gradient,
                              [x], UnconnectedGradients.ZERO, vectorize=False)
        results.append(hessian)
    return results


def hvp(fn, primals, tangents):
    """``H v``: the Hessian of the scalar ``fn(*primals)`` times `tangents` (one per primal).

        autoloop.autodiff.hvp(lambda x: autoloop.reduce_sum(x ** 3), [x], [v])    # 6 x v
    """
    primals = [convert(p) for p in primals]
    with ForwardAccumulator(primals, list(tangents)) as accumulator:
        with GradientTape() as tape:
            tape.watch(primals)
            value = fn(*primals)
        gradients = tape.gradient(value, primals, unconnected_gradients=UnconnectedGradients.ZERO)
    return [t if t is not None else zeros_like(p)
            for t, p in zip(accumulator.jvp(gradients), primals)]
