"""``autoloop.nn``: activation functions under their ``tf.nn`` names (re-exports only)."""

from autoloop.ops.math_ops import sigmoid, tanh  # noqa: F401
from autoloop.ops.nn_ops import dropout, log_softmax, relu, softmax, softplus  # noqa: F401
