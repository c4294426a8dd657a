"""Seed 000: sumSquare2, an explicit tf.while_loop inside @tf.function."""

import autoloop as tf


@tf.function
def sumSquare2(n):
    i, result = tf.constant(0), tf.constant(0)
    c = lambda i, _: tf.less(i, n)  # noqa: E731
    b = lambda i, result: (i + 1, result + i * i)  # noqa: E731
    return tf.while_loop(c, b, [i, result])[1]


print(sumSquare2(10).numpy())

# expected output:
# 285
