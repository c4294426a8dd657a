"""Checking gradients against central finite differences in float64, traced and eager.

`check_gradient(fn, args)` differentiates ``L = sum_k sum(fn(*args)[k] * c_k)``
(random cotangents `c_k`) with respect to the float64 arguments three ways:

- ``autoloop.gradients`` inside a traced function (its backward graph is also
  run on the reference interpreter and the compiled executor, which must
  agree bit for bit: `tests.execute.equivalence`);
- a `GradientTape` recording eagerly;
- central differences of a traced ``L``: ``(L(x + h) - L(x - h)) / 2h`` per element;

and requires all three to agree. A gradient of None means "no path": the
differences must then be zero.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoloop as al
from autoloop import nest
from tests.execute.equivalence import assert_equivalent


def _float_outputs(result):
    return [t for t in nest.flatten(result) if isinstance(t, al.Tensor) and t.dtype.is_floating]


def _loss(outputs, cotangents):
    terms = [al.reduce_sum(y * al.constant(c)) for y, c in zip(outputs, cotangents)]
    return terms[0] if len(terms) == 1 else al.add_n(terms)


def check_gradient(fn, args, wrt=None, step=1e-6, rtol=1e-6, atol=1e-7, seed=0, autograph=False,
                   eager=True, traced=True, reseed=None):
    """Assert that fn's gradients match central differences; return the traced gradients (numpy)."""
    args = [np.asarray(a) for a in args]
    wrt = [k for k, a in enumerate(args) if a.dtype == np.float64] if wrt is None else list(wrt)
    rng = np.random.default_rng(seed)
    if reseed is not None:
        reseed()
    outputs = _float_outputs(fn(*[al.constant(a) for a in args]))
    assert outputs, "the case has no floating-point output to differentiate"
    cotangents = [rng.standard_normal(np.shape(y.numpy())) for y in outputs]

    def loss(*tensors):
        return _loss(_float_outputs(fn(*tensors)), cotangents)

    numeric = _numeric(loss, args, wrt, step, reseed, autograph)
    found = {}
    if traced:
        gradient_fn = al.function(lambda *t: al.gradients(loss(*t), [t[k] for k in wrt]), autograph=autograph)
        found["traced"] = gradient_fn(*args)
        assert_equivalent(gradient_fn.get_concrete_function(*args).graph, args)
    if eager:
        if reseed is not None:
            reseed()
        tensors = [al.constant(a) for a in args]
        with al.GradientTape() as tape:
            tape.watch([tensors[k] for k in wrt])
            value = loss(*tensors)
        found["eager"] = tape.gradient(value, [tensors[k] for k in wrt])
    for mode, grads in found.items():
        for k, grad, expected in zip(wrt, grads, numeric):
            where = f"{mode} gradient of argument {k}"
            if grad is None:
                assert np.allclose(expected, 0, atol=atol), f"{where} is None but differences give {expected}"
                continue
            grad = grad.numpy()
            assert grad.shape == expected.shape and grad.dtype == args[k].dtype, (
                f"{where}: {grad.dtype}{grad.shape}, expected {args[k].dtype}{expected.shape}")
            np.testing.assert_allclose(grad, expected, rtol=rtol, atol=atol, err_msg=where)
    return {mode: [None if g is None else g.numpy() for g in grads] for mode, grads in found.items()}


def _numeric(loss, args, wrt, step, reseed, autograph):
    if reseed is None:
        evaluate = al.function(loss, autograph=autograph)
    else:
        def evaluate(*arrays):
            reseed()
            return loss(*[al.constant(a) for a in arrays])
    grads = []
    for k in wrt:
        grad = np.zeros(args[k].shape)
        for index in np.ndindex(args[k].shape):
            shifted = []
            for sign in (1, -1):
                moved = [a.copy() for a in args]
                moved[k][index] += sign * step
                shifted.append(float(evaluate(*moved).numpy()))
            grad[index] = (shifted[0] - shifted[1]) / (2 * step)
        grads.append(grad)
    return grads


def _jax_installed() -> bool:
    import importlib.util
    return importlib.util.find_spec("jax") is not None


# Both backends, as a pytest parameter list (the JAX one skipped where JAX is not installed).
BACKENDS = ["numpy", pytest.param("jax", marks=pytest.mark.skipif(not _jax_installed(), reason="JAX is not installed"))]
