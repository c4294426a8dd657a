"""Seed 003: the TF1-era while_loop examples, run in a Session.

With one loop variable in a list, TF1's ``while_loop`` returns the bare
tensor (``r``), as the old reference says.
"""

import collections

import numpy as np

import autoloop.compat.v1 as tf

if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    np.set_printoptions(legacy="1.25")  # numpy scalars print as 10, not np.int32(10), as in TF1's day

tf.disable_eager_execution()

i = tf.constant(0)
c = lambda i: tf.less(i, 10)  # noqa: E731
b = lambda i: tf.add(i, 1)  # noqa: E731
r = tf.while_loop(c, b, [i])

Pair = collections.namedtuple('Pair', 'j, k')
ijk_0 = (tf.constant(0), Pair(tf.constant(1), tf.constant(2)))
c = lambda i, p: i < 10  # noqa: E731
b = lambda i, p: (i + 1, Pair((p.j + p.k), (p.j - p.k)))  # noqa: E731
ijk_final = tf.while_loop(c, b, ijk_0)

i0 = tf.constant(0)
m0 = tf.ones([2, 2])
c = lambda i, m: i < 10  # noqa: E731
b = lambda i, m: [i+1, tf.concat([m, m], axis=0)]  # noqa: E731
grown = tf.while_loop(
    c, b, loop_vars=[i0, m0],
    shape_invariants=[i0.get_shape(), tf.TensorShape([None, 2])])

with tf.Session() as sess:
    print(sess.run(r))
    print(sess.run(ijk_final))
    print(sess.run(grown)[1].shape)

# expected output:
# 10
# (10, Pair(j=32, k=64))
# (2048, 2)
