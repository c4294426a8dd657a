"""``autoloop.types``: TensorFlow's ``tf.types`` names that code reaches for (`experimental`)."""

from autoloop.types import experimental  # noqa: F401
