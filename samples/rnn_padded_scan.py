"""An RNN over a padded batch of sequences of different lengths: `scan(xs=..., cond_dims=[B])`.

The sequences are stored time-major, ``xs[t, b]`` (RETURNN's layout), padded
to the longest. Each entry runs ``h = tanh(x @ W + h @ U)`` over its own
frames: `cond` compares its step counter with `lengths`, a tensor captured
from around the scan that holds one length per entry. autoloop proves from
how `lengths` is used (``t < lengths``, row by row) that it is per entry and
carries it with the entries, so the finished ones are dropped from the work.
The frames after an entry's end are zeros, and `h` is each entry's last state.
"""

import numpy as np

import autoloop as tf

T, B, F, H = 5, 3, 2, 2
xs = np.arange(T * B * F, dtype=np.float32).reshape(T, B, F) / 30.0
W = np.array([[0.5, -0.25], [0.25, 0.5]], np.float32)
U = np.array([[0.5, 0.0], [0.0, 0.5]], np.float32)


@tf.function
def rnn(xs, lengths):
    def body(x, state):
        h, t = state
        h = tf.tanh(x @ W + h @ U)
        return h, (h, t + 1)

    initial = (tf.zeros([B, H]), tf.zeros([B], tf.int32))
    ys, (h, _), ran = tf.scan(body=body, initial=initial, xs=xs, ys=tf.TensorSpec([B, H]),
                              cond=lambda x, state: state[1] < lengths, cond_dims=[B])
    return ys, h, ran


ys, h, ran = rnn(tf.constant(xs), tf.constant([5, 2, 3]))
print(ran.numpy())
print(np.round(h.numpy(), 4))
print(np.round(ys.numpy()[:, 1], 4))

# expected output:
# [5 2 3]
# [[0.7124 0.3238]
#  [0.2331 0.0997]
#  [0.5077 0.209 ]]
# [[0.0583 0.0333]
#  [0.2331 0.0997]
#  [0.     0.    ]
#  [0.     0.    ]
#  [0.     0.    ]]
