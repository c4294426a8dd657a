"""Seed 001: the blog's while_loop over a variable, built as a TF1 graph and run in a Session.

``i`` starts at 1 (ones_initializer) and grows by 2 while below 10: 11,
so ``v1`` is 14; ``n`` is 10, so ``v2`` is 14. The example's lines are the
blog's, as written.
"""

import numpy as np

import autoloop.compat.v1 as tf

if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    np.set_printoptions(legacy="1.25")  # numpy scalars print as 14, not np.int32(14), as the blog's numpy did

tf.disable_eager_execution()

i = tf.get_variable("i", dtype=tf.int32, shape=[], initializer=tf.ones_initializer())
n = tf.constant(10)

def cond(a, n):
    return  a< n
def body(a, n):
    a = a + 2
    return a, n

ii, nn = tf.while_loop(cond, body, [i, n])
v1=ii+3
v2=nn+4

with tf.Session() as sess:
    tf.global_variables_initializer().run()
    res = sess.run([v1, v2])
    print(res)

# expected output:
# [14, 14]
