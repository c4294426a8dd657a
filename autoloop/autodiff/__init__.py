"""Reverse-mode gradients as graph -> graph transformations (and an eager tape).

- `gradients(ys, xs, grad_ys=None)` inside a traced function: the backward
  pass is added to the graph being traced (`graph_backprop`);
- `GradientTape`: records the ops run eagerly inside its block, or marks
  the nodes traced there, and differentiates them (`tape`).

Each op's rule is written beside its kernel (`autoloop.ops.registry`);
``While`` and ``Cond`` rules are here (`while_grad`, `checkpoint`,
`cond_grad`) and named by their declarations in `autoloop.ir.control_flow`.
"""

from autoloop.autodiff.custom_gradient import custom_gradient, recompute_grad
from autoloop.autodiff.forward import ForwardAccumulator, jvp
from autoloop.autodiff.graph_backprop import gradients
from autoloop.autodiff.hessians import hessians, hvp
from autoloop.autodiff.jacobian import UnconnectedGradients
from autoloop.autodiff.tape import GradientTape

__all__ = ["ForwardAccumulator", "GradientTape", "UnconnectedGradients", "custom_gradient", "gradients", "hessians",
           "hvp", "jvp", "recompute_grad"]
