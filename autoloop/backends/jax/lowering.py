"""Lowering: a graph interpreted under JAX's tracing, which records one XLA computation.

`Lowering.run_graph` walks a graph as the reference interpreter does (the
nodes that outputs and effects need, in graph order), but on JAX values:
inside ``jax.jit`` each kernel call records operations instead of
computing, so one walk per input signature builds the whole program. The
rules per node, by table lookup:

- a value tracing already computed (a constant, a folded shape) stays a
  numpy value, and so does every op whose inputs are all numpy values: it
  runs its numpy kernel now (shape arithmetic stays static, as XLA needs),
  unless its result is large (then XLA makes it, not a constant);
- a control-flow op runs its ``"jax"`` rule (`autoloop.ir.control_flow`:
  ``While`` -> ``lax.while_loop``, ``Cond`` -> ``lax.cond``, ``Scan``);
- any other op runs its ``"jax"`` kernel from the op registry
  (``OpDef.kernels["jax"]``). A plain kernel is ``fn(*values, **attrs)``;
  one marked `autoloop.backends.jax.marks.with_node` also gets the lowering and the node
  (``fn(lowering, node, *values, **attrs)``): kernels that check values at
  run time (`autoloop.backends.jax.checks`), read a list's layout, or have
  effects.

What XLA cannot express is a `BackendError` raised here, at trace time,
naming the user's line (`autoloop.backends.jax.marks.unsupported`); never a JAX traceback.
"""

from __future__ import annotations

import numpy as np

from autoloop.backends.jax.checks import ErrorState
from autoloop.backends.jax.marks import calls_host, is_static, unsupported
from autoloop.errors import AutoloopError
from autoloop.ir import control_flow
from autoloop.ir.effects import has_effects
from autoloop.ops import registry
from autoloop.ops.location import format_location
from autoloop.ir.graph import op_attrs_of

FOLD_ELEMENTS = 64  # numpy computes a result of at most this many elements while lowering; XLA the rest


class Lowering:
    """One walk of a program's graphs under JAX tracing; `facts` are what analysis found before.

    `errors` is the current `ErrorState` (None when the program has no
    checks); control-flow rules thread it through their loops and branches.
    `watching` False lowers the quick program, whose interruptible loops
    give up instead of asking the host (`autoloop.backends.jax.interrupts`).
    """

    def __init__(self, facts, variables=(), watching=True):
        from autoloop.backends.jax.variables import VariableState
        self.facts = facts
        self.watching = watching
        self.errors = ErrorState.initial(facts.sites) if facts.sites else None
        self.variables = VariableState(facts.cells, variables)  # what the variables hold now
        self.padded_shapes: dict = {}  # a Shape value of this walk -> the padded stack it is of (`padded`)

    def variables_set(self, values):
        """A block in which the variables hold `values` (a loop body's or branch's own state)."""
        return self.variables.replaced(self, values)

    # -- walking ---------------------------------------------------------------------------
    def run_graph(self, graph, inputs) -> list:
        """`graph`'s outputs for `inputs` (JAX or numpy values)."""
        env = dict(zip(graph.inputs, inputs))
        for node in self.facts.schedule(graph):
            results = self.fixed_values(node)
            if results is None:
                results = self.run_node(node, [env[v] for v in node.inputs])
            env.update(zip(node.outputs, results))
        return [env[v] for v in graph.outputs]

    def fixed_values(self, node):
        """The values of `node` that do not depend on its inputs (constants, folded values), or None."""
        if node.op == "Const" and node.outputs[0].dtype.name == "variant":
            if node.attrs["value"] in self.variables.cells:  # a variable's cell: read through `variables`
                return [node.attrs["value"]]
            from autoloop.backends.jax.buffers import constant_buffer
            return [constant_buffer(self, node)]
        return folded_values(node)

    def run_node(self, node, args) -> list:
        from autoloop.backends.jax import padded  # imports buffers, which imports this module
        if padded.padded_inputs(self, node, args):  # a stacked list of run-time length (buffers.Padded)
            return padded.run(self, node, args, op_attrs_of(node.attrs))
        op = control_flow.lookup(node.op)
        if op is not None:
            return op.kernel_for("jax")(self, node, args)
        opdef = registry.get(node.op)
        if not opdef.stateful and all(is_static(a) for a in args) and _small(node) and not calls_host(node):
            return self._run_numpy(node, opdef, args)
        return self._run_kernel(node, opdef, args)

    # -- one op ------------------------------------------------------------------------------
    def _run_kernel(self, node, opdef, args) -> list:
        try:
            kernel = opdef.kernel_for("jax").fn
        except KeyError:
            raise unsupported(node, f"the op {node.op}", "it has no JAX kernel yet; run this function on "
                                                         "backend='numpy'") from None
        attrs = op_attrs_of(node.attrs)
        try:
            if getattr(kernel, "takes_node", False):
                result = kernel(self, node, *args, **attrs)
            else:
                result = kernel(*args, **attrs)
        except AutoloopError:
            raise
        except Exception as error:  # noqa: BLE001 - JAX's words, turned into one clear error
            raise _lowering_error(node, error) from None
        return _results(node, result)

    def _run_numpy(self, node, opdef, args) -> list:
        """An op on values known while compiling: its numpy kernel, now; a failure fails when it runs."""
        try:
            with np.errstate(all="ignore"):
                result = opdef.kernel(*args, **op_attrs_of(node.attrs))
        except Exception as error:  # noqa: BLE001 - raised when (and if) the node runs
            return self.fail_always(node, error)
        return _results(node, result, numpy=True)

    def fail_always(self, node, error) -> list:
        """`node` fails with `error` whenever it runs: a check that always fails, and placeholder outputs."""
        if not self.facts.reports_errors:
            from autoloop.execute.errors import raise_for_node
            raise_for_node(node, error)  # no checks to carry it: fail now, as the first call would

        self.errors = self.errors.fail(self.facts.sites.failure(node, error), True)
        import jax.numpy as jnp
        return [jnp.zeros([0 if d is None else d for d in v.shape.as_list()], v.dtype.as_numpy_dtype)
                for v in node.outputs]

    # -- what kernels use ------------------------------------------------------------------
    def check(self, node, failed, witness=()) -> None:
        """Record that `node` fails where `failed` holds (its site was found by `find_sites`)."""
        site = self.facts.sites.by_node.get(node)
        if site is None or (is_static(failed) and not np.any(failed)):
            return  # no site: the node's shapes were not static, so it could not be checked
        self.errors = self.errors.fail(site, failed, witness)

    def layout(self, value):
        """The buffer layout of a list value (`autoloop.backends.jax.layouts`)."""
        return self.facts.layouts.of(value)


def folded_values(node):
    """The values tracing computed for `node`'s outputs, or None."""
    if node.op == "Const":
        return [node.attrs["value"]]
    if not node.outputs or any(v.constant is None for v in node.outputs) or has_effects(node) or calls_host(node):
        return None
    return [v.constant for v in node.outputs]


def _small(node) -> bool:
    for value in node.outputs:
        count = value.shape.num_elements()
        if count is None or count > FOLD_ELEMENTS or value.dtype.name == "variant":
            return False
    return True


def _results(node, result, numpy=False) -> list:
    """The kernel's result as a list with one value per output, in the dtypes tracing inferred."""
    if not node.outputs:
        return []
    values = list(result) if node.tuple_result else [result]
    return [_as_dtype(value, out, numpy) for value, out in zip(values, node.outputs)]


def _as_dtype(value, out, numpy: bool):
    if out.dtype.name == "variant" or hasattr(value, "refuse"):  # a list, or a stacked list of run-time length
        return value
    wanted = out.dtype.as_numpy_dtype
    if numpy:
        value = np.asarray(value)
        value = value if value.dtype == wanted else value.astype(wanted)
        return value[()] if value.ndim == 0 else value
    if getattr(value, "dtype", None) != wanted:
        import jax.numpy as jnp
        value = jnp.asarray(value).astype(wanted)
    return value


def _lowering_error(node, error) -> Exception:
    """`error`, raised by JAX while lowering `node`, as one clear `BackendError`."""
    import jax
    if isinstance(error, jax.errors.ConcretizationTypeError | jax.errors.TracerIntegerConversionError |
                  jax.errors.TracerBoolConversionError):
        return unsupported(node, f"{node.op} needs a value known while compiling, but it", (
            "depends on values computed when the graph runs, and XLA compiles arrays of static shape "
            "only. Compute it from shapes and constants, pad to a fixed size, or run on backend='numpy'"))
    return RuntimeError(f"internal error: {node.op} (node {node.name}, created at {format_location(node.location)}) "
                        f"failed while lowering to XLA: {type(error).__name__}: {error}")
