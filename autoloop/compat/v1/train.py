"""TF1 training (``compat.v1.train``): `GradientDescentOptimizer`, `MomentumOptimizer`, `AdamOptimizer`.

An optimizer builds graph ops that a `Session` runs: ``minimize(loss)`` is
``apply_gradients(compute_gradients(loss))``, one Operation that updates
every trainable variable the loss reads by one step::

    w = get_variable("w", shape=[], initializer=zeros_initializer())
    loss = square(w - 3.0)
    step = train.GradientDescentOptimizer(0.1).minimize(loss)
    with Session() as sess:
        sess.run(global_variables_initializer())
        for _ in range(100):
            sess.run(step)
        sess.run(w)                  # 3.0 (nearly)

The gradient with respect to a variable is the sum of the gradients with
respect to each read of it that the loss depends on (`gradients`).
Reads inside a ``while_loop`` or ``cond`` body are not differentiated: a
loss that depends on one is a NotImplementedError naming the variable.
Every gradient is computed from the values read before any update of the
step, as in TensorFlow.
"""

from __future__ import annotations

import contextlib

import numpy as np

from autoloop import dtypes
from autoloop.autodiff.graph_backprop import graph_gradients
from autoloop.compat.v1 import spellings
from autoloop.compat.v1.graph import Operation, building_graph, control_dependencies, get_default_graph, group
from autoloop.compat.v1.variables import Variable
from autoloop.ops.cumulative_ops import add_n
from autoloop.ops.creation_ops import zeros
from autoloop.ops.dispatch import convert, graph_value
from autoloop.ops.math_ops import cast, sqrt
from autoloop.tensor import Tensor

_UPDATES = ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp")


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients="none") -> list:
    """TF1's ``gradients``: `autoloop.gradients` in the graph being built, where `xs` may hold variables.

    The gradient with respect to a variable flows in through the reads of
    it that `ys` depend on (summed); None where they read none.
    """
    graph = building_graph("gradients")
    ys_list = list(ys) if isinstance(ys, list | tuple) else [ys]
    xs_list = list(xs) if isinstance(xs, list | tuple) else [xs]
    upstream = _upstream_nodes([graph_value(graph, convert(y)).node for y in ys_list])
    sources = [_reads(x, upstream) if isinstance(x, Variable) else [x] for x in xs_list]
    flat = [source for entry in sources for source in entry]
    found = iter(graph_gradients(graph, ys_list, flat, grad_ys, stop_gradients, "none") if flat else [])
    results = []
    for x, entry in zip(xs_list, sources):
        parts = [grad for grad in (next(found) for _ in entry) if grad is not None]
        grad = None if not parts else parts[0] if len(parts) == 1 else add_n(parts)
        if grad is None and unconnected_gradients == "zero":
            grad = zeros(x.shape, x.dtype)
        results.append(grad)
    return results


def _reads(variable, upstream) -> list:
    """The reads of `variable` among the nodes `upstream`, as tensors; NotImplementedError for a read in a
    loop or branch body."""
    handle = variable._handle._value
    reads = []
    for node in upstream:
        if handle not in node.inputs or node.op in _UPDATES:
            continue
        if node.op == "CustomGradient":  # a handle its grad_fn reads gets no gradient; f's reads are inputs of it
            continue
        if node.op != "ReadVariableOp":
            raise NotImplementedError(
                f"the gradient with respect to the variable {variable.name!r} through its reads inside "
                f"{node.op} {node.name!r} (a while_loop or cond body, or a function) is not supported: read the "
                f"variable outside it and pass the value in (as a loop variable or an argument)")
        reads.append(Tensor(value=node.outputs[0]))
    return reads


def _upstream_nodes(nodes) -> list:
    """The nodes that `nodes` depend on through data, themselves included, in no particular order."""
    seen, stack = {id(node): node for node in nodes}, list(nodes)
    while stack:
        for value in stack.pop().inputs:
            if id(value.node) not in seen:
                seen[id(value.node)] = value.node
                stack.append(value.node)
    return list(seen.values())


class Optimizer:
    """What the TF1 optimizers share: gradients over variables, and one update op per step."""

    def __init__(self, use_locking=False, name="Optimizer"):
        self._name = name

    def get_name(self) -> str:
        return self._name

    def compute_gradients(self, loss, var_list=None, gate_gradients=1, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """``[(gradient, variable), ...]`` for the trainable variables (or `var_list`); None where the loss
        does not depend on a variable. `grad_loss` weights the loss (its gradient, default ones); the
        other arguments are TF1's scheduling hints and change nothing."""
        if callable(loss):
            raise NotImplementedError("compute_gradients: pass the loss tensor; a callable loss is for "
                                      "eager execution, which TF1 optimizers do not support here")
        variables = list(var_list) if var_list is not None else spellings.trainable_variables()
        if not variables:
            raise ValueError("compute_gradients: no variables to optimize (make them with get_variable, "
                             "trainable=True, or pass var_list)")
        for variable in variables:
            if not isinstance(variable, Variable):
                raise TypeError(f"compute_gradients: var_list holds {variable!r}, not a variable")
        grad_ys = None if grad_loss is None else [grad_loss]
        return list(zip(gradients(loss, variables, grad_ys=grad_ys), variables))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None) -> Operation:
        """One Operation that updates each variable by its gradient (None gradients are skipped) and then
        adds 1 to `global_step` if given."""
        pairs = [(grad, var) for grad, var in grads_and_vars if grad is not None]
        if not pairs:
            raise ValueError(f"apply_gradients: no gradients for any of the variables "
                             f"{[var.name for _, var in grads_and_vars]}; check that the loss depends on them")
        updates = [self._update(convert(grad), var) for grad, var in pairs]
        updates += self._finish(updates)
        if global_step is None:
            return group(*updates, name=name or self._name)
        with control_dependencies(updates):
            return group(global_step.assign_add(1), name=name or self._name)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None) -> Operation:
        """``apply_gradients(compute_gradients(loss, var_list), global_step)``."""
        grads_and_vars = self.compute_gradients(loss, var_list, grad_loss=grad_loss)
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _update(self, grad, var):
        raise NotImplementedError

    def _finish(self, updates) -> list:
        return []

    def _slot(self, var, slot: str):
        """A non-trainable variable of zeros beside `var` (named ``var/slot``, or ``var/slot_1``, ... when a
        second optimizer of that name trains `var`), initialised with the rest."""
        taken = var.graph.variables
        name = f"{var._name}/{slot}"
        count = 0
        while (name if count == 0 else f"{name}_{count}") in taken:
            count += 1
        name = name if count == 0 else f"{name}_{count}"
        return Variable(zeros(var.shape, var.dtype), trainable=False, name=name)

    @staticmethod
    def _as(value, var):
        """A hyperparameter in the variable's dtype: a Python number is a float32 first, cast then (TF's
        rounding: 0.1 for a float64 variable is float32's 0.1)."""
        return cast(convert(value), var.dtype)


class GradientDescentOptimizer(Optimizer):
    """``var -= learning_rate * gradient``."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _update(self, grad, var):
        return var.assign_sub(self._as(self._learning_rate, var) * grad)


class MomentumOptimizer(Optimizer):
    """``accumulation = momentum * accumulation + gradient; var -= learning_rate * accumulation``
    (with `use_nesterov`, ``var -= learning_rate * (gradient + momentum * accumulation)``)."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate, self._momentum, self._nesterov = learning_rate, momentum, use_nesterov

    def _update(self, grad, var):
        rate, momentum = self._as(self._learning_rate, var), self._as(self._momentum, var)
        accumulation = self._slot(var, self._name)
        new = accumulation.assign(accumulation * momentum + grad)
        if self._nesterov:  # in the order of TF1's kernel, for the same rounding
            return var.assign_sub(grad * rate + new * momentum * rate)
        return var.assign_sub(new * rate)


class AdamOptimizer(Optimizer):
    """Adam (Kingma and Ba), in the order TF1's kernel computes it::

        rate_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t)
        m += (g - m) * (1 - beta1);  v += (g * g - v) * (1 - beta2)
        var -= m * rate_t / (sqrt(v) + epsilon)

    The hyperparameters and the powers ``beta^t`` are float32 (the powers are
    variables), cast to each variable's dtype, as in TensorFlow.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="Adam"):
        super().__init__(use_locking, name)
        self._learning_rate, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon
        self._powers = None  # (beta1^t, beta2^t) variables, made with the first update

    def _update(self, grad, var):
        if self._powers is None:
            self._powers = tuple(Variable(float(beta), trainable=False, name=f"{self._name}/beta{k}_power")
                                 for k, beta in ((1, self._beta1), (2, self._beta2)))
        beta1, beta2, epsilon, power1, power2 = (self._as(value, var) for value in (
            self._beta1, self._beta2, self._epsilon, *self._powers))
        rate = self._as(self._learning_rate, var) * sqrt(1 - power2) / (1 - power1)
        m_slot, v_slot = self._slot(var, self._name), self._slot(var, f"{self._name}_1")
        m = m_slot.assign(m_slot + (grad - m_slot) * (1 - beta1))
        v = v_slot.assign(v_slot + (grad * grad - v_slot) * (1 - beta2))
        return var.assign_sub(m * rate / (sqrt(v) + epsilon))

    def _finish(self, updates) -> list:
        power1, power2 = self._powers
        with control_dependencies(updates):  # the step's rate read the powers of step t
            return [power1.assign(power1 * self._beta1), power2.assign(power2 * self._beta2)]


def get_global_step(graph=None):
    """The graph's (default: the default graph's) ``global_step`` variable, or None."""
    return (graph or get_default_graph()).variables.get("global_step")


def get_or_create_global_step(graph=None):
    """The ``global_step`` variable (int64, 0 at first, not trainable), made now if the graph has none."""
    existing = get_global_step(graph)
    if existing is not None:
        return existing
    with (graph.as_default() if graph is not None else contextlib.nullcontext()):
        return Variable(np.int64(0), trainable=False, name="global_step", dtype=dtypes.int64)


create_global_step = get_or_create_global_step
