"""Element-wise math, comparisons, logic and matmul.

Binary ops take two tensors of one dtype; a Python number next to a tensor
takes the tensor's dtype (``x + 1`` with ``x`` float32 adds ``1.0``), as in
TensorFlow. Integer ``/`` gives float64 for int32 and int64 and float32 for the
narrower integers, as ``tf.divide`` does.
"""

from __future__ import annotations

import numpy as np

from autoloop import dtypes
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, convert
from autoloop.ops.registry import OpDef, Spec, register
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


def binary_inputs(x, y):
    """Both operands as tensors, Python values taking the other's dtype."""
    if isinstance(x, Tensor) and not isinstance(y, Tensor):
        return x, convert(y, x.dtype if _is_python(y) else None)
    if isinstance(y, Tensor) and not isinstance(x, Tensor):
        return convert(x, y.dtype if _is_python(x) else None), y
    return convert(x), convert(y)


def _is_python(value) -> bool:
    return isinstance(value, bool | int | float | list | tuple)


def _register_elementwise(name, kernel, allowed, expr=None, result_dtype=None, scalar_expr=None):
    register(OpDef(name, kernel=kernel, infer=infer.elementwise(allowed, result_dtype)(name), expr=expr,
                   scalar_expr=scalar_expr))


def _extreme_scalar_expr(ufunc_name, wins, loses):
    """Maximum/Minimum of two scalars without a ufunc call (0.5 µs): pick one operand.

    Integers: the winning comparison decides. Floats: a strict comparison
    either way decides; a tie or a NaN falls back to the ufunc, whose rule for
    signed zeros differs between dtypes and CPUs (float16's maximum(0.0, -0.0)
    is 0.0, float32's with AVX-512 is -0.0).
    """
    def scalar_expr(attrs, types):
        if types[0].is_floating:
            return "({0} if {0} %s {1} else {1} if {0} %s {1} else np.%s({0}, {1}))" % (wins, loses, ufunc_name)
        return "({0} if {0} %s {1} else {1})" % wins
    return scalar_expr


BOOL = dtypes.bool_
_NOT_SCALAR = "(np.False_ if {0} else np.True_)"  # `~` and np.logical_not on a bool scalar: 0.1-0.3 µs

# -- binary arithmetic -----------------------------------------------------
_register_elementwise("Add", np.add, infer.NUMERIC, "({0} + {1})")
_register_elementwise("Sub", np.subtract, infer.NUMERIC, "({0} - {1})")
_register_elementwise("Mul", np.multiply, infer.NUMERIC, "({0} * {1})")
_register_elementwise("FloorDiv", np.floor_divide, infer.NUMERIC, "({0} // {1})")
_register_elementwise("FloorMod", np.mod, infer.NUMERIC, "({0} % {1})")
# On float scalars, numpy's `**` is C pow while np.power takes sqrt for an exponent of 0.5:
# (-0.0) ** 0.5 is 0.0 but np.power gives -0.0, and (-inf) ** 0.5 is inf against nan.
_register_elementwise("Pow", np.power, infer.NUMERIC, "({0} ** {1})",
                      scalar_expr=lambda attrs, types: "np.power({0}, {1})" if types[0].is_floating else None)
_register_elementwise("Maximum", np.maximum, infer.NUMERIC, scalar_expr=_extreme_scalar_expr("maximum", ">", "<"))
_register_elementwise("Minimum", np.minimum, infer.NUMERIC, scalar_expr=_extreme_scalar_expr("minimum", "<", ">"))
_register_elementwise("BitwiseAnd", np.bitwise_and, infer.INTEGERS_AND_BOOL, "({0} & {1})")
_register_elementwise("BitwiseOr", np.bitwise_or, infer.INTEGERS_AND_BOOL, "({0} | {1})")
_register_elementwise("BitwiseXor", np.bitwise_xor, infer.INTEGERS_AND_BOOL, "({0} ^ {1})")
_register_elementwise("LogicalAnd", np.logical_and, (dtypes.bool_,), "({0} & {1})")
_register_elementwise("LogicalOr", np.logical_or, (dtypes.bool_,), "({0} | {1})")


def _quotient_dtype(dtype):
    """TensorFlow's true division: int8, int16, uint8 -> float32; int32, int64 -> float64."""
    if dtype.is_floating:
        return dtype
    return dtypes.float32 if dtype.size <= 2 else dtypes.float64


def _divide_infer(x, y):
    infer.check_same_dtype("RealDiv", x, y)
    infer.check_dtype("RealDiv", x, infer.NUMERIC)
    return Spec(_quotient_dtype(x.dtype), infer.broadcast_shapes("RealDiv", x.shape, y.shape))


def _divide_kernel(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "f":
        return np.true_divide(x, y)
    target = _quotient_dtype(dtypes.as_dtype(x.dtype)).as_numpy_dtype
    return np.true_divide(x.astype(target), y.astype(target))


def _divide_scalar_expr(attrs, input_dtypes):
    """numpy's `/` where it gives TensorFlow's dtype: floats, and int32/int64 (float64); not int8/int16/uint8."""
    dtype = input_dtypes[0]
    return "({0} / {1})" if dtype.is_floating or _quotient_dtype(dtype) is dtypes.float64 else None


register(OpDef("RealDiv", kernel=_divide_kernel, infer=_divide_infer, scalar_expr=_divide_scalar_expr))

# -- comparisons -------------------------------------------------------------
for _name, _kernel, _expr in [("Less", np.less, "({0} < {1})"), ("LessEqual", np.less_equal, "({0} <= {1})"),
                              ("Greater", np.greater, "({0} > {1})"),
                              ("GreaterEqual", np.greater_equal, "({0} >= {1})")]:
    _register_elementwise(_name, _kernel, infer.NUMERIC, _expr, result_dtype=dtypes.bool_)
# numpy compares bool scalars through the ufunc (0.6 µs); xor is its fast path.
for _name, _kernel, _expr, _bool_scalar_expr in [
        ("Equal", np.equal, "({0} == {1})", "(np.False_ if {0} ^ {1} else np.True_)"),
        ("NotEqual", np.not_equal, "({0} != {1})", "({0} ^ {1})")]:
    _register_elementwise(_name, _kernel, infer.ALL, _expr, result_dtype=dtypes.bool_,
                          scalar_expr=lambda attrs, types, form=_bool_scalar_expr: form if types[0] is BOOL else None)

# -- unary -------------------------------------------------------------------
_register_elementwise("Neg", np.negative, infer.SIGNED, "(-{0})")
_register_elementwise("Abs", np.abs, infer.SIGNED, "abs({0})")
_register_elementwise("Square", np.square, infer.NUMERIC, "({0} * {0})")
_register_elementwise("LogicalNot", np.logical_not, (dtypes.bool_,), scalar_expr=_NOT_SCALAR)
_register_elementwise("Invert", np.invert, infer.INTEGERS_AND_BOOL, "(~{0})",
                      scalar_expr=lambda attrs, types: _NOT_SCALAR if types[0] is BOOL else None)
for _name, _kernel in [("Sqrt", np.sqrt), ("Exp", np.exp), ("Log", np.log), ("Sin", np.sin),
                       ("Cos", np.cos), ("Tanh", np.tanh)]:
    _register_elementwise(_name, _kernel, infer.FLOATS)


def _sigmoid(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


_register_elementwise("Sigmoid", _sigmoid, infer.FLOATS)
_register_elementwise("Identity", lambda x: x, infer.ALL + (dtypes.variant,), "{0}")


# -- cast ------------------------------------------------------------------
def _cast_infer(x, dtype):
    infer.check_dtype("Cast", x, infer.ALL)
    return Spec(dtype, x.shape)


register(OpDef("Cast", kernel=lambda x, dtype: np.asarray(x).astype(dtype.as_numpy_dtype), infer=_cast_infer))


# -- matmul ------------------------------------------------------------------
_MATMUL_DTYPES = infer.FLOATS + infer.INTEGERS  # TensorFlow's MatMul kernels
def _matmul_infer(a, b):
    infer.check_same_dtype("MatMul", a, b)
    infer.check_dtype("MatMul", a, _MATMUL_DTYPES)
    if a.shape.rank is None or b.shape.rank is None:
        return Spec(a.dtype, TensorShape(None))
    if a.shape.rank < 2 or b.shape.rank < 2:
        if a.shape.rank < 1 or b.shape.rank < 1:
            raise ValueError(f"MatMul needs tensors of rank >= 1, got shapes {a.shape} and {b.shape}")
    inner_a = a.shape[-1]
    inner_b = b.shape[-2] if b.shape.rank >= 2 else b.shape[0]
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        raise ValueError(f"Dimensions must be equal, but are {inner_a} and {inner_b} for MatMul "
                         f"with input shapes: {a.shape}, {b.shape}")
    batch_a = a.shape[:-2] if a.shape.rank >= 2 else TensorShape([])
    batch_b = b.shape[:-2] if b.shape.rank >= 2 else TensorShape([])
    batch = infer.broadcast_shapes("MatMul", batch_a, batch_b)
    rows = [a.shape[-2]] if a.shape.rank >= 2 else []
    cols = [b.shape[-1]] if b.shape.rank >= 2 else []
    return Spec(a.dtype, batch.concatenate(rows + cols))


register(OpDef("MatMul", kernel=np.matmul, infer=_matmul_infer, expr="({0} @ {1})"))


# -- public functions ----------------------------------------------------------
def _binary_fn(op_name, public_name):
    def fn(x, y, name=None):
        x, y = binary_inputs(x, y)
        return apply(op_name, [x, y], name=name)
    fn.__name__ = public_name
    fn.__doc__ = f"Element-wise {public_name} of two tensors of one dtype (numpy broadcasting)."
    return fn


def _unary_fn(op_name, public_name):
    def fn(x, name=None):
        return apply(op_name, [convert(x)], name=name)
    fn.__name__ = public_name
    fn.__doc__ = f"Element-wise {public_name}."
    return fn


add = _binary_fn("Add", "add")
subtract = _binary_fn("Sub", "subtract")
multiply = _binary_fn("Mul", "multiply")
divide = _binary_fn("RealDiv", "divide")
floordiv = _binary_fn("FloorDiv", "floordiv")
mod = _binary_fn("FloorMod", "mod")
pow = _binary_fn("Pow", "pow")
maximum = _binary_fn("Maximum", "maximum")
minimum = _binary_fn("Minimum", "minimum")
less = _binary_fn("Less", "less")
less_equal = _binary_fn("LessEqual", "less_equal")
greater = _binary_fn("Greater", "greater")
greater_equal = _binary_fn("GreaterEqual", "greater_equal")
equal = _binary_fn("Equal", "equal")
not_equal = _binary_fn("NotEqual", "not_equal")
logical_and = _binary_fn("LogicalAnd", "logical_and")
logical_or = _binary_fn("LogicalOr", "logical_or")
bitwise_and = _binary_fn("BitwiseAnd", "bitwise_and")
bitwise_or = _binary_fn("BitwiseOr", "bitwise_or")
bitwise_xor = _binary_fn("BitwiseXor", "bitwise_xor")

negative = _unary_fn("Neg", "negative")
abs = _unary_fn("Abs", "abs")
square = _unary_fn("Square", "square")
sqrt = _unary_fn("Sqrt", "sqrt")
exp = _unary_fn("Exp", "exp")
log = _unary_fn("Log", "log")
sin = _unary_fn("Sin", "sin")
cos = _unary_fn("Cos", "cos")
tanh = _unary_fn("Tanh", "tanh")
sigmoid = _unary_fn("Sigmoid", "sigmoid")
logical_not = _unary_fn("LogicalNot", "logical_not")
invert = _unary_fn("Invert", "invert")
identity = _unary_fn("Identity", "identity")


def cast(x, dtype, name=None):
    """`x` converted to `dtype` (float to int truncates toward zero)."""
    dtype = dtypes.as_dtype(dtype)
    x = convert(x)
    if x.dtype is dtype:
        return identity(x, name=name)
    return apply("Cast", [x], {"dtype": dtype}, name=name)
