"""TensorFlow compatibility namespaces: ``autoloop.compat.v1`` holds the TF1 names."""

from autoloop.compat import v1

__all__ = ["v1"]
