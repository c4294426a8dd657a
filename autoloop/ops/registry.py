"""The op registry: one `OpDef` per op, holding everything about it.

An op's dtype/shape rule, its gradient and its kernels (one per backend)
sit side by side in one registration::

    register(OpDef(
        "Square",
        kernel=np.square,            # the numpy kernel
        infer=same_as_input,
        expr="({0} * {0})",          # optional: inlined by the numpy executor
        gradient=square_grad,        # optional: reverse mode, written beside the kernel
        kernels={"jax": "jax.numpy:square"},  # other backends: "module:name", imported when used
    ))

Contracts:
- ``kernel(*arrays, **attrs)`` returns values of exactly the dtypes and
  shapes ``infer`` promised: one value when ``infer`` returns one `Spec`, a
  tuple when it returns a list (one entry per output; ``[]`` for an op with
  no outputs, whose kernel returns None).
- ``infer(*specs, **attrs)`` takes a `Spec` per input and returns one `Spec`
  or a list of them; a list of one is a tuple of one, never a bare value. It
  raises TypeError/ValueError for inputs the op cannot take; those errors
  are raised the same way eagerly and while tracing.
- ``expr``, when given, is a Python expression template over the inputs
  (``{0}``, ``{1}``, ...; ``{*}`` stands for all of them, comma-separated)
  that computes the same as ``kernel``, or a function of the attrs
  returning one or None (then the kernel is called); the compiled executor
  inlines it instead of calling the kernel. It may nest a value computed
  just before into a placeholder that appears once and is always
  evaluated; a placeholder used twice (``({0} * {0})``) or conditionally
  (``({1} if {0} else {2})``) gets a name (`autoloop.execute.expressions`).
- ``scalar_expr``, when given, replaces ``expr`` where tracing proved every
  input a scalar (shape ``()``): a cheap form that only holds for scalars,
  such as ``({0} if {0} > {1} else {1})`` for Maximum, where a numpy ufunc
  on scalars costs 0.5 µs. A function of the attrs and the input dtypes may
  return one, or None (then ``expr`` or the kernel). It must give the
  kernel's exact values and dtype (numpy scalars, never Python numbers).
  Templates may name numpy as ``np``.
- ``kernels`` maps other backends to their kernel (a callable, or a
  ``"module:function"`` string imported on first use, so ``import autoloop``
  never imports jax). `OpDef.kernel_for` looks one up.
- ``gradient`` is the op's reverse-mode rule (or a ``"module:function"``
  string), or `NOT_DIFFERENTIABLE` for an op no gradient flows through
  (comparisons, integer and shape ops, ``StopGradient``). A rule is
  ``rule(op, *output_grads) -> input_grads``: `op` describes the forward
  op (``op.inputs[i]`` and ``op.outputs[j]`` are its values as Tensors,
  ``op.attrs`` its attributes, ``op.input_specs``/``op.output_specs`` their
  static `Spec`s, ``op.input_shape(i)`` a shape as an int32 tensor);
  `output_grads` has one Tensor per output (None for an output no gradient
  reached, which only multi-output ops see); the result has one entry per
  input, a Tensor or None (no gradient). Rules call ordinary ops, so the
  same rule builds graph nodes while tracing and computes eagerly under a
  `GradientTape`, and reads only the forward values it needs (in a loop,
  each value read is saved per iteration). `autoloop.ops.gradient_support`
  holds what rules share.
- ``jvp`` is the op's forward-mode rule: ``rule(op, *input_tangents) ->
  output_tangents`` (`op` as for ``gradient``; a tangent is a Tensor of its
  value's shape, or None for zero; one result per output, None for zero).
  `LINEAR` says the op is linear in its differentiable inputs together, so
  its rule is the op itself on the tangents; `ELEMENTWISE` (one
  differentiable input, an output of its shape) that the ``gradient`` rule
  applied to the tangent is the rule. Left None, forward mode derives the
  rule exactly from ``gradient`` (`autoloop.autodiff.jvp_rules`).
- ``batch`` is the op's batching rule (or a ``"module:function"`` string):
  how it maps over a new leading entry axis, ``rule(node, inputs, batched,
  size) -> (outputs, batched)`` (`autoloop.batching`). Ops that leave it
  None get the batching module's rule for their family, if any.
- ``stateful`` ops (print, assert) have effects: they are never pruned and
  keep program order (`autoloop.ir.effects`).

Control-flow ops (``While``, ``Cond``) are not OpDefs: they are declared in
`autoloop.ir.control_flow`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

from autoloop.dtypes import DType
from autoloop.ir import effects
from autoloop.ir.lazy import resolve
from autoloop.shapes import TensorShape


class _NotDifferentiable:
    """The `OpDef.gradient` of an op that no gradient flows through."""

    def __repr__(self):
        return "NOT_DIFFERENTIABLE"


NOT_DIFFERENTIABLE = _NotDifferentiable()


class _DerivedJvp:
    """A forward-mode rule that follows from the op itself (see `OpDef.jvp`)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name


LINEAR = _DerivedJvp("LINEAR")  # the jvp is the op applied to the tangents
ELEMENTWISE = _DerivedJvp("ELEMENTWISE")  # the jvp is the gradient rule applied to the tangent


class Spec(NamedTuple):
    """What is known statically about one input: dtype, shape, maybe value."""

    dtype: DType
    shape: TensorShape
    value: Any = None  # the numpy value when it is a known constant


class Kernel(NamedTuple):
    """How an op runs on one backend: a function and, for numpy, optional inline templates."""

    fn: Callable
    expr: str | Callable | None = None
    scalar_expr: str | Callable | None = None


class OpDef:
    """One op: its rule, gradient and kernels; see the module docstring."""

    __slots__ = ("name", "kernel", "infer", "expr", "scalar_expr", "gradient", "stateful", "kernels",
                 "same_dtype_numpy", "jvp", "batch")

    def __init__(self, name: str, kernel: Callable | None = None, infer: Callable | None = None,
                 expr: str | Callable | None = None, gradient: Callable | str | _NotDifferentiable | None = None,
                 stateful: bool = False, kernels: Mapping[str, Callable | str] | None = None,
                 scalar_expr: str | Callable | None = None, jvp: Callable | str | _DerivedJvp | None = None,
                 batch: Callable | str | None = None):
        if infer is None:
            raise TypeError(f"op {name!r} needs an infer rule")
        self.name = name
        self.kernel = kernel  # the numpy kernel (also kernels["numpy"].fn)
        self.expr = expr  # its inline template (also kernels["numpy"].expr)
        self.scalar_expr = scalar_expr  # its inline template on scalars (also kernels["numpy"].scalar_expr)
        self.infer = infer
        # Numpy dtypes on which the rule is numpy's own for inputs of one dtype and shape (an
        # element-wise rule sets it): eager calls then skip the rule (`dispatch`).
        self.same_dtype_numpy = getattr(infer, "same_dtype_numpy", None)
        self.gradient = gradient
        self.jvp = jvp  # forward mode: a rule, LINEAR, ELEMENTWISE, or None (derived from `gradient`)
        self.stateful = stateful
        self.batch = batch  # the batching rule (autoloop.batching), or None
        self.kernels: dict[str, Kernel | str] = {}
        if kernel is not None:
            self.kernels["numpy"] = Kernel(kernel, expr, scalar_expr)
        for backend, rule in (kernels or {}).items():
            self.kernels[backend] = rule if isinstance(rule, Kernel | str) else Kernel(rule)

    def kernel_for(self, backend: str) -> Kernel:
        """The op's `Kernel` on `backend` (imported now if named); KeyError if it has none."""
        try:
            rule = self.kernels[backend]
        except KeyError:
            raise KeyError(f"op {self.name!r} has no {backend!r} kernel") from None
        return rule if isinstance(rule, Kernel) else Kernel(resolve(rule))

    @property
    def differentiable(self) -> bool:
        """False for an op declared `NOT_DIFFERENTIABLE`."""
        return self.gradient is not NOT_DIFFERENTIABLE

    def gradient_rule(self):
        """The gradient rule (imported now if named); None if the op has none or is not differentiable."""
        return None if self.gradient is NOT_DIFFERENTIABLE else resolve(self.gradient)

    def __repr__(self):
        return f"<OpDef {self.name} kernels={sorted(self.kernels)}{' stateful' if self.stateful else ''}>"


_REGISTRY: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    if opdef.name in _REGISTRY:
        raise ValueError(f"op {opdef.name!r} is registered twice")
    _REGISTRY[opdef.name] = opdef
    if opdef.stateful:
        effects.declare_effects(opdef.name)
    return opdef


def get(name: str) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r} is registered") from None


def all_ops() -> dict[str, OpDef]:
    return dict(_REGISTRY)
