"""Generated code for element-wise ops: inline templates give exactly what the kernels give.

The compiled executor inlines an op's ``expr`` (``(a == b)``) or, where
tracing proved every input a scalar, its ``scalar_expr`` (``(a if a > b
else b)``) instead of calling the numpy kernel: on numpy scalars a binary
ufunc call costs about 0.5 µs and an operator about 25 ns. These tests run
every element-wise op of the registry through generated code on scalars
(numpy scalars and 0-d arrays, the two forms a rank-0 value takes at run
time), on arrays and on a scalar next to an array, over edge values (NaN,
signed zeros, infinities, integer extremes), and require the kernel's exact
bits, dtype and shape, a numpy value (never a Python number), and the same
error where the kernel raises. A last test lists the ops whose generated code
still calls a kernel on scalars, and why.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import autoloop  # noqa: F401  (registers every op)
from autoloop import dtypes
from autoloop.execute import CompiledGraph
from autoloop.ops import registry
from autoloop.ops.dispatch import apply
from autoloop.ops.registry import Spec
from autoloop.shapes import TensorShape
from ophelpers import trace_specs

# Element-wise ops whose kernel is not a bare numpy ufunc, with their arity.
NON_UFUNC_ELEMENTWISE = {"RealDiv": 2, "Sigmoid": 1, "SelectV2": 3, "Cast": 1, "Identity": 1, "Round": 1, "Rsqrt": 1,
                         "Relu": 1}

# Ops whose generated code still calls the kernel when every input is a scalar, and why.
KERNEL_ON_SCALARS = {
    **{name: "a unary ufunc on a numpy scalar costs about 0.15 µs (a binary one 0.5 µs); math.%s is not "
             "bit-identical to numpy's SIMD loops (tanh: a quarter of sampled float64 values differ on "
             "AVX-512), and turning its Python float back into np.float32 costs more than the ufunc"
             % name.lower()
       for name in ("Sqrt", "Exp", "Log", "Log1p", "Sin", "Cos", "Tanh")},
    **{name: "a unary ufunc on a numpy scalar costs about 0.12 µs; math.%s gives a Python int, and an "
             "exact numpy-typed form costs more than the ufunc" % name.lower() for name in ("Floor", "Ceil")},
    "Sign": "a unary ufunc (about 0.12 µs); a conditional form needs constants -1, 0, 1 of the input's dtype, "
            "which a template cannot bind",
    "IsFinite": "a unary ufunc (about 0.12 µs on a scalar), not the 0.5 µs of a binary one",
    "Round": "np.round is a Python function around the ufunc (about 1 µs on a scalar); Python's round() "
             "gives a Python int",
    "Rsqrt": "two ufuncs (about 0.3 µs on a scalar); no exact cheaper form",
    "Relu": "np.maximum against a zero of the input's dtype, which a template cannot bind",
    "RealDiv": "int8, int16 and uint8 only: TensorFlow divides them in float32, numpy's / in float64",
    "Sigmoid": "three ufuncs (about 1 µs on a scalar); an exact scalar form needs a constant 1 of the "
               "input's dtype, which a template cannot bind",
    "Pow": "float only: numpy's scalar ** is C pow, while np.power takes sqrt for an exponent of 0.5 "
           "((-0.0) ** 0.5 is 0.0 against np.power's -0.0, (-inf) ** 0.5 is inf against nan)",
    "Cast": "numpy's scalar constructors (np.int32(x)) cost about what astype costs; there is no cheaper "
            "form with astype's exact results",
}

EDGE_VALUES = {
    dtypes.bool_: [False, True],
    dtypes.int8: [0, 1, -1, 3, -7, 127, -128],
    dtypes.int16: [0, 1, -1, 3, -7, 2**15 - 1, -2**15],
    dtypes.int32: [0, 1, -1, 2, -7, 7, 2**31 - 1, -2**31],
    dtypes.int64: [0, 1, -1, 3, -7, 2**63 - 1, -2**63],
    dtypes.uint8: [0, 1, 2, 7, 255],
    dtypes.float16: [0.0, -0.0, 1.0, -2.5, 0.5, np.inf, -np.inf, np.nan, 6e-8, 65504.0],
    dtypes.float32: [0.0, -0.0, 1.0, -2.5, 0.5, np.inf, -np.inf, np.nan, 1e-45, 3e38],
    dtypes.float64: [0.0, -0.0, 1.0, -2.5, 0.5, np.inf, -np.inf, np.nan, 5e-324, 1e308],
}
ALL_DTYPES = tuple(EDGE_VALUES)


def elementwise_ops() -> dict[str, int]:
    """Every registered element-wise op, with its number of inputs."""
    ops = {}
    for name, opdef in registry.all_ops().items():
        if isinstance(opdef.kernel, np.ufunc) and opdef.kernel.signature is None:  # not matmul's gufunc
            ops[name] = opdef.kernel.nin
        elif name in NON_UFUNC_ELEMENTWISE:
            ops[name] = NON_UFUNC_ELEMENTWISE[name]
    return ops


def attrs_for(op_name, dtype):
    return {"dtype": dtypes.float64 if dtype is not dtypes.float64 else dtypes.int32} if op_name == "Cast" else {}


def input_dtypes(op_name, arity, dtype):
    """The inputs' dtypes for an op applied to `dtype` values (SelectV2's condition is bool)."""
    if op_name == "SelectV2":
        return (dtypes.bool_, dtype, dtype)
    return (dtype,) * arity


def accepted_dtypes(op_name, arity):
    """The dtypes the op's shape rule accepts."""
    opdef = registry.get(op_name)
    accepted = []
    for dtype in ALL_DTYPES:
        specs = [Spec(d, TensorShape([])) for d in input_dtypes(op_name, arity, dtype)]
        try:
            opdef.infer(*specs, **attrs_for(op_name, dtype))
        except TypeError:
            continue
        accepted.append(dtype)
    return accepted


CASES = [(name, arity, dtype) for name, arity in sorted(elementwise_ops().items())
         for dtype in accepted_dtypes(name, arity)]
IDS = [f"{name}-{dtype.name}" for name, _, dtype in CASES]


def compile_op(op_name, in_dtypes, shapes, attrs) -> CompiledGraph:
    specs = [(dtype, TensorShape(shape)) for dtype, shape in zip(in_dtypes, shapes)]
    graph, _ = trace_specs(lambda *xs: apply(op_name, list(xs), attrs), specs)
    return CompiledGraph(graph, check=True)  # also checks each value's dtype and shape against tracing


def outcome(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` under the executor's error state, or the type of the error it raised."""
    with np.errstate(all="ignore"):
        try:
            return fn(*args, **kwargs)
        except Exception as error:  # noqa: BLE001  (the error type is the outcome)
            return type(error)


def assert_identical(got, expected, context):
    if isinstance(expected, type):
        assert isinstance(got, type) and issubclass(got, Exception), f"{context}: kernel raised {expected.__name__}"
        return
    assert not isinstance(got, type), f"{context}: raised {got.__name__}, the kernel gave {expected!r}"
    assert isinstance(got, np.generic | np.ndarray), f"{context}: a Python {type(got).__name__}, not a numpy value"
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{context}: dtype {got.dtype}, kernel {expected.dtype}"
    assert got.shape == expected.shape, f"{context}: shape {got.shape}, kernel {expected.shape}"
    assert got.tobytes() == expected.tobytes(), f"{context}: {got!r}, kernel {expected!r}"


def values_of(dtype):
    return [dtype.as_numpy_dtype(v) for v in EDGE_VALUES[dtype]]


@pytest.mark.parametrize("op_name, arity, dtype", CASES, ids=IDS)
def test_scalar_code_gives_the_kernels_bits_and_dtype(op_name, arity, dtype):
    in_dtypes = input_dtypes(op_name, arity, dtype)
    attrs = attrs_for(op_name, dtype)
    compiled = compile_op(op_name, in_dtypes, [[]] * arity, attrs)
    kernel = registry.get(op_name).kernel
    for values in itertools.product(*(values_of(d) for d in in_dtypes)):
        expected = outcome(kernel, *values, **attrs)
        for form, args in (("numpy scalars", values), ("0-d arrays", [np.asarray(v) for v in values])):
            got = outcome(lambda *a: compiled(*a)[0], *args)
            assert_identical(got, expected, f"{op_name}{values} on {form}")


@pytest.mark.parametrize("op_name, arity, dtype", CASES, ids=IDS)
def test_array_code_gives_the_kernels_bits_and_dtype(op_name, arity, dtype):
    in_dtypes = input_dtypes(op_name, arity, dtype)
    attrs = attrs_for(op_name, dtype)
    kernel = registry.get(op_name).kernel
    columns = [np.array(c, dtype=d.as_numpy_dtype) for c, d in
               zip(zip(*itertools.product(*(values_of(d) for d in in_dtypes))), in_dtypes)]
    arrays = compile_op(op_name, in_dtypes, [[len(columns[0])]] * arity, attrs)
    expected = outcome(kernel, *columns, **attrs)
    assert_identical(outcome(lambda *a: arrays(*a)[0], *columns), expected, f"{op_name} on arrays")
    if arity > 1:  # a scalar next to an array takes the array form
        mixed = compile_op(op_name, in_dtypes, [[]] + [[len(columns[0])]] * (arity - 1), attrs)
        first = columns[0][-1]
        expected = outcome(kernel, first, *columns[1:], **attrs)
        assert_identical(outcome(lambda *a: mixed(*a)[0], first, *columns[1:]), expected,
                         f"{op_name} on a scalar and arrays")


def kernel_calls(compiled: CompiledGraph) -> list[str]:
    """The kernels (``v1 = k0(...)``) and numpy functions (``v0 = np.power(...)``) the generated code
    always calls; a call in a rare branch (Maximum's ufunc for ties and NaN) does not count."""
    return re.findall(r"= (?:k\d+|np\.\w+)\(", compiled.source)


def test_the_ops_that_still_call_a_kernel_on_scalars_are_listed_with_a_reason():
    calling = set()
    for op_name, arity, dtype in CASES:
        compiled = compile_op(op_name, input_dtypes(op_name, arity, dtype), [[]] * arity, attrs_for(op_name, dtype))
        if kernel_calls(compiled):
            calling.add(op_name)
    assert calling == set(KERNEL_ON_SCALARS), (
        f"ops calling a kernel on scalars but not listed: {sorted(calling - set(KERNEL_ON_SCALARS))}; "
        f"listed but inlined: {sorted(set(KERNEL_ON_SCALARS) - calling)}. Give the op an expr or scalar_expr "
        f"template (autoloop/ops/registry.py), or list it here with the reason it has none.")


def test_collatz_step_compiles_to_operators_only():
    """The W2 benchmark's loop body: comparisons and arithmetic on scalars, no kernel call."""
    def step(n):
        return apply("SelectV2", [apply("Equal", [n % 2, autoloop.constant(0)]), n // 2, 3 * n + 1])

    graph, _ = trace_specs(step, [(dtypes.int32, TensorShape([]))])
    compiled = CompiledGraph(graph)
    assert kernel_calls(compiled) == [], compiled.source
    assert [compiled(np.int32(n))[0] for n in (27, 82)] == [82, 41]
    assert type(compiled(np.int32(6))[0]) is np.int32
