"""`@function`: convert a Python function, trace it per input signature, run the graph.

    @function
    def sum_square(n):
        i, result = constant(0), constant(0)
        while i < n:
            result += i * i
            i += 1
        return result

    sum_square(constant(10)).numpy()   # 285

Arguments that are tensors or numpy arrays become graph inputs, keyed by
dtype and shape; any other Python value is baked into the trace (a new value
retraces); records (dataclasses, attrs-style objects) are opened into their
fields, and other objects are keyed by identity and a snapshot of their
attributes (`autoloop.arguments` states the rule). Each distinct key is traced once into a `ConcreteFunction` whose
graph is compiled once by the executor.

Tracing is slow, so a Function that traces on 5 calls in a row (a new Python
float on every call, say) warns once with a `RetracingWarning` saying how to
avoid it; `experimental_get_tracing_count()` says how many traces it made.
Traces are made one at a time (a lock per Function), so threads that call a
new Function together trace it once.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import warnings
from typing import Any, Callable, Sequence, overload

import numpy as np

from autoloop import arguments, config, nest, signatures, tracebacks
from autoloop.arguments import (check_signature, defaults_are_python, input_names, is_input, is_jax_array, name_of,
                                short_key, signature_of)
from autoloop.autodiff import function_calls, tape
from autoloop.autograph.features import check_features
from autoloop.backends import BackendName, check_backend
from autoloop.concrete_function import AppendedList, ConcreteFunction
from autoloop.control_flow.composite import CompositeTensor
from autoloop.ir import context, rewrite
from autoloop.ir.graph import Graph
from autoloop.ops import recording
from autoloop.ops.constant_ops import constant
from autoloop.ops.dispatch import graph_value, verify
from autoloop.ops.v1_ops import cells_of
from autoloop.runtime import trace as staging_trace
from autoloop.tensor import Tensor


class RetracingWarning(UserWarning):
    """A Function keeps tracing new graphs: see the message for how to avoid it."""


RETRACING_WARNING_THRESHOLD = 5  # tracing calls in a row, as TensorFlow's warning counts them
_NO_ARGUMENT = object()  # a call without positional arguments (`Function.__call__`)
_NO_DEVICE_CALL = (None, None, None)  # no shortest path (`Function._last_device_call`): no argument's type is None


class Function:
    """A Python function run as graphs; see the module docstring."""

    # What the short call path reads sits in the object, not in its __dict__ (a cached call after a
    # loop over large arrays finds little of itself in the caches); the rest stays in __dict__.
    __slots__ = ("_fast_runs", "_device_array_types", "_last_device_call", "_tracing_calls_in_a_row", "__dict__",
                 "__weakref__")

    def __init__(self, python_function: Callable[..., Any], autograph: bool = True,
                 input_signature: Sequence[Any] | None = None, reduce_retracing: bool = False,
                 backend: BackendName = "numpy", jax_arrays: bool = False):
        if not callable(python_function):
            raise TypeError(f"function() needs a callable, got {python_function!r}")
        self._backend = check_backend(backend)
        if jax_arrays and backend != "jax":
            raise ValueError(f"jax_arrays=True returns JAX arrays from backend='jax'; this function has "
                             f"backend={backend!r}")
        self.python_function = python_function
        self.autograph = autograph
        self.input_signature = None if input_signature is None else list(input_signature)
        self.reduce_retracing = reduce_retracing
        self.backend = backend
        self.jax_arrays = bool(jax_arrays)
        self._signature = signature_of(python_function)
        self._converted = None
        self._traces: dict = {}
        # The short path's key of the positional tensors -> its trace's run_flat; None where the short
        # path cannot select traces (an input signature, reduce_retracing, tensors as defaults).
        self._fast_runs: dict | None = None
        # The types of the backend's own arrays (JAX's) that calls passed, which the short path then takes
        # as they are: found in calls, so that naming them never imports the backend's package.
        self._device_array_types: frozenset = frozenset()
        # The shortest path: (type, abstract value, run_flat) of the last short-path call of one device array
        # (no type until then); a call of one array of that type whose abstract value is that very object runs it.
        self._last_device_call: tuple = _NO_DEVICE_CALL
        self._trace_lock = threading.RLock()  # re-entrant: a trace may ask for another concrete function
        self._tracing_count = 0
        self._tracing_calls_in_a_row = 0
        self._warned_about_retracing = False
        if input_signature is None and not reduce_retracing and defaults_are_python(self._signature):
            self._fast_runs = {}
        # Name, docstring and __wrapped__ only: merging the wrapped object's __dict__ would let a
        # wrapped Function (or any callable object) overwrite this Function's own state.
        functools.update_wrapper(self, python_function, updated=())

    # -- methods: bind self like a plain function would --------------------
    def __get__(self, instance: Any, owner: Any = None) -> Function:
        if instance is None:
            return self
        bound = _BoundFunctions.get(self, instance)
        return bound

    @property
    def _target(self):
        """The function that is traced: converted unless autograph=False."""
        if not self.autograph:
            return self.python_function
        if self._converted is None:
            from autoloop.compiler.conversion import convert
            self._converted = convert(self.python_function)
        return self._converted

    def __call__(self, first: Any = _NO_ARGUMENT, /, *args: Any, **kwargs: Any) -> Any:
        # The first argument comes apart from the others: a call of one argument then makes no tuple of them.
        try:
            last = self._last_device_call
            if type(first) is last[0] and not args and not kwargs and not _BUSY[0] and first.aval is last[1]:
                # The shortest path, a call of one device array like the last such call: `short_key` would give the
                # key ``(first.aval,)`` (abstract values are compared by identity here, which implies equality), so
                # `_fast_runs` would give the same run_flat. A new abstract value object only takes the short path.
                # No trace was made since `last` was kept (a trace drops it: `_count_call`), so the count of
                # tracing calls in a row is 0 already.
                return last[2]((first,))
            if first is not _NO_ARGUMENT:
                args = (first,) + args if args else (first,)
            if _BUSY[0]:  # a graph is built, a tape records or functions run eagerly (see `context.BUSY`)
                if context.current_graph() is not None:
                    if self.backend != "numpy":
                        _refuse_session_graph(self, context.current_graph())
                    if context.current_graph().tf1_style:  # a TF1 graph's top level: run as TF runs a call op
                        v1_graph = sys.modules["autoloop.compat.v1.graph"]
                        return v1_graph.call_as_one_op(functools.partial(self._target, *args, **kwargs))
                    return self._target(*args, **kwargs)  # called while tracing: inline
                if config.functions_run_eagerly():
                    return self._call_eagerly(args, kwargs)
                if recording.anywhere() and recording.active():
                    return self._call_recorded(args, kwargs)
            fast_key = None
            fast_runs = self._fast_runs
            if fast_runs is not None and not kwargs:
                # The short path: a call of eager tensors and Python numbers (the common call) selects its trace
                # by `short_key`, a cache in front of the full key. Sound because defaults never change: the
                # first call with a short key looks its trace up by the full key (and raises for what it cannot take).
                short = short_key(args, self._device_array_types)
                if short is not None:
                    fast_key, arrays = short
                    run_flat = fast_runs.get(fast_key)
                    if run_flat is not None:
                        if self._tracing_calls_in_a_row:  # read, not written, on the common call
                            self._tracing_calls_in_a_row = 0
                        if self._device_array_types:  # a backend='jax' function that was called on JAX arrays
                            self._remember_device_call(args, fast_key, run_flat)
                        return run_flat(arrays)
            concrete, arrays = self._concrete_and_inputs(args, kwargs, count_call=True)
            if fast_key is not None:
                fast_runs[fast_key] = concrete.run_flat  # type: ignore[index]  # a fast key implies fast_runs
                self._remember_device_call(args, fast_key, concrete.run_flat)
            elif self.backend == "jax" and not kwargs:
                self._device_array_types |= {type(arg) for arg in args if is_jax_array(arg)}
            return concrete.run_flat(arrays)
        except Exception as error:  # shown with the user's frames only, and once (`autoloop.tracebacks`)
            raise tracebacks.filter_traceback(error)

    def _remember_device_call(self, args, fast_key, run_flat) -> None:
        """Keep a short-path call of one device array for the shortest path (`__call__`): its key is the
        array's abstract value, ``(args[0].aval,)``. Kept only where the count of tracing calls in a row is 0
        (the shortest path never resets it)."""
        if len(args) != 1 or type(args[0]) not in self._device_array_types or self._tracing_calls_in_a_row:
            return
        if fast_key[0] is not self._last_device_call[1]:
            self._last_device_call = (type(args[0]), fast_key[0], run_flat)

    def _call_eagerly(self, args, kwargs):
        """`config.run_functions_eagerly(True)`: the plain Python function on the arguments as given (an
        input signature still checks them), as TensorFlow runs it."""
        bound = self._bind(args, kwargs)
        return self.python_function(*bound[0], **bound[1])

    def _call_recorded(self, args, kwargs):
        """A call while a GradientTape records in this thread: a tape tracking an argument records it."""
        concrete, arrays = self._concrete_and_inputs(args, kwargs, count_call=True)
        bound = self._bind(args, kwargs)
        inputs = [leaf for leaf in arguments.flatten(bound) if is_input(leaf)]
        watching = self._watching(concrete, bound)
        if watching is None:
            return function_calls.call(concrete, inputs, arrays)
        points = tape.point_values(watching.watched_variables)
        return function_calls.call(watching, inputs + points, list(arrays) + [p._numpy for p in points])

    def _watching(self, concrete, bound):
        """For a trace that reads variables, its twin whose reads tapes can differentiate (each read plus a
        watch point input, `autoloop.autodiff.tape.CallPoints`), made once and kept on it; else None."""
        watching = concrete.__dict__.get("_watching")
        if watching is None:
            with self._trace_lock:
                watching = concrete.__dict__.get("_watching")
                if watching is None:
                    watching = self._trace_once(bound, concrete.input_specs, may_create_variables=False,
                                                watch_variables=True)[0] if cells_of(concrete.graph) else False
                    concrete.__dict__["_watching"] = watching
        return watching or None

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """The traced graph for these arguments (traced now if needed)."""
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(spec for spec in self.input_signature)
        try:
            return self._concrete_and_inputs(args, kwargs)[0]
        except Exception as error:
            raise tracebacks.filter_traceback(error)

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """The signature of each concrete function traced so far, as TensorFlow prints them, one block
        each (`autoloop.signatures`)."""
        return "\n\n".join(concrete.pretty_printed_signature(verbose) for concrete in list(self._traces.values()))

    def experimental_get_tracing_count(self) -> int:
        """How many graphs this Function has traced (one per distinct input signature).

            >>> f = function(lambda x: x + 1)
            >>> f(constant(1)); f(constant(2)); f(constant(1.0))
            >>> f.experimental_get_tracing_count()
            2
        """
        return self._tracing_count

    def _concrete_and_inputs(self, args, kwargs, count_call=False):
        bound = self._bind(args, kwargs)
        # A backend that compiles per concrete shape (XLA) gets a trace per concrete shape too: its
        # graph then knows every shape its compiler will see.
        per_shape = self._backend.static_shapes
        one_trace = self.input_signature is not None and not per_shape  # one trace, at the declared shapes
        key, arrays, specs = arguments.trace_key(bound, self.reduce_retracing and not per_shape, self.backend,
                                                 key_inputs=not one_trace)
        if one_trace:
            specs = [(spec.dtype, spec.shape) for spec in self.input_signature]
        concrete = self._traces.get(key)
        traced = False
        if concrete is None:
            with self._trace_lock:  # another thread may be tracing this very key
                concrete = self._traces.get(key)
                if concrete is None:
                    concrete = self._trace(bound, specs)
                    self._traces[key] = concrete
                    self._tracing_count += 1
                    traced = True
        if count_call:
            self._count_call(traced)
        return concrete, arrays

    def _count_call(self, traced: bool) -> None:
        """Warn once when calls keep tracing (TensorFlow's frequent-retracing warning)."""
        if not traced:
            self._tracing_calls_in_a_row = 0
            return
        self._tracing_calls_in_a_row += 1
        self._last_device_call = _NO_DEVICE_CALL  # its calls would not reset the count (see `__call__`)
        if self._tracing_calls_in_a_row >= RETRACING_WARNING_THRESHOLD and not self._warned_about_retracing:
            self._warned_about_retracing = True
            warnings.warn(
                f"{name_of(self.python_function)} traced a new graph on each of its last "
                f"{self._tracing_calls_in_a_row} calls ({self._tracing_count} traces so far). Tracing is slow: "
                f"every new Python value among the arguments (a number, a string, an object) and every new "
                f"tensor dtype or shape traces again. Pass changing numbers as tensors "
                f"(autoloop.constant(x)), give input_signature or reduce_retracing=True for changing "
                f"shapes, and create the function once, outside any loop.",
                RetracingWarning, stacklevel=4)

    def _bind(self, args, kwargs):
        if self.input_signature is not None:
            args = check_signature(self.input_signature, args, self.python_function)
        if self._signature is None:
            return [list(args), dict(kwargs)]
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{name_of(self.python_function)}(): {error}") from None
        bound.apply_defaults()
        return [list(bound.args), dict(bound.kwargs)]

    def _trace(self, bound, specs) -> ConcreteFunction:
        # TensorFlow's rule for variables made while tracing: only in the first trace, and a first trace
        # that made some is traced again, without making more (`autoloop.variables.creation_rule`).
        first = self._tracing_count == 0
        concrete, created = self._trace_once(bound, specs, may_create_variables=first)
        if created:
            concrete, _ = self._trace_once(bound, specs, may_create_variables=False)
        return concrete

    def _trace_once(self, bound, specs, may_create_variables, watch_variables=False):
        """A trace and how many variables it made; `watch_variables`: each trainable variable read gets a
        watch point input after the arguments' (`autoloop.autodiff.tape.CallPoints`), for eager tapes."""
        graph = Graph(name_of(self.python_function))
        graph.static_shapes = self._backend.static_shapes
        spec_iter = iter(specs)
        points = tape.CallPoints(graph)
        names = iter(input_names(self._signature, bound))
        with context.building(graph), staging_trace.tracing(graph, may_create_variables) as trace, \
                (points.active() if watch_variables else contextlib.nullcontext()):
            def placeholder(leaf):
                name = next(names)
                if not is_input(leaf):
                    return leaf
                dtype, shape = next(spec_iter)
                return Tensor(value=graph.add_input(dtype, shape, name=name))
            args, kwargs = arguments.map_leaves(placeholder, bound)
            try:
                result = self._target(*args, **kwargs)
            except RecursionError:
                raise _unending_recursion(self.python_function) from None
            result = nest.pack_sequence_as(result, [_python_number_as_tensor(leaf) for leaf in nest.flatten(result)])
            output_leaves, outputs = [], []
            for leaf in nest.flatten(result):
                leaf = AppendedList.wrap(leaf)
                if isinstance(leaf, CompositeTensor):
                    parts = leaf.components()
                elif isinstance(leaf, Tensor):
                    parts = [leaf]
                else:
                    output_leaves.append((leaf, None))
                    continue
                outputs.extend(graph_value(graph, p) for p in parts)
                output_leaves.append((leaf, len(parts)))
        graph.outputs = outputs
        rewrite.remove_dead_nodes(graph)
        verify(graph)
        concrete = ConcreteFunction(graph, result, output_leaves, specs, trace.decisions, backend=self.backend,
                                    jax_arrays=self.jax_arrays)
        concrete.parameters = signatures.parameters(self._signature, args, kwargs)
        concrete.watched_variables = points.variables
        return concrete, trace.created_variables

    def __repr__(self):
        return f"<autoloop.Function {getattr(self.python_function, '__qualname__', self.python_function)}>"


class _BoundFunctions:
    """One bound `Function` per (function, instance), so traces are cached per object.

    The bound Function lives in the instance's ``__dict__``, so it is freed
    with the instance (the bound method inside refers back to the instance:
    a cycle the garbage collector reclaims). Instances without a ``__dict__``
    (``__slots__`` classes) fall back to a table keyed by id that keeps them
    alive.
    """

    _without_dict: dict = {}

    @classmethod
    def get(cls, function: Function, instance):
        attribute = f"__autoloop_function_{id(function)}"
        store = getattr(instance, "__dict__", None)
        if store is not None:
            bound = store.get(attribute)
            if bound is None:  # setdefault: threads binding at once all get the one stored
                bound = store.setdefault(attribute, cls._bind(function, instance))
            return bound
        key = (id(function), id(instance))
        entry = cls._without_dict.get(key)
        if entry is None or entry[0] is not instance:
            entry = cls._without_dict[key] = (instance, cls._bind(function, instance))
        return entry[1]

    @staticmethod
    def _bind(function: Function, instance) -> Function:
        return Function(function.python_function.__get__(instance), function.autograph,
                        function.input_signature, function.reduce_retracing, function.backend,
                        function.jax_arrays)


@overload
def function(fn: Callable[..., Any], *, autograph: bool = True, input_signature: Sequence[Any] | None = None,
             reduce_retracing: bool = False, backend: BackendName = "numpy", jax_arrays: bool = False,
             jit_compile: bool | None = None, experimental_relax_shapes: bool | None = None,
             experimental_autograph_options: Any = None) -> Function: ...


@overload
def function(fn: None = None, *, autograph: bool = True, input_signature: Sequence[Any] | None = None,
             reduce_retracing: bool = False, backend: BackendName = "numpy", jax_arrays: bool = False,
             jit_compile: bool | None = None, experimental_relax_shapes: bool | None = None,
             experimental_autograph_options: Any = None) -> Callable[[Callable[..., Any]], Function]: ...


def function(fn: Callable[..., Any] | None = None, *, autograph: bool = True,
             input_signature: Sequence[Any] | None = None, reduce_retracing: bool = False,
             backend: BackendName = "numpy", jax_arrays: bool = False, jit_compile: bool | None = None,
             experimental_relax_shapes: bool | None = None,
             experimental_autograph_options: Any = None) -> Function | Callable[[Callable[..., Any]], Function]:
    """Decorator (with or without arguments) making a `Function`; see the module docstring.

    `backend` is where its graphs run: ``"numpy"`` (the default) or ``"jax"``
    (compiled by XLA; ``pip install 'autoloop[jax]'``). With ``backend="jax"``,
    `jax_arrays=True` returns JAX arrays (no copy to the host) instead of Tensors.

    TensorFlow's spellings: ``jit_compile=True`` is ``backend="jax"`` (XLA);
    ``jit_compile=False`` or None leaves `backend` as given.
    ``experimental_relax_shapes=True`` is ``reduce_retracing=True``.
    ``experimental_autograph_options`` (an ``autograph.experimental.Feature``
    or a tuple of them) is accepted and changes nothing: autoloop always
    converts what those features name (see `autoloop.autograph.experimental`).
    """
    backend = _jit_backend(jit_compile, backend)
    reduce_retracing = reduce_retracing or bool(experimental_relax_shapes)
    check_features(experimental_autograph_options)

    def decorate(python_function: Callable[..., Any]) -> Function:
        return Function(python_function, autograph=autograph, input_signature=input_signature,
                        reduce_retracing=reduce_retracing, backend=backend, jax_arrays=jax_arrays)
    return decorate if fn is None else decorate(fn)


def _python_number_as_tensor(leaf):
    """A number or numpy array the traced function returned, as a constant Tensor (a function returns
    Tensors, as in TensorFlow: ``return 1 + foo`` gives ``tf.Tensor(2)``); anything else unchanged."""
    if isinstance(leaf, (bool, int, float, np.generic, np.ndarray)):
        return constant(leaf)
    return leaf


def _unending_recursion(python_function) -> RecursionError:
    """The error for a trace whose recursion never ends (a base case chosen by a tensor condition)."""
    name = name_of(python_function)
    return RecursionError(
        f"the recursion went too deep while {name} was traced. A function that calls itself is unrolled "
        f"while it is traced, one copy per call, so its recursion must end on Python values (a Python int "
        f"argument counting down); a base case chosen by a tensor condition is never reached then. "
        f"Write the recursion as a while loop over tensors, or pass the depth as a Python value")


def _jit_backend(jit_compile, backend):
    """The backend `jit_compile` asks for: XLA (``"jax"``) when true, `backend` otherwise."""
    if not jit_compile or backend == "jax":
        return backend
    if backend != "numpy":
        raise ValueError(f"jit_compile=True compiles with XLA (backend='jax'), but backend={backend!r} was given; "
                         f"give one of them")
    try:
        check_backend("jax")
    except ImportError:
        raise ImportError("jit_compile=True compiles the function with XLA through JAX (backend='jax'), and the "
                          "'jax' package is not installed: pip install 'autoloop[jax]', or leave jit_compile out "
                          "to run on numpy") from None
    return "jax"


# -- signatures ---------------------------------------------------------------
_BUSY = context.BUSY


def _refuse_session_graph(function, graph) -> None:
    """A `BackendError` at the caller's line when `function` (not on numpy) is called while a TF1 graph is
    built: a Session would run it on its dataflow executor, not on the backend it names."""
    v1_graph = sys.modules.get("autoloop.compat.v1.graph")  # no TF1 graph exists unless compat.v1 is imported
    if v1_graph is None or v1_graph.v1_graph_of(graph) is None:
        return
    from autoloop.errors import BackendError, raise_at
    caller = sys._getframe(2)
    name = getattr(function.python_function, "__name__", "the function")
    raise_at(BackendError(
        f"{name}, a backend={function.backend!r} function, is called while a TF1 graph (autoloop.compat.v1) is "
        f"built (at {caller.f_code.co_filename}:{caller.f_lineno}): a Session would run it on its dataflow "
        f"executor, not on {function.backend}. Call it outside the graph (with eager execution enabled), or "
        f"make it with backend='numpy' to run it in the Session"), (caller.f_code.co_filename, caller.f_lineno))


