"""The JAX kernels of the op library, grouped as `autoloop.ops` groups the ops.

Each op's registration names its kernel here (``OpDef.kernels["jax"]``, a
``"module:function"`` string imported when first lowered); ops whose numpy
kernel is a numpy function of the same name use ``jax.numpy``'s directly
(``"jax.numpy:add"``). A kernel computes exactly what the numpy kernel
computes, on JAX values: same dtypes, shapes and values (floats within
rounding), and the same errors through run-time checks
(`autoloop.backends.jax.checks`).

- `math`: arithmetic, division, casts, matmul, rounding;
- `arrays`: slicing, shapes, joining, gathering and scattering, reordering;
- `reductions`: sums, extremes, running sums, softmax;
- `effects`: print, assertions, the checks converted code adds, random numbers.
"""
