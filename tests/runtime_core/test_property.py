"""Property test: random small while_loop/cond programs over int32 scalars.

A program is a block of statements over the variables ``a``, ``b``, ``c``:

    ("assign", name, expr)
    ("if", comparison, then_block, else_block)              -> autoloop.cond
    ("while", comparison, limit, body_block, limit_tensor)  -> autoloop.while_loop(maximum_iterations=limit)

Each program runs three ways, which must agree: eagerly, traced with
``function(autograph=False)`` (and replayed in checked mode), and in a
plain-Python reference interpreter with int32 wrap-around arithmetic.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autoloop as tf

from .helpers import run_checked

NAMES = ("a", "b", "c")

# -- programs --------------------------------------------------------------------------
_leaves = st.one_of(st.sampled_from(NAMES).map(lambda name: ("var", name)),
                    st.integers(-6, 6).map(lambda value: ("const", value)))
expressions = st.recursive(
    _leaves,
    lambda sub: st.one_of(st.tuples(st.sampled_from(["add", "sub", "mul", "min", "max"]), sub, sub),
                          st.tuples(st.sampled_from(["floordiv", "mod"]), sub, st.integers(1, 5))),
    max_leaves=5)
comparisons = st.tuples(st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"]), expressions, expressions)


def blocks(depth: int):
    assign = st.tuples(st.just("assign"), st.sampled_from(NAMES), expressions)
    if depth == 0:
        statement = assign
    else:
        inner = blocks(depth - 1)
        statement = st.one_of(
            assign,
            st.tuples(st.just("if"), comparisons, inner, inner),
            st.tuples(st.just("while"), comparisons, st.integers(0, 4), inner, st.booleans()))
    return st.lists(statement, min_size=1, max_size=3)


programs = blocks(2)
int32_inputs = st.tuples(*[st.integers(-20, 20)] * len(NAMES))


# -- the reference interpreter (plain Python ints, wrapped to int32) ---------------------
def wrap(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


_PY_BINARY = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
              "min": min, "max": max, "floordiv": lambda x, k: x // k, "mod": lambda x, k: x % k}
_COMPARE = {"lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y,
            "ge": lambda x, y: x >= y, "eq": lambda x, y: x == y, "ne": lambda x, y: x != y}


def py_expr(expr, env):
    kind = expr[0]
    if kind == "var":
        return env[expr[1]]
    if kind == "const":
        return expr[1]
    right = expr[2] if kind in ("floordiv", "mod") else py_expr(expr[2], env)
    return wrap(_PY_BINARY[kind](py_expr(expr[1], env), right))


def py_block(block, env):
    for statement in block:
        kind = statement[0]
        env = dict(env)
        if kind == "assign":
            env[statement[1]] = py_expr(statement[2], env)
        elif kind == "if":
            _, (op, left, right), then_block, else_block = statement
            env = py_block(then_block if _COMPARE[op](py_expr(left, env), py_expr(right, env)) else else_block, env)
        else:
            _, (op, left, right), limit, body, _ = statement
            iterations = 0
            while iterations < limit and _COMPARE[op](py_expr(left, env), py_expr(right, env)):
                env = py_block(body, env)
                iterations += 1
    return env


# -- the same program on autoloop ----------------------------------------------------------
_TF_BINARY = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
              "min": tf.minimum, "max": tf.maximum, "floordiv": lambda x, k: x // k, "mod": lambda x, k: x % k}


def tf_expr(expr, env):
    kind = expr[0]
    if kind == "var":
        return env[expr[1]]
    if kind == "const":
        return tf.constant(expr[1])
    right = expr[2] if kind in ("floordiv", "mod") else tf_expr(expr[2], env)
    return _TF_BINARY[kind](tf_expr(expr[1], env), right)


def tf_compare(comparison, env):
    op, left, right = comparison
    return _COMPARE[op](tf_expr(left, env), tf_expr(right, env))


def tf_block(block, env):
    for statement in block:
        kind = statement[0]
        env = dict(env)
        if kind == "assign":
            env[statement[1]] = tf_expr(statement[2], env)
        elif kind == "if":
            _, comparison, then_block, else_block = statement
            outputs = tf.cond(tf_compare(comparison, env),
                              lambda: _values(tf_block(then_block, env)),
                              lambda: _values(tf_block(else_block, env)))
            env = dict(zip(NAMES, outputs))
        else:
            _, comparison, limit, body, limit_is_tensor = statement
            outputs = tf.while_loop(
                lambda *values: tf_compare(comparison, dict(zip(NAMES, values))),
                lambda *values: _values(tf_block(body, dict(zip(NAMES, values)))),
                _values(env),
                maximum_iterations=tf.constant(limit) if limit_is_tensor else limit)
            env = dict(zip(NAMES, outputs))
    return env


def _values(env) -> tuple:
    return tuple(env[n] for n in NAMES)


def as_function(program):
    def run(a, b, c):
        env = tf_block(program, {"a": a, "b": b, "c": c})
        return tuple(env[n] for n in NAMES)
    return run


@settings(max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs, inputs=int32_inputs)
def test_random_programs_agree_eager_traced_and_python(program, inputs):
    expected = tuple(py_block(program, dict(zip(NAMES, inputs)))[n] for n in NAMES)
    args = tuple(tf.constant(np.int32(v)) for v in inputs)
    run = as_function(program)

    eager = run(*args)
    assert tuple(int(t.numpy()) for t in eager) == expected
    assert all(t.dtype is tf.int32 for t in eager)

    function = tf.function(run, autograph=False)
    traced = function(*args)
    assert tuple(int(t.numpy()) for t in traced) == expected
    assert all(t.dtype is tf.int32 and t.shape == tf.TensorShape([]) for t in traced)
    run_checked(function.get_concrete_function(*args), args)
