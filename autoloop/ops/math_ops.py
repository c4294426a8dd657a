"""Element-wise math, comparisons, logic and matmul.

Binary ops take two tensors of one dtype; a Python number next to a tensor
takes the tensor's dtype (``x + 1`` with ``x`` float32 adds ``1.0``), as in
TensorFlow. Integer ``/`` gives float64 for int32 and int64 and float32 for the
narrower integers, as ``tf.divide`` does.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from autoloop import dtypes
from autoloop.errors import DivisionByZeroError
from autoloop.ops import infer
from autoloop.ops.dispatch import apply, constant_value, convert
from autoloop.ops.gradient_support import bilinear_jvp, reduce_to_input
from autoloop.ops.registry import ELEMENTWISE, LINEAR, NOT_DIFFERENTIABLE, OpDef, Spec, register
from autoloop.shapes import TensorShape
from autoloop.tensor import Tensor


def binary_inputs(x, y):
    """Both operands as tensors, Python values taking the other's dtype (the first's, when
    neither is a tensor).

    Of two Python values the first decides: ``maximum(0., [1, -1])`` is
    ``[1., 0.]`` (float32), ``add(1, 2.5)`` a TypeError (2.5 is no int32).

    A *weak* tensor (a Python number that graph control flow made a tensor)
    acts like that number: it takes the other operand's dtype; two weak ones
    meet at the wider kind (an int and a float give a float).
    """
    if isinstance(x, Tensor):
        if not isinstance(y, Tensor):
            return x, convert(y, x.dtype if _is_python(y) else None)
    elif isinstance(y, Tensor):
        return convert(x, y.dtype if _is_python(x) else None), y
    elif _reads(x) or _reads(y):  # a variable: its value, which Python numbers then follow
        return binary_inputs(convert(x) if _reads(x) else x, convert(y) if _reads(y) else y)
    else:  # the first operand fixes the dtype of a Python second one, as in TensorFlow
        x = convert(x)
        y = convert(y, x.dtype if _is_python(y) else None)
    if (x._weak or y._weak) and x.dtype is not y.dtype:
        return _promote_weak(x, y)
    return x, y


def _reads(value) -> bool:
    """Whether `value` is an object that converts by reading a value (a variable)."""
    return hasattr(type(value), "_as_autoloop_tensor")


def _promote_weak(x, y):
    if x._weak and y._weak:
        target = max((x.dtype, y.dtype), key=_KIND_ORDER.index)
    else:
        target = y.dtype if x._weak else x.dtype
        weak = x if x._weak else y
        if weak.dtype.is_floating and target.is_integer:
            return x, y  # a float does not fit an int tensor: the op reports the two dtypes
    return tuple(cast(v, target) if v.dtype is not target else v for v in (x, y))


_KIND_ORDER = [dtypes.bool_, dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def is_weak(value) -> bool:
    """A Python number, or a tensor that stands for one (see `binary_inputs`)."""
    return _is_python(value) and not isinstance(value, (list, tuple)) or isinstance(value, Tensor) and value._weak


def _is_python(value) -> bool:
    return isinstance(value, _PYTHON_VALUES)


_PYTHON_VALUES = (bool, int, float, list, tuple)  # a tuple: a union (bool | int ...) is built on every use


def _register_elementwise(name, kernel, allowed, expr=None, result_dtype=None, scalar_expr=None, gradient=None,
                          jax=None, jvp=None):
    """`jax` names the JAX kernel; a numpy ufunc's is the ``jax.numpy`` function of the same name."""
    jax = jax or f"jax.numpy:{kernel.__name__}"
    register(OpDef(name, kernel=kernel, infer=infer.elementwise(allowed, result_dtype)(name), expr=expr,
                   scalar_expr=scalar_expr, gradient=gradient, kernels={"jax": jax}, jvp=jvp))


# -- gradients ---------------------------------------------------------------
# Each rule gets `op` (the forward op: op.inputs, op.outputs, op.input_specs ...) and the
# gradient of its output; see autoloop.ops.registry. Only floating-point inputs get one.
def _binary_gradient(x_part, y_part):
    """A rule for ``z = f(x, y)`` with broadcasting: ``dx = x_part(op, grad)`` summed to x's shape, likewise y."""
    def rule(op, grad):
        grads = []
        for position, part in enumerate((x_part, y_part)):
            wanted = op.input_specs[position].dtype.is_floating and op.needs_gradient(position)
            grads.append(reduce_to_input(op, position, part(op, grad)) if wanted else None)
        return grads
    return rule


def _unary_gradient(part):
    """A rule for ``y = f(x)``: ``dx = part(op, grad)``."""
    def rule(op, grad):
        return [part(op, grad) if op.input_specs[0].dtype.is_floating else None]
    return rule


def _extreme_parts(kind):
    """The x and y parts of Maximum (`kind` "max") or Minimum: the gradient goes to the operand chosen."""
    def x_chosen(op):
        x, y = op.inputs[0], op.inputs[1]
        return greater_equal(x, y) if kind == "max" else less_equal(x, y)

    def x_part(op, grad):
        return where_(x_chosen(op), grad, zeros_like_(grad))

    def y_part(op, grad):
        return where_(x_chosen(op), zeros_like_(grad), grad)
    return x_part, y_part


def where_(condition, x, y):
    return apply("SelectV2", [condition, x, y])


def zeros_like_(x):
    return apply("ZerosLike", [x])


def _pow_x(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return grad * y * pow(x, y - 1)


def _pow_y(op, grad):
    x = op.inputs[0]
    positive = greater(x, 0)
    safe = where_(positive, x, apply("OnesLike", [x]))
    return grad * op.outputs[0] * where_(positive, log(safe), zeros_like_(x))


def _floor_mod_y(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return -grad * apply("Floor", [x / y])


_ADD = _binary_gradient(lambda op, g: g, lambda op, g: g)
_SUB = _binary_gradient(lambda op, g: g, lambda op, g: -g)
_MUL = _binary_gradient(lambda op, g: g * op.inputs[1], lambda op, g: g * op.inputs[0])
_DIV = _binary_gradient(lambda op, g: g / op.inputs[1], lambda op, g: -g * op.outputs[0] / op.inputs[1])


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
_JAX_KERNELS = "autoloop.backends.jax.kernels"
_NOT_SCALAR = "(np.False_ if {0} else np.True_)"  # `~` and np.logical_not on a bool scalar: 0.1-0.3 µs

# -- binary arithmetic -----------------------------------------------------
_register_elementwise("Add", np.add, infer.NUMERIC, "({0} + {1})", gradient=_ADD, jvp=LINEAR)
_register_elementwise("Sub", np.subtract, infer.NUMERIC, "({0} - {1})", gradient=_SUB, jvp=LINEAR)
_register_elementwise("Mul", np.multiply, infer.NUMERIC, "({0} * {1})", gradient=_MUL, jvp=bilinear_jvp,
                      jax=f"{_JAX_KERNELS}.math:multiply")


def _integer_division(name, kernel, symbol, gradient, jax):
    """``//`` or ``%``: by zero, an integer ``integer`` division raises (a float one gives inf/nan)."""
    def checked(x, y, integer=False):
        if integer and not np.all(y):
            raise DivisionByZeroError(f"{name}: integer division by zero (x {symbol} 0)")
        return kernel(x, y)

    def expr(attrs):
        return None if attrs.get("integer") else f"({{0}} {symbol} {{1}})"
    register(OpDef(name, kernel=checked, infer=infer.elementwise(infer.NUMERIC)(name), expr=expr,
                   gradient=gradient, kernels={"jax": jax}))


# Piecewise constant: its derivative is zero wherever it exists (TensorFlow gives none).
_integer_division("FloorDiv", np.floor_divide, "//", NOT_DIFFERENTIABLE, f"{_JAX_KERNELS}.math:floor_div")
_integer_division("FloorMod", np.mod, "%", _binary_gradient(lambda op, g: g, _floor_mod_y),
                  f"{_JAX_KERNELS}.math:floor_mod")
# On float scalars, numpy's `**` is C pow while np.power takes sqrt for an exponent of 0.5:
# (-0.0) ** 0.5 is 0.0 but np.power gives -0.0, and (-inf) ** 0.5 is inf against nan; C pow and
# np.power's loop may also differ in the last bit. A value of unknown rank may be a scalar when the
# graph runs, so only known integer scalars take `**`.
_register_elementwise("Pow", np.power, infer.NUMERIC, "np.power({0}, {1})", jax=f"{_JAX_KERNELS}.math:power",
                      scalar_expr=lambda attrs, types: None if types[0].is_floating else "({0} ** {1})",
                      gradient=_binary_gradient(_pow_x, _pow_y))
# Ties send the gradient to x, as TensorFlow does.
_register_elementwise("Maximum", np.maximum, infer.NUMERIC, scalar_expr=_extreme_scalar_expr("maximum", ">", "<"),
                      gradient=_binary_gradient(*_extreme_parts("max")))
_register_elementwise("Minimum", np.minimum, infer.NUMERIC, scalar_expr=_extreme_scalar_expr("minimum", "<", ">"),
                      gradient=_binary_gradient(*_extreme_parts("min")))
_register_elementwise("BitwiseAnd", np.bitwise_and, infer.INTEGERS_AND_BOOL, "({0} & {1})",
                      gradient=NOT_DIFFERENTIABLE)
_register_elementwise("BitwiseOr", np.bitwise_or, infer.INTEGERS_AND_BOOL, "({0} | {1})",
                      gradient=NOT_DIFFERENTIABLE)
_register_elementwise("BitwiseXor", np.bitwise_xor, infer.INTEGERS_AND_BOOL, "({0} ^ {1})",
                      gradient=NOT_DIFFERENTIABLE)
_register_elementwise("LogicalAnd", np.logical_and, (dtypes.bool_,), "({0} & {1})", gradient=NOT_DIFFERENTIABLE)
_register_elementwise("LogicalOr", np.logical_or, (dtypes.bool_,), "({0} | {1})", gradient=NOT_DIFFERENTIABLE)


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


def _divide_jvp(op, tangent_x, tangent_y):
    """``d(x / y) = (dx - (x / y) dy) / y``."""
    if not op.output_specs[0].dtype.is_floating:
        return None
    numerator = tangent_x if tangent_y is None else (
        -(op.outputs[0] * tangent_y) if tangent_x is None else tangent_x - op.outputs[0] * tangent_y)
    return apply("RealDiv", [numerator, op.inputs[1]])


register(OpDef("RealDiv", kernel=_divide_kernel, infer=_divide_infer, scalar_expr=_divide_scalar_expr, gradient=_DIV,
               kernels={"jax": f"{_JAX_KERNELS}.math:real_div"}, jvp=_divide_jvp))

# -- comparisons -------------------------------------------------------------
for _name, _kernel, _expr in [("Less", np.less, "({0} < {1})"), ("LessEqual", np.less_equal, "({0} <= {1})"),
                              ("Greater", np.greater, "({0} > {1})"),
                              ("GreaterEqual", np.greater_equal, "({0} >= {1})")]:
    _register_elementwise(_name, _kernel, infer.NUMERIC, _expr, result_dtype=dtypes.bool_,
                          gradient=NOT_DIFFERENTIABLE)
# numpy compares bool scalars through the ufunc (0.6 µs); xor is its fast path.
for _name, _kernel, _expr, _bool_scalar_expr in [
        ("Equal", np.equal, "({0} == {1})", "(np.False_ if {0} ^ {1} else np.True_)"),
        ("NotEqual", np.not_equal, "({0} != {1})", "({0} ^ {1})")]:
    _register_elementwise(_name, _kernel, infer.ALL, _expr, result_dtype=dtypes.bool_,
                          scalar_expr=lambda attrs, types, form=_bool_scalar_expr: form if types[0] is BOOL else None,
                          gradient=NOT_DIFFERENTIABLE)

# -- unary -------------------------------------------------------------------
_register_elementwise("Neg", np.negative, infer.SIGNED, "(-{0})", gradient=_unary_gradient(lambda op, g: -g),
                      jvp=LINEAR)
_register_elementwise("Abs", np.abs, infer.SIGNED, "abs({0})",
                      gradient=_unary_gradient(lambda op, g: g * apply("Sign", [op.inputs[0]])), jvp=ELEMENTWISE)
_register_elementwise("Square", np.square, infer.NUMERIC, "({0} * {0})",
                      gradient=_unary_gradient(lambda op, g: g * (op.inputs[0] + op.inputs[0])), jvp=ELEMENTWISE,
                      jax=f"{_JAX_KERNELS}.math:square")
_register_elementwise("LogicalNot", np.logical_not, (dtypes.bool_,), scalar_expr=_NOT_SCALAR,
                      gradient=NOT_DIFFERENTIABLE)
_register_elementwise("Invert", np.invert, infer.INTEGERS_AND_BOOL, "(~{0})",
                      scalar_expr=lambda attrs, types: _NOT_SCALAR if types[0] is BOOL else None,
                      gradient=NOT_DIFFERENTIABLE)
_UNARY_GRADIENTS = {
    "Sqrt": lambda op, g: g * 0.5 / op.outputs[0],
    "Exp": lambda op, g: g * op.outputs[0],
    "Log": lambda op, g: g / op.inputs[0],
    "Sin": lambda op, g: g * cos(op.inputs[0]),
    "Cos": lambda op, g: -g * sin(op.inputs[0]),
    "Tanh": lambda op, g: g * (1 - square(op.outputs[0])),
}
for _name, _kernel in [("Sqrt", np.sqrt), ("Exp", np.exp), ("Log", np.log), ("Sin", np.sin),
                       ("Cos", np.cos), ("Tanh", np.tanh)]:
    _register_elementwise(_name, _kernel, infer.FLOATS, gradient=_unary_gradient(_UNARY_GRADIENTS[_name]),
                          jvp=ELEMENTWISE)


def _sigmoid(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


def _sigmoid_part(op, grad):
    y = op.outputs[0]
    return grad * y * (1 - y)


def _identity_gradient(op, grad):
    return [grad]


_register_elementwise("Sigmoid", _sigmoid, infer.FLOATS, gradient=_unary_gradient(_sigmoid_part),
                      jax=f"{_JAX_KERNELS}.math:sigmoid", jvp=ELEMENTWISE)
_register_elementwise("Identity", lambda x: x, infer.ALL + (dtypes.variant,), "{0}", gradient=_identity_gradient,
                      jax=f"{_JAX_KERNELS}.math:identity", jvp=LINEAR)


# -- cast ------------------------------------------------------------------
def _cast_infer(x, dtype):
    infer.check_dtype("Cast", x, infer.ALL)
    return Spec(dtype, x.shape)


def _cast_gradient(op, grad):
    """Between floating-point dtypes the gradient is cast back; to or from integers there is none."""
    source = op.input_specs[0].dtype
    if source.is_floating and op.attrs["dtype"].is_floating:
        return [cast(grad, source)]
    return [None]


register(OpDef("Cast", kernel=lambda x, dtype: np.asarray(x).astype(dtype.as_numpy_dtype), infer=_cast_infer,
               gradient=_cast_gradient,
               kernels={"jax": f"{_JAX_KERNELS}.math:cast"}))


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


def _swap_last_two(x, rank):
    return apply("Transpose", [x], {"perm": tuple(range(rank - 2)) + (rank - 1, rank - 2)})


def _matmul_gradient(op, grad):
    """``c = a @ b``: ``da = dc @ b^T``, ``db = a^T @ dc``, with numpy's rules for vectors
    (a vector operand is a matrix of one row or column that the product drops) and
    broadcast batch axes summed away."""
    rank_a, rank_b = op.input_specs[0].shape.rank, op.input_specs[1].shape.rank
    if rank_a is None or rank_b is None:
        raise NotImplementedError("the gradient of matmul needs operands of known rank")
    if not op.input_specs[0].dtype.is_floating:
        return [None, None]
    a, b = op.inputs[0], op.inputs[1]
    want_a, want_b = op.needs_gradient(0), op.needs_gradient(1)
    if rank_a == 1 and rank_b == 1:
        return [grad * b if want_a else None, grad * a if want_b else None]
    if rank_b == 1:  # (..., m, k) @ (k,) -> (..., m)
        da = _outer(grad, b) if want_a else None
        if want_b and rank_a == 2:
            db = _product(_swap_last_two(a, rank_a), grad)
        else:
            db = _squeeze_last(_product(_swap_last_two(a, rank_a), _expand_last(grad))) if want_b else None
    elif rank_a == 1:  # (k,) @ (..., k, n) -> (..., n)
        if want_a and rank_b == 2:
            da = _product(b, grad)
        else:
            da = _squeeze_last(_product(b, _expand_last(grad))) if want_a else None
        db = _outer(a, grad) if want_b else None
    else:
        da = _product(grad, _swap_last_two(b, rank_b)) if want_a else None
        db = _product(_swap_last_two(a, rank_a), grad) if want_b else None
    return [None if da is None else reduce_to_input(op, 0, da), None if db is None else reduce_to_input(op, 1, db)]


def _product(a, b):
    return apply("MatMul", [a, b])


def _expand_last(x):
    return apply("ExpandDims", [x], {"axis": x.shape.rank})


def _squeeze_last(x):
    return apply("Squeeze", [x], {"axis": (x.shape.rank - 1,)})


def _outer(column, row):
    """``column[..., :, None] * row[..., None, :]``."""
    return _expand_last(column) * apply("ExpandDims", [row], {"axis": row.shape.rank - 1})


register(OpDef("MatMul", kernel=np.matmul, infer=_matmul_infer, expr="({0} @ {1})", gradient=_matmul_gradient,
               kernels={"jax": "jax.numpy:matmul"}, jvp=bilinear_jvp))


# -- public functions ----------------------------------------------------------
def _binary_fn(op_name, public_name, attrs=lambda x, y: None, node_name=None) -> Callable[..., Tensor]:
    """`node_name`: the default name of the node in a graph where TensorFlow's is not the op's (``truediv``)."""
    def fn(x, y, name=None):
        if type(x) is Tensor and not x._weak:  # the common case, without two calls (0.1 µs of an eager op)
            weak = False
        else:
            weak = is_weak(x) and is_weak(y) and (isinstance(x, Tensor) or isinstance(y, Tensor))
        x, y = binary_inputs(x, y)
        result = apply(op_name, [x, y], attrs(x, y), name=name or node_name)
        result._weak = weak
        return result
    fn.__name__ = public_name
    fn.__doc__ = f"Element-wise {public_name} of two tensors of one dtype (numpy broadcasting)."
    return fn


def _unary_fn(op_name, public_name) -> Callable[..., Tensor]:
    def fn(x, name=None):
        result = apply(op_name, [convert(x)], name=name)
        result._weak = isinstance(x, Tensor) and x._weak
        return result
    fn.__name__ = public_name
    fn.__doc__ = f"Element-wise {public_name}."
    return fn


add = _binary_fn("Add", "add")
subtract = _binary_fn("Sub", "subtract")
multiply = _binary_fn("Mul", "multiply")
divide = _binary_fn("RealDiv", "divide", node_name="truediv")
def _integer_attrs(x, y):
    """Integer division checks its divisor for zeros, unless tracing proved it has none (``n // 2``)."""
    if not x.dtype.is_integer:
        return None
    divisor = constant_value(y)
    return None if divisor is not None and np.all(divisor) else {"integer": True}


floordiv = _binary_fn("FloorDiv", "floordiv", _integer_attrs)  # integer // 0 raises DivisionByZeroError
mod = _binary_fn("FloorMod", "mod", _integer_attrs)  # the sign of y, as in Python; integer % 0 raises
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


def cast(x, dtype, name=None) -> Tensor:
    """`x` converted to `dtype` (float to int truncates toward zero)."""
    dtype = dtypes.as_dtype(dtype)
    x = convert(x)
    if x.dtype is dtype:
        return identity(x, name=name)
    return apply("Cast", [x], {"dtype": dtype}, name=name)
