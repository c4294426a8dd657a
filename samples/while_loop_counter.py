"""Seed 000/003/004: the simplest tf.while_loop, a counter to 10."""

import autoloop as tf

i = tf.constant(0)
c = lambda i: tf.less(i, 10)  # noqa: E731
b = lambda i: (tf.add(i, 1), )  # noqa: E731
r = tf.while_loop(c, b, [i])[0]
print(r.numpy())

# The TF1 form: with one loop variable the body may return the bare tensor.
b = lambda i: tf.add(i, 1)  # noqa: E731
r = tf.while_loop(c, b, [i])
print(r[0].numpy())

# expected output:
# 10
# 10
