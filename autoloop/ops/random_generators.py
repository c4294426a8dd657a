"""``random.Generator`` and the stateless random ops (``random.stateless_uniform``, ``stateless_normal``).

- ``Generator.from_seed(seed)`` owns a stream of numbers: each call of
  ``normal``/``uniform``/``truncated_normal`` (eagerly, or each run of a traced
  function that calls it) continues the stream, so two generators of one
  seed give the same sequence, independent of `random.set_seed` and of any
  other random op. ``Generator.from_non_deterministic_state()`` seeds from
  the operating system.
- ``stateless_uniform(shape, seed)`` / ``stateless_normal(shape, seed)``: the
  numbers are a function of `seed` (two integers, shape ``[2]``, maybe a
  tensor computed in a loop) and the arguments alone: the same seed gives
  the same numbers on every call, in every trace and on every backend.

The numbers are numpy's (PCG64 seeded by the seed pair), not TensorFlow's:
the same seed gives different numbers in TensorFlow. The stateless ops and
the seed pair ``(a, b)`` draw what ``set_seed(a)`` and an op ``seed=b`` draw
first.

    >>> g = Generator.from_seed(1); a = g.normal([2]); b = g.normal([2])   # a != b
    >>> Generator.from_seed(1).normal([2]).numpy() == a.numpy()             # [True, True]
    >>> stateless_uniform([2], seed=[1, 2]).numpy() == stateless_uniform([2], seed=[1, 2]).numpy()
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.ops import infer, registry
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.random_ops import RandomStream, draw_normal, draw_uniform, parameter_tensor, shape_tensor
from autoloop.ops.registry import OpDef
from autoloop.shapes import TensorShape


class Generator:
    """A stream of random numbers of its own; see the module docstring."""

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is None:
            raise TypeError("make a Generator with Generator.from_seed(seed) or "
                            "Generator.from_non_deterministic_state()")
        self._stream = copy_from

    @classmethod
    def from_seed(cls, seed, alg=None) -> Generator:
        if not isinstance(seed, int | np.integer):
            raise TypeError(f"Generator.from_seed takes an int, got {seed!r}")
        return cls(RandomStream((int(seed), 0)))

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> Generator:
        return cls(RandomStream(None))

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        """Numbers uniform in ``[minval, maxval)`` (see `autoloop.random.uniform`), from this stream."""
        return draw_uniform(shape, minval, maxval, dtype, self._stream, name)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        """Normal numbers (see `autoloop.random.normal`), from this stream."""
        return draw_normal("RandomNormal", shape, mean, stddev, dtype, self._stream, name)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        """Normal numbers within two `stddev` of `mean` (see `autoloop.random.truncated_normal`), from this stream."""
        return draw_normal("TruncatedNormal", shape, mean, stddev, dtype, self._stream, name)

    def __repr__(self):
        return f"<autoloop.random.Generator {self._stream!r}>"


# -- StatelessRandomUniform / StatelessRandomNormal: the stateful kernels on a stream made from the seed ---------
def _check_seed(op_name, seed) -> None:
    infer.check_dtype(op_name, seed, infer.INTEGERS, 3)
    if not seed.shape.is_compatible_with(TensorShape([2])):
        raise ValueError(f"{op_name}: seed must have shape [2] (two integers), got {seed.shape}")


def _stateless(op_name, stateful_name):
    stateful = registry.get(stateful_name)

    def rule(dims, first, second, seed, dtype):
        _check_seed(op_name, seed)
        return stateful.infer(dims, first, second, dtype=dtype, stream=None)

    def kernel(dims, first, second, seed, dtype):
        stream = RandomStream(tuple(int(part) for part in np.ravel(seed)))
        return stateful.kernel(dims, first, second, dtype=dtype, stream=stream)

    def gradient(op, grad):
        return list(stateful.gradient_rule()(op, grad)) + [None]

    registry.register(OpDef(op_name, kernel=kernel, infer=rule, gradient=gradient,
                   kernels={"jax": "autoloop.backends.jax.kernels.stateless:draw"}))


_stateless("StatelessRandomUniform", "RandomUniform")
_stateless("StatelessRandomNormal", "RandomNormal")


def _seed_tensor(seed, op_name):
    seed = convert(seed) if hasattr(seed, "dtype") else convert(np.asarray(seed, np.int64))
    if not seed.dtype.is_integer:
        raise TypeError(f"{op_name}: seed must be two integers, got {seed.dtype.name}")
    return seed


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None):
    """Numbers uniform in ``[minval, maxval)``, a function of `seed` (shape ``[2]``); see the module docstring."""
    dtype = dtypes.as_dtype(dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"stateless_uniform: give maxval for the integer dtype {dtype.name}")
        maxval = 1
    inputs = [shape_tensor(shape), parameter_tensor(minval, dtype),
              parameter_tensor(maxval, dtype), _seed_tensor(seed, "stateless_uniform")]
    return apply("StatelessRandomUniform", inputs, {"dtype": dtype}, name=name)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
    """Normal numbers, a function of `seed` (shape ``[2]``); see the module docstring."""
    dtype = dtypes.as_dtype(dtype)
    inputs = [shape_tensor(shape), parameter_tensor(mean, dtype),
              parameter_tensor(stddev, dtype), _seed_tensor(seed, "stateless_normal")]
    return apply("StatelessRandomNormal", inputs, {"dtype": dtype}, name=name)
