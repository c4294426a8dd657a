"""Seed 002 (RETURNN `scan`): iterate over axis 0 of `xs`, carry a state, collect a frame per step in `ys`.

A tiny recurrent cell over a sequence of 4 frames: the state is the hidden
vector, each frame's output is written to `ys` (given as a template).
"""

import autoloop as tf

xs = tf.constant([[1., 0.], [0., 1.], [1., 1.], [0., 0.]])  # 4 frames of 2 features
weights = tf.constant([[0.5, 0.], [0., 0.5]])


@tf.function
def run(xs):
    def body(x, h):
        h = h @ weights + x  # the new state
        return tf.reduce_sum(h), h  # (the frame y, the state)

    return tf.scan(body=body, initial=tf.zeros([2]), xs=xs, ys=tf.TensorSpec([], tf.float32))


ys, final_state, lengths = run(xs)
print(ys.numpy())
print(final_state.numpy(), int(lengths))

# expected output:
# [1.    1.5   2.75  1.375]
# [0.625 0.75 ] 4
