"""`custom_gradient` and `recompute_grad`: a function whose gradient the user writes.

    @autoloop.custom_gradient
    def log1pexp(x):
        e = autoloop.exp(x)
        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return autoloop.math.log(1 + e), grad

The function's results pass through one ``CustomGradient`` op whose inputs
are the arguments, the results and the forward values `grad` reads, and
whose outputs are the results again. Its gradient rule is `grad`, so no
gradient flows through the ops inside the function.

- Eagerly, the function runs with tapes paused (its ops are not recorded
  and keep nothing alive); the op is recorded and its rule calls `grad`.
- While tracing, `grad` is traced at once into a graph of its own (its
  parameters are the upstream gradients; the forward tensors it reads are
  captured and become inputs of the op). The rule copies that graph into
  the backward pass, reading the captured values as it reads any forward
  value, so inside a loop they are saved per iteration like the others.

Variables (TensorFlow's form): the trainable `autoloop.Variable`s the
function reads are found while it runs; ``grad_fn`` must then take a
``variables`` keyword argument, is called as ``grad_fn(*upstream,
variables=[...])`` and returns ``(input_grads, variable_grads)``, one per
variable in that order. Each variable is read once more beside the op and
that read is one more input of it, whose gradient is the variable's: a
`GradientTape` (or `gradients`) sees it like any read.

    @autoloop.custom_gradient
    def scaled(x):
        def grad(upstream, variables=None):
            return upstream * w, [upstream * x]      # for x, and for w
        return x * w, grad

Forward mode goes through the op by its reverse rule (`autoloop.autodiff.jvp`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Any, Callable, TypeVar

from autoloop import nest
from autoloop.autodiff.replay import inline
from autoloop.autodiff.rules import is_differentiable
from autoloop.autodiff.tape import VariableWatcher
from autoloop.ir import context
from autoloop.ir.graph import Graph
from autoloop.ops import recording
from autoloop.ops.creation_ops import zeros_like
from autoloop.ops.math_ops import identity
from autoloop.ops.dispatch import apply, convert, graph_value
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.tensor import Tensor

_F = TypeVar("_F", bound=Callable[..., Any])


class GradientFunction:
    """The user's gradient of one call: the Python function (eagerly) or its traced graph.

    `num_inputs` arguments and `num_outputs` results; a traced `graph` takes
    one upstream gradient per result, then its captured values, and gives
    one gradient per argument that `connected` marks.
    """

    def __init__(self, fn, num_inputs, num_outputs, variables=(), graph=None, connected=None):
        self.fn, self.num_inputs, self.num_outputs = fn, num_inputs, num_outputs
        self.variables = list(variables)  # read by the function: their reads are the op's last inputs
        self.graph, self.connected = graph, connected

    def __repr__(self):
        return f"<custom gradient {getattr(self.fn, '__qualname__', self.fn)}>"

    def call(self, upstream) -> list:
        """The user's gradient function on `upstream`: the argument gradients, then the variables'."""
        if not self.variables:
            return _as_list(_without_empty_variable_grads(self.fn(*upstream), self.fn), self.num_inputs, self.fn)
        returned = self.fn(*upstream, variables=list(self.variables))
        if not isinstance(returned, list | tuple) or len(returned) != 2:
            raise TypeError(f"the gradient function {_name(self.fn)} of a custom_gradient that reads variables "
                            f"must return (input_gradients, variable_gradients); it returned "
                            f"{type(returned).__name__}")
        inputs, variables = returned
        variables = list(variables) if isinstance(variables, list | tuple) else [variables]
        if len(variables) != len(self.variables):
            names = ", ".join(repr(v._name) for v in self.variables)
            raise ValueError(f"the gradient function {_name(self.fn)} of a custom_gradient returned {len(variables)} "
                             f"variable gradients, but the function read {len(self.variables)} variables ({names}): "
                             f"return one gradient for each variable in `variables`, in that order (None for none)")
        return _as_list(inputs, self.num_inputs, self.fn) + variables

    def gradients(self, op, upstream) -> list:
        """Gradients for the op's inputs: the arguments', None for the results and captures, the variables'."""
        upstream = [g if g is not None else zeros_like(op.outputs[k]) for k, g in enumerate(upstream)]
        if self.graph is None:
            found = self.call(upstream)
        else:
            graph = self.graph
            parameters = dict(zip(graph.inputs[:self.num_outputs], upstream))
            position = {p: k for k, p in enumerate(graph.inputs[self.num_outputs:])}
            offset = self.num_inputs + self.num_outputs
            results = iter(inline(graph, parameters, graph.outputs, lambda p: op.inputs[offset + position[p]],
                                  variable_reads=True))
            found = [next(results) if connected else None for connected in self.connected]
        arguments, variables = found[:self.num_inputs], found[self.num_inputs:]
        grads = [_checked(g, op.input_specs[k], k, self.fn) for k, g in enumerate(arguments)]
        first = len(op.input_specs) - len(variables)
        grads += [_checked(g, op.input_specs[first + k], f"for the variable {v._name!r}", self.fn)
                  for k, (g, v) in enumerate(zip(variables, self.variables))]
        return grads[:self.num_inputs] + [None] * (first - self.num_inputs) + grads[self.num_inputs:]


def _as_list(result, count, fn) -> list:
    result = list(result) if isinstance(result, list | tuple) else [result]
    if len(result) != count:
        raise ValueError(f"the gradient function {_name(fn)} of a custom_gradient returned {len(result)} "
                         f"gradients, but the function has {count} tensor arguments: return one per argument "
                         f"(None for an argument with no gradient)")
    return result


def _without_empty_variable_grads(result, fn):
    """A grad_fn of the variables form called without variables (the function read none) may return
    ``(input_gradients, [])``: TensorFlow flattens the empty list away, so it is the input gradients."""
    if (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], list | tuple) and not result[1]
            and _takes_variables(fn)):
        return result[0]
    return result


def _checked(grad, spec: Spec, position, fn):
    if grad is None or not is_differentiable(spec.dtype):
        return None
    grad = convert(grad, spec.dtype) if not isinstance(grad, Tensor) else grad
    if grad.dtype is not spec.dtype:
        raise TypeError(f"the gradient function {_name(fn)} of a custom_gradient returned a {grad.dtype.name} "
                        f"gradient {_which(position)}, a {spec.dtype.name} tensor: return the argument's dtype")
    if not grad.shape.is_compatible_with(spec.shape):
        raise ValueError(f"the gradient function {_name(fn)} of a custom_gradient returned a gradient of shape "
                         f"{grad.shape} {_which(position)}, of shape {spec.shape}: return the argument's shape")
    return grad


def _which(position) -> str:
    return f"for argument {position}" if isinstance(position, int) else position


def _name(fn) -> str:
    return repr(getattr(fn, "__qualname__", fn))


def _infer(*specs, function):
    start = function.num_inputs
    return [Spec(s.dtype, s.shape) for s in specs[start:start + function.num_outputs]]


def _kernel(*values, function):
    return tuple(values[function.num_inputs:function.num_inputs + function.num_outputs])


def _gradient(op, *upstream):
    return op.attrs["function"].gradients(op, upstream)


register(OpDef("CustomGradient", kernel=_kernel, infer=_infer, gradient=_gradient,
               kernels={"jax": _kernel}))


def custom_gradient(f: Callable[..., Any] | None = None) -> Any:
    """Decorator: `f(*x)` returns ``(y, grad_fn)``; gradients of `y` are ``grad_fn(*upstream)``.

    `y` is a tensor or a nested structure of them; ``grad_fn`` takes one
    upstream gradient per tensor of `y` (flattened) and returns one gradient
    per argument of `f` (a single tensor for one argument; None for an
    argument with no gradient). Works eagerly under a `GradientTape`, in
    traced functions, inside loops, and on ``backend="jax"``.

        @autoloop.custom_gradient
        def clip_gradient(x):
            def grad(upstream):
                return autoloop.clip_by_value(upstream, -1.0, 1.0)
            return autoloop.identity(x), grad

    If `f` reads trainable variables, ``grad_fn`` must take ``variables=``
    (TypeError otherwise, as in TensorFlow): it gets the list of them and
    returns ``(input_grads, variable_grads)``; see the module docstring.
    """
    if f is None:
        return custom_gradient

    @_named_after(f)
    def call(*args, **kwargs):
        x = [a if isinstance(a, Tensor) else convert(a) for a in args]
        graph = context.current_graph()
        watcher = VariableWatcher(graph)
        with _paused_tapes() if graph is None else contextlib.nullcontext(), watcher.active():
            returned = f(*x, **kwargs)
        if not isinstance(returned, tuple) or len(returned) != 2 or not callable(returned[1]):
            raise TypeError(f"a custom_gradient function must return (result, grad_fn); {_name(f)} returned "
                            f"{type(returned).__name__}")
        y, grad_fn = returned
        variables = watcher.variables
        if variables and not _takes_variables(grad_fn):
            names = ", ".join(repr(v._name) for v in variables)
            raise TypeError(f"the gradient function {_name(grad_fn)} of the custom_gradient {_name(f)} must accept "
                            f"a keyword argument 'variables', since {_name(f)} reads the variables {names}: define "
                            f"it as grad_fn(*upstream, variables=None), returning (input_gradients, "
                            f"variable_gradients)")
        flat = [t if isinstance(t, Tensor) else convert(t) for t in nest.flatten(y)]
        function = GradientFunction(grad_fn, len(x), len(flat), variables)
        captures = [] if graph is None else _trace_gradient(function, flat, graph)
        reads = [v.read_value() for v in variables]  # what tapes see; their gradients are the variables'
        outputs = apply("CustomGradient", x + flat + captures + reads, {"function": function})
        return nest.pack_sequence_as(y, list(outputs))

    return call


def _named_after(f):
    """`functools.wraps` keeping the wrapper's own module: converted code then calls the wrapper as
    library code (it must not be converted, nor unwrapped to `f`)."""
    return functools.wraps(f, assigned=("__name__", "__qualname__", "__doc__"), updated=())


def _takes_variables(grad_fn) -> bool:
    """Whether `grad_fn` accepts a ``variables`` keyword argument."""
    try:
        parameters = inspect.signature(grad_fn).parameters
    except (TypeError, ValueError):
        return True  # no signature to read: let the call say
    return "variables" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _trace_gradient(function: GradientFunction, results, graph) -> list:
    """Trace ``function.fn`` into a graph inside `graph`; returns the outer values it captured (Tensors)."""
    inner = Graph(f"{getattr(function.fn, '__name__', 'grad')}_custom_gradient", parent=graph)
    upstream = [Tensor(value=inner.add_input(t.dtype, t.shape, name="upstream")) for t in results]
    with context.building(inner):
        found = function.call(upstream)
        function.connected = [g is not None for g in found]
        inner.outputs = [graph_value(inner, g if isinstance(g, Tensor) else convert(g)) for g in found
                         if g is not None]
    function.graph = inner
    # Each capture's outer value, in the order of the graph's capture parameters.
    outer_of = {placeholder: outer for outer, placeholder in inner.captures.items()}
    return [Tensor(value=outer_of[p]) for p in inner.inputs[function.num_outputs:]]


@contextlib.contextmanager
def _paused_tapes():
    """No eager op inside the block is recorded (the custom op stands for them)."""
    stack = recording.active()
    saved = list(stack)
    del stack[:]
    try:
        yield
    finally:
        stack[:] = saved + stack


def recompute_grad(f: _F) -> _F:
    """`f` whose intermediate values are not kept for the gradient: the backward pass runs `f` again.

    ``recompute_grad(f)(*x)`` gives ``f(*x)``; its gradient reruns ``f``
    on the saved arguments and differentiates that run, so only the
    arguments are kept between the forward and the backward pass (inside a
    loop: per iteration). The gradients equal those of `f` itself.

        block = autoloop.recompute_grad(lambda h: autoloop.tanh(h @ w) @ w2)
    """
    @_named_after(f)
    def call(*args):
        @custom_gradient
        def recomputed(*x):
            def grad(*upstream, variables=None):
                from autoloop.autodiff.tape import GradientTape
                again = [identity(t) for t in x]  # fresh tensors of the graph being built, to watch
                with GradientTape() as tape:
                    tape.watch(again)
                    y = f(*again)
                found = tape.gradient(nest.flatten(y), again + list(variables or ()),
                                      output_gradients=list(upstream))
                return found if variables is None else (found[:len(x)], found[len(x):])
            return f(*x), grad
        return recomputed(*args)

    return call
