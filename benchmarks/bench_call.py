"""What a call costs beyond its loop: a cached call of a small function, an eager op, and the first call.

    python benchmarks/bench_call.py             # full run
    python benchmarks/bench_call.py --quick     # fewer rounds: a smoke run

Cached call: ``add_one(x) = x + 1`` on an int32 scalar, after its first call.
"numpy" is the same plain Python function over numpy (``x + np.int32(1)``):
the cost of a Python call plus one numpy operation, the floor for any
wrapper. The autoloop rows are a `@autoloop.function` call (trace lookup,
compiled graph, result tensor) and, underneath it, the compiled graph
called on numpy values.

Eager ops: one op on eager tensors outside any function (``x + y`` on
int32 scalars, ``x + 1`` with a Python number, ``a * 2.0`` and ``tanh(a)``
on a float32 vector of 1,000), against the same numpy operation on the
tensors' numpy values: the cost of checking the inputs as a traced op
would and wrapping the result. TensorFlow and JAX rows run their own eager
ops.

First call: a new function object with a new code object (see
`harness.fresh_function`), called once: autoloop converts it, traces it,
compiles the graph and runs it; TensorFlow's `tf.function` converts it with
AutoGraph, traces and runs it; `jax.jit` traces and compiles (with XLA) the
`jax.lax` version. The functions are W1's ``sum_square`` and W2's
``collatz`` (bench_loops.py), on small inputs, so the time is the fixed
cost. autoloop's first call is also split into its phases.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import autoloop as al
from bench_loops import collatz_python, sum_square_python
from harness import (Spread, check_result, command_line, environment, format_ratio, format_seconds,
                     format_spread, fresh_function, interleaved_apart, markdown_table, optional, skipped_frameworks,
                     time_each)


# -- cached call ------------------------------------------------------------------------------
def add_one(x):
    return x + 1


def cached_call_impls() -> dict:
    one = np.int32(1)

    def numpy_add_one(x):
        return x + one

    x_numpy, x_tensor = np.int32(41), al.constant(41)
    function = al.function(add_one)
    compiled = function.get_concrete_function(x_tensor).compiled
    impls = {"numpy": lambda: numpy_add_one(x_numpy), "autoloop function": lambda: function(x_tensor),
             "autoloop compiled graph": lambda: compiled(x_numpy)}
    tf = optional("tensorflow")
    if tf is not None:
        tf_function, x_tf = tf.function(add_one), tf.constant(41)
        impls["tensorflow"] = lambda: tf_function(x_tf)
    jax = optional("jax")
    if jax is not None:
        jax_function, x_jax = jax.jit(add_one), jax.numpy.int32(41)
        impls["jax"] = lambda: jax_function(x_jax).block_until_ready()
    for name, fn in impls.items():
        result = fn()
        check_result("add_one", name, result[0] if name == "autoloop compiled graph" else result, np.int32(42))
    return impls


# -- eager ops --------------------------------------------------------------------------------
def eager_op_impls() -> dict[str, dict]:
    """{case: {implementation: zero-argument callable}}, each result checked against numpy's."""
    x, y, a = np.int32(3), np.int32(4), np.linspace(-1, 1, 1000, dtype=np.float32)
    two, one = np.float32(2.0), np.int32(1)
    cases = {"x + y (int32 scalars)": ((x, y), lambda x, y: x + y, lambda x, y: x + y),
             "x + 1 (a Python number)": ((x,), lambda x: x + one, lambda x: x + 1),
             "a * 2.0 (float32[1000])": ((a,), lambda a: a * two, lambda a: a * 2.0),
             "tanh(a) (float32[1000])": ((a,), np.tanh, None)}
    tf, jax = optional("tensorflow"), optional("jax")
    impls = {}
    for case, (arrays, numpy_op, op) in cases.items():
        tensors = [al.constant(v) for v in arrays]
        row = {"numpy": lambda numpy_op=numpy_op, arrays=arrays: numpy_op(*arrays),
               "autoloop": lambda op=op or al.tanh, tensors=tensors: op(*tensors)}
        if tf is not None:
            tf_tensors = [tf.constant(v) for v in arrays]
            row["tensorflow"] = lambda op=op or tf.tanh, tf_tensors=tf_tensors: op(*tf_tensors)
        if jax is not None:
            jax_arrays = [jax.numpy.asarray(v) for v in arrays]
            row["jax"] = lambda op=op or jax.numpy.tanh, jax_arrays=jax_arrays: op(*jax_arrays).block_until_ready()
        expected = row["numpy"]()
        for name, fn in row.items():
            check_result(case, name, np.asarray(fn()), expected, rtol=1e-6 if "tanh" in case else 0.0)
        impls[case] = row
    return impls


# -- first call -------------------------------------------------------------------------------
def _jax_sum_square(limit):
    import jax
    import jax.numpy as jnp
    return jax.lax.while_loop(lambda s: s[0] < limit, lambda s: (s[0] + 1, s[1] + s[0] * s[0]),
                              (jnp.int32(0), jnp.int32(0)))[1]


def _jax_collatz(n):
    import jax
    import jax.numpy as jnp

    def body(state):
        n, steps = state
        return jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n), steps + 1
    return jax.lax.while_loop(lambda s: s[0] != 1, body, (n, jnp.int32(0)))[1]


# name: (the plain function, its jax.lax twin, the argument, the expected result)
FIRST_CALLS = {"sum_square": (sum_square_python, _jax_sum_square, 10, np.int32(285)),
               "collatz": (collatz_python, _jax_collatz, 27, np.int32(111))}


def first_call_setups(name: str) -> dict:
    """{implementation: setup}; a setup makes a fresh function (untimed) and returns its first call."""
    python_function, jax_function, argument, expected = FIRST_CALLS[name]
    tensor = al.constant(argument)

    def autoloop_setup():
        function = al.function(fresh_function(python_function))
        return lambda: function(tensor)
    setups = {"autoloop": autoloop_setup}
    tf = optional("tensorflow")
    if tf is not None:
        tf_tensor = tf.constant(argument)

        def tf_setup():
            function = tf.function(fresh_function(python_function))
            return lambda: function(tf_tensor)
        setups["tensorflow"] = tf_setup
    jax = optional("jax")
    if jax is not None:
        jax_argument = jax.numpy.int32(argument)

        def jax_setup():
            function = jax.jit(fresh_function(jax_function))
            return lambda: function(jax_argument).block_until_ready()
        setups["jax"] = jax_setup
    for impl, setup in setups.items():
        check_result(f"first call of {name}", impl, setup()(), expected)
    return setups


def autoloop_phases(name: str, rounds: int) -> dict[str, Spread]:
    """autoloop's first call split: convert, trace, compile, run (median, min–max seconds)."""
    python_function, _, argument, _ = FIRST_CALLS[name]
    tensor = al.constant(argument)
    samples = {"convert": [], "trace": [], "compile": [], "run": []}
    for _ in range(rounds):
        function = al.function(fresh_function(python_function))
        start = time.perf_counter()
        function._target  # noqa: B018  (the conversion happens on first access)
        converted = time.perf_counter()
        concrete = function.get_concrete_function(tensor)
        traced = time.perf_counter()
        concrete.run_flat  # noqa: B018  (the graph compiled, and its entry point written, on first access)
        compiled = time.perf_counter()
        function(tensor)
        ran = time.perf_counter()
        for phase, seconds in zip(samples, (converted - start, traced - converted, compiled - traced, ran - compiled)):
            samples[phase].append(seconds)
    return {phase: Spread.of(values) for phase, values in samples.items()}


# -- running ----------------------------------------------------------------------------------
def measure(quick: bool = False):
    rounds = 3 if quick else 9
    cached = interleaved_apart(cached_call_impls(), rounds, repeat=200 if quick else 5000)
    eager = {case: interleaved_apart(impls, rounds, repeat=100 if quick else 2000)
             for case, impls in eager_op_impls().items()}
    first = {name: time_each(first_call_setups(name), rounds) for name in FIRST_CALLS}
    phases = {name: autoloop_phases(name, rounds) for name in FIRST_CALLS}
    return cached, eager, first, phases


def tables(cached, eager, first, phases) -> str:
    cached_rows = [[name, format_spread(timing.seconds), format_ratio(timing.ratio)] for name, timing in cached.items()]
    eager_rows = [[case, name, format_spread(timing.seconds)] for case, timings in eager.items()
                  for name, timing in timings.items()]
    first_rows = [[f"first call of {name}", impl, format_spread(spread)]
                  for name, spreads in first.items() for impl, spread in spreads.items()]
    phase_names = list(next(iter(phases.values())))
    phase_rows = [[name] + [format_seconds(phases[name][phase].median) for phase in phase_names]
                  for name in phases]
    return "\n\n".join([
        markdown_table(["cached call of add_one(x)", "time per call, median (min–max)", "vs numpy"], cached_rows),
        markdown_table(["eager op", "implementation", "time per op, median (min–max)"], eager_rows),
        markdown_table(["workload", "implementation", "time, median (min–max)"], first_rows),
        markdown_table(["autoloop first call, median"] + phase_names, phase_rows)])


def main(argv=None) -> int:
    args = command_line(__doc__, argv, "fewer rounds and calls: a smoke run")
    print("\n".join(environment() + skipped_frameworks()))
    print(tables(*measure(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
