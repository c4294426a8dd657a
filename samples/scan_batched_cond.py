"""Seed 002 (RETURNN `scan`): a batched `cond` with `cond_dims=[B]` stops each entry on its own.

Each of 4 entries halves its value until it drops below 1. Entry b is row b
of every state tensor; once its cond is false its state stays as it is and
its later frames are zeros. `lengths` says how many frames each entry ran.
The body treats entries independently, so the traced scan runs it only on
the entries still active (compaction).
"""

import autoloop as tf


@tf.function
def halvings(values):
    def cond(x, value):
        return value >= 1.0

    def body(x, value):
        value = value / 2
        return value, value

    return tf.scan(body=body, cond=cond, initial=values, cond_dims=[4], ys=tf.TensorSpec([4], tf.float32))


ys, final, lengths = halvings(tf.constant([8., 0.5, 3., 1.]))
print(lengths.numpy())
print(final.numpy())
print(ys.numpy())

# expected output:
# [4 0 2 1]
# [0.5  0.5  0.75 0.5 ]
# [[4.   0.   1.5  0.5 ]
#  [2.   0.   0.75 0.  ]
#  [1.   0.   0.   0.  ]
#  [0.5  0.   0.   0.  ]]
