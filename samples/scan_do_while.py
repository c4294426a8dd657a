"""Seed 002 (RETURNN `scan`): `cond_before_body=False` runs the body before each test (a do-while).

Greedy decoding in miniature: emit a token per step until the end token 0
is emitted. Every entry emits at least one token, even one that starts at
the end; `max_seq_len` caps the loop.
"""

import autoloop as tf

# next_token[t] is the token that follows t.
next_token = tf.constant([0, 0, 1, 2, 3, 4])


@tf.function
def decode(first_tokens):
    def body(x, token):
        token = tf.gather(next_token, token)
        return token, token

    def cond(x, token):
        return token != 0  # tested after each step: stop once the end token came out

    return tf.scan(body=body, cond=cond, cond_before_body=False, initial=first_tokens, cond_dims=[3],
                   max_seq_len=10, ys=tf.TensorSpec([3], tf.int32))


tokens, _, lengths = decode(tf.constant([3, 0, 5]))
print(lengths.numpy())
print(tokens.numpy().T)

# expected output:
# [3 1 5]
# [[2 1 0 0 0]
#  [0 0 0 0 0]
#  [4 3 2 1 0]]
