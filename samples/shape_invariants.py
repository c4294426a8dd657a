"""Seed 000/003/004: a loop variable whose shape grows, allowed by a shape invariant."""

import autoloop as tf

i0 = tf.constant(0)
m0 = tf.ones([2, 2])
c = lambda i, m: i < 10  # noqa: E731
b = lambda i, m: [i+1, tf.concat([m, m], axis=0)]  # noqa: E731
result = tf.while_loop(
    c, b, loop_vars=[i0, m0],
    shape_invariants=[i0.get_shape(), tf.TensorShape([None, 2])])[1]
print(repr(result).split(", numpy=")[0] + ", numpy=...>")

# expected output:
# <autoloop.Tensor: shape=(2048, 2), dtype=float32, numpy=...>
