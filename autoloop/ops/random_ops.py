"""Random numbers (``autoloop.random``): `uniform`, `normal`, `truncated_normal`, `set_seed`.

Random ops are stateful: they are never folded or pruned, and each run
draws new numbers. Where the numbers come from is a *stream*, a numpy
``PCG64`` generator seeded by a pair ``(global seed, op seed)``:

- the global seed is the last ``set_seed(seed)`` (None until then);
- the op seed is the op's ``seed=`` argument; without one, it is a counter:
  eagerly the number of random ops run since the last `set_seed`, in a
  traced function the number of random ops traced before this one in the
  same trace (0, 1, 2, ...);
- with neither seed set, a stream is seeded from the operating system
  (different numbers on every run of the program); an op seed without a
  global seed pairs with a fixed default global seed.

Eagerly, ops of one seed pair share a stream kept until the next
`set_seed`: ``uniform([2], seed=1)`` twice gives two different draws, the
same two after every ``set_seed``. In a traced function each random op gets
its own stream when it is traced, and every call of the function draws the
next numbers of it: the first call gives what the same code run eagerly
right after `set_seed` gives, later calls continue the sequence. A new trace
(new input dtypes or shapes) starts its streams afresh; `set_seed` called
after tracing does not change an existing trace.

    >>> set_seed(7); a = uniform([2], seed=1); b = uniform([2], seed=1)
    >>> set_seed(7); uniform([2], seed=1).numpy() == a.numpy()
    array([ True,  True])
"""

from __future__ import annotations

import threading

import numpy as np

from autoloop import dtypes
from autoloop.errors import InvalidArgumentError
from autoloop.ir import context
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.math_ops import binary_inputs
from autoloop.ops.gradient_support import reduce_to_input
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.ops.shape_ops import shape_operand
from autoloop.shapes import TensorShape

DEFAULT_GLOBAL_SEED = 87654321  # pairs with an op seed given without a global seed
_SEED_MASK = 2 ** 64 - 1


class RandomStream:
    """The numbers of one seed pair: a numpy generator shared safely between threads."""

    def __init__(self, seeds):
        self.seeds = seeds
        entropy = [seed & _SEED_MASK for seed in seeds] if seeds is not None else None
        self._generator = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
        self._lock = threading.Lock()

    def draw(self, sample):
        """``sample(generator)``, one caller at a time."""
        with self._lock:
            return sample(self._generator)

    @property
    def state(self):
        """Where the stream is: assign a saved state to draw the same numbers again."""
        with self._lock:
            return self._generator.bit_generator.state

    @state.setter
    def state(self, saved):
        with self._lock:
            self._generator.bit_generator.state = saved

    def __repr__(self):
        return f"RandomStream(seeds={self.seeds})"


class _Seeds:
    """The global seed and the eager streams: the one program-wide random state, as in TensorFlow."""

    def __init__(self):
        self.lock = threading.Lock()
        self.global_seed = None
        self.eager_ops = 0
        self.eager_streams: dict = {}

    def set(self, seed) -> None:
        with self.lock:
            self.global_seed = None if seed is None else int(seed)
            self.eager_ops = 0
            self.eager_streams = {}

    def stream(self, op_seed) -> RandomStream:
        """The stream for a random op created now (eagerly, or traced into the current graph)."""
        with self.lock:
            global_seed = self.global_seed
            graph = context.current_graph()
            if global_seed is None and op_seed is None:
                return RandomStream(None)
            if global_seed is None:
                global_seed = DEFAULT_GLOBAL_SEED
            if graph is not None:
                if op_seed is None:
                    op_seed = _next_traced_op(graph)
                return RandomStream((global_seed, int(op_seed)))
            if op_seed is None:
                op_seed = self.eager_ops
                self.eager_ops += 1
            pair = (global_seed, int(op_seed))
            if pair not in self.eager_streams:
                self.eager_streams[pair] = RandomStream(pair)
            return self.eager_streams[pair]


_SEEDS = _Seeds()


def _next_traced_op(graph) -> int:
    """0, 1, 2, ... for the random ops of one trace, in the order they are traced.

    The count lives on the trace's outermost graph, so it dies with the
    trace and no two traces share it (sub-graphs of loops and branches are
    still being built when their random ops are traced, so counting nodes
    would miss them).
    """
    while graph.parent is not None:
        graph = graph.parent
    count = getattr(graph, "random_ops_traced", 0)
    graph.random_ops_traced = count + 1
    return count


def set_seed(seed):
    """Set the global seed (None: unseeded); restarts the eager sequence. See the module docstring."""
    if seed is not None and not isinstance(seed, int | np.integer):
        raise TypeError(f"set_seed takes an int or None, got {seed!r}")
    _SEEDS.set(seed)


# -- shape and parameters ---------------------------------------------------------------------
def _output_shape(op_name, dims: Spec) -> TensorShape:
    infer.check_dtype(op_name, dims, infer.INTEGERS, 0)
    if dims.value is not None:
        sizes = [int(d) for d in np.atleast_1d(dims.value)]
        if any(d < 0 for d in sizes):
            raise ValueError(f"{op_name}: dimensions must be >= 0, got shape {sizes}")
        return TensorShape(sizes)
    length = dims.shape[0] if dims.shape.rank == 1 else None
    return TensorShape(None if length is None else [None] * length)


def _check_parameter(op_name, what, spec: Spec, shape: TensorShape, dtype) -> None:
    if spec.dtype is not dtype:
        raise TypeError(f"{op_name}: {what} must be {dtype.name} like the result, got {spec.dtype.name}")
    broadcast = infer.broadcast_shapes(op_name, shape, spec.shape)
    if shape.rank is not None and broadcast.rank is not None and (
            broadcast.rank != shape.rank or not shape.is_compatible_with(broadcast)):
        raise ValueError(f"{op_name}: {what} of shape {spec.shape} does not broadcast to the shape {shape}")


def _sizes(dims):
    return tuple(int(d) for d in np.atleast_1d(dims))


# -- RandomUniform -------------------------------------------------------------------------
_UNIFORM_DTYPES = infer.FLOATS + infer.INTEGERS


def _check_result_dtype(op_name, dtype, allowed) -> None:
    if dtype not in allowed:
        raise TypeError(f"{op_name} does not make {dtype.name} numbers; it makes "
                        f"{', '.join(d.name for d in allowed)}")


def _uniform_infer(dims, minval, maxval, dtype, stream):
    _check_result_dtype("RandomUniform", dtype, _UNIFORM_DTYPES)
    shape = _output_shape("RandomUniform", dims)
    _check_parameter("RandomUniform", "minval", minval, shape, dtype)
    _check_parameter("RandomUniform", "maxval", maxval, shape, dtype)
    if dtype.is_integer and (minval.shape.rank != 0 or maxval.shape.rank != 0):
        raise ValueError("RandomUniform: integer minval and maxval must be scalars")
    return Spec(dtype, shape)


def _uniform_kernel(dims, minval, maxval, dtype, stream):
    numpy_type = dtype.as_numpy_dtype
    if dtype.is_integer:
        if not minval < maxval:
            raise InvalidArgumentError(f"RandomUniform: need minval < maxval, got {minval} >= {maxval}")
        return stream.draw(lambda g: g.integers(minval, maxval, size=_sizes(dims), dtype=numpy_type))
    draw_type = np.float64 if dtype is dtypes.float64 else np.float32
    unit = stream.draw(lambda g: g.random(_sizes(dims), dtype=draw_type)).astype(numpy_type)
    return (minval + (maxval - minval) * unit).astype(numpy_type, copy=False)


def _uniform_gradient(op, grad):
    """``minval + (maxval - minval) * u`` for the drawn ``u``."""
    if not op.output_specs[0].dtype.is_floating:
        return [None, None, None]
    low, high = op.inputs[1], op.inputs[2]
    unit = (op.outputs[0] - low) / (high - low)
    return [None, reduce_to_input(op, 1, grad - grad * unit), reduce_to_input(op, 2, grad * unit)]


register(OpDef("RandomUniform", kernel=_uniform_kernel, infer=_uniform_infer, stateful=True,
               gradient=_uniform_gradient,
               kernels={"jax": "autoloop.backends.jax.kernels.effects:uniform"}))


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Numbers drawn uniformly from ``[minval, maxval)``, in a tensor of `shape`.

    Floats default to ``[0, 1)``; integer dtypes (int32, int64) need
    `maxval`. Seeding: see the module docstring.
    """
    return draw_uniform(shape, minval, maxval, dtype, _SEEDS.stream(seed), name)


def draw_uniform(shape, minval, maxval, dtype, stream: RandomStream, name=None):
    """`uniform` drawing from `stream` (a `Generator`'s, or a seed pair's)."""
    dtype = dtypes.as_dtype(dtype)
    _check_result_dtype("uniform", dtype, _UNIFORM_DTYPES)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"uniform: give maxval for the integer dtype {dtype.name}")
        maxval = 1
    low, high = (parameter_tensor(value, dtype) for value in (minval, maxval))
    attrs = {"dtype": dtype, "stream": stream}
    return apply("RandomUniform", [shape_tensor(shape), low, high], attrs, name=name or "random_uniform")


# -- RandomNormal, TruncatedNormal ---------------------------------------------------------------
def _normal_infer(op_name):
    def rule(dims, mean, stddev, dtype, stream):
        _check_result_dtype(op_name, dtype, infer.FLOATS)
        shape = _output_shape(op_name, dims)
        _check_parameter(op_name, "mean", mean, shape, dtype)
        _check_parameter(op_name, "stddev", stddev, shape, dtype)
        return Spec(dtype, shape)
    return rule


def _standard_normal(generator, sizes, draw_type):
    return generator.standard_normal(sizes, dtype=draw_type)


def _truncated_standard_normal(generator, sizes, draw_type):
    """Standard normal numbers, those beyond 2 drawn again (TensorFlow's truncation)."""
    standard = generator.standard_normal(sizes, dtype=draw_type)
    outside = np.abs(standard) > 2
    while outside.any():
        standard[outside] = generator.standard_normal(int(outside.sum()), dtype=draw_type)
        outside = np.abs(standard) > 2
    return standard


def _normal_kernel(sample):
    def kernel(dims, mean, stddev, dtype, stream):
        draw_type = np.float64 if dtype is dtypes.float64 else np.float32
        standard = stream.draw(lambda g: sample(g, _sizes(dims), draw_type))
        numpy_type = dtype.as_numpy_dtype
        return (standard.astype(numpy_type) * stddev + mean).astype(numpy_type, copy=False)
    return kernel


def _normal_gradient(op, grad):
    """``mean + stddev * z`` for the drawn ``z``."""
    mean, stddev = op.inputs[1], op.inputs[2]
    standard = (op.outputs[0] - mean) / stddev
    return [None, reduce_to_input(op, 1, grad), reduce_to_input(op, 2, grad * standard)]


for _name, _sample, _jax in (("RandomNormal", _standard_normal, "normal"),
                             ("TruncatedNormal", _truncated_standard_normal, "truncated_normal")):
    register(OpDef(_name, kernel=_normal_kernel(_sample), infer=_normal_infer(_name), stateful=True,
                   gradient=_normal_gradient, kernels={"jax": f"autoloop.backends.jax.kernels.effects:{_jax}"}))


def _normal_fn(op_name, public_name, doc):
    def fn(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
        return draw_normal(op_name, shape, mean, stddev, dtype, _SEEDS.stream(seed), name)
    fn.__name__, fn.__doc__ = public_name, doc
    return fn


def draw_normal(op_name, shape, mean, stddev, dtype, stream: RandomStream, name=None):
    """`normal` (`op_name` ``RandomNormal``) or `truncated_normal` (``TruncatedNormal``) drawing from `stream`."""
    dtype = dtypes.as_dtype(dtype)
    _check_result_dtype("normal" if op_name == "RandomNormal" else "truncated_normal", dtype, infer.FLOATS)
    public_name = "random_normal" if op_name == "RandomNormal" else "truncated_normal"  # TF's node name
    attrs = {"dtype": dtype, "stream": stream}
    inputs = [shape_tensor(shape), parameter_tensor(mean, dtype), parameter_tensor(stddev, dtype)]
    return apply(op_name, inputs, attrs, name=name or public_name)


normal = _normal_fn("RandomNormal", "normal", """Numbers from a normal distribution, in a tensor of `shape` (floats).

    `mean` and `stddev` are numbers or tensors broadcasting to `shape`.
    Seeding: see the module docstring.
    """)
truncated_normal = _normal_fn("TruncatedNormal", "truncated_normal", """Numbers as `normal` draws them, those
    more than two `stddev` from `mean` drawn again.

    Seeding: see the module docstring.
    """)


def shape_tensor(shape):
    """The shape of a random op's result as an int32 tensor (a list of ints, or a tensor as given)."""
    dims = shape_operand(shape, "random")
    return convert(np.array(dims, dtype=np.int32)) if isinstance(dims, tuple) else dims


def parameter_tensor(value, dtype):
    """A parameter (``minval``, ``mean``, ...) as a tensor of the result's `dtype`."""
    return binary_inputs(convert(np.zeros((), dtype.as_numpy_dtype)), value)[1]
