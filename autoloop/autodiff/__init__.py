"""Derivatives as graph -> graph transformations (and eager recorders).

Reverse mode:

- `gradients(ys, xs, grad_ys=None)` inside a traced function: the backward
  pass is added to the graph being traced (`graph_backprop`);
- `GradientTape`: records the ops run eagerly inside its block, or marks
  the nodes traced there, and differentiates them (`tape`); its `jacobian`
  and `batch_jacobian` loop over the rows (`jacobian`);
- `custom_gradient`, `recompute_grad` (`custom_gradient`).

Forward mode: `ForwardAccumulator` and `jvp` (`forward`, one sweep over the
IR through `jvp_rules`; ``While``/``Cond``/``Scan`` in `control_flow_jvp`).
Second order: `hessians`, `hvp` (`hessians`).

Each op's rules are written beside its kernel (`autoloop.ops.registry`);
the control-flow ops' are here (`while_grad`, `checkpoint`, `cond_grad`,
`scan_grad`, `control_flow_jvp`) and named by their declarations in
`autoloop.ir.control_flow`.
"""

from autoloop.autodiff.custom_gradient import custom_gradient, recompute_grad
from autoloop.autodiff.forward import ForwardAccumulator, jvp
from autoloop.autodiff.graph_backprop import gradients
from autoloop.autodiff.hessians import hessians, hvp
from autoloop.autodiff.jacobian import UnconnectedGradients
from autoloop.autodiff.tape import GradientTape

__all__ = ["ForwardAccumulator", "GradientTape", "UnconnectedGradients", "custom_gradient", "gradients", "hessians",
           "hvp", "jvp", "recompute_grad"]
