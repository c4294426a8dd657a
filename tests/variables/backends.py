"""The backends every variable test runs on: numpy always, JAX where it is installed."""

import importlib.util

import pytest

BACKENDS = ["numpy", pytest.param("jax", marks=pytest.mark.skipif(
    importlib.util.find_spec("jax") is None, reason="JAX is not installed"))]
