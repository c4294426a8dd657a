"""Checking forward mode against central finite differences (float64), traced and eager.

`check_jvp(fn, args)` computes ``J t`` for random tangents `t` of the
float64 arguments three ways: a `ForwardAccumulator` inside a traced
function, one recording eagerly, and ``(fn(x + h t) - fn(x - h t)) / 2h``;
all three must agree. A tangent of None means "no path": the differences
must then be zero.
"""

from __future__ import annotations

import numpy as np

import autoloop as al
from autoloop import nest


def _floats(result):
    return [t for t in nest.flatten(result) if isinstance(t, al.Tensor) and t.dtype.is_floating]


def check_jvp(fn, args, step=1e-6, rtol=1e-6, atol=1e-7, seed=0, autograph=False, traced=True, eager=True,
              reseed=None, backend="numpy"):
    """Assert that fn's forward-mode tangents match central differences; return them (numpy, by mode)."""
    args = [np.asarray(a) for a in args]
    wrt = [k for k, a in enumerate(args) if a.dtype == np.float64]
    rng = np.random.default_rng(seed)
    tangents = [rng.standard_normal(args[k].shape) for k in wrt]

    def moved(sign):
        shifted = [a.copy() for a in args]
        for k, t in zip(wrt, tangents):
            shifted[k] = shifted[k] + sign * step * t
        if reseed is not None:
            reseed()
        return [y.numpy() for y in _floats(fn(*[al.constant(a) for a in shifted]))]

    numeric = [(p - m) / (2 * step) for p, m in zip(moved(1), moved(-1))]

    def forward(*tensors):
        primals = [tensors[k] for k in wrt]
        with al.autodiff.ForwardAccumulator(primals, [tensors[len(args) + j] for j in range(len(wrt))]) as acc:
            outputs = _floats(fn(*tensors[:len(args)]))
        return acc.jvp(outputs)

    found = {}
    inputs = args + tangents
    if traced:
        found["traced"] = al.function(forward, autograph=autograph, backend=backend)(*inputs)
    if eager:
        if reseed is not None:
            reseed()
        found["eager"] = forward(*[al.constant(a) for a in inputs])
    for mode, results in found.items():
        for position, (tangent, expected) in enumerate(zip(results, numeric)):
            where = f"{mode} tangent of output {position}"
            if tangent is None:
                assert np.allclose(expected, 0, atol=atol), f"{where} is None but differences give {expected}"
                continue
            np.testing.assert_allclose(tangent.numpy(), expected, rtol=rtol, atol=atol, err_msg=where)
    return {mode: [None if t is None else t.numpy() for t in results] for mode, results in found.items()}
