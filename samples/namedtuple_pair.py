"""Seed 000/003/004: nested loop variables with a namedtuple."""

import collections

import autoloop as tf

Pair = collections.namedtuple('Pair', 'j, k')
ijk_0 = (tf.constant(0), Pair(tf.constant(1), tf.constant(2)))
c = lambda i, p: i < 10  # noqa: E731
b = lambda i, p: (i + 1, Pair((p.j + p.k), (p.j - p.k)))  # noqa: E731
ijk_final = tf.while_loop(c, b, ijk_0)[1]
print((int(ijk_final[0]), int(ijk_final[1])))

# expected output:
# (32, 64)
