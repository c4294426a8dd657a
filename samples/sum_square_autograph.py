"""Seed 000: AutoGraph turns a Python ``while`` on tensors into ``while_loop``.

    python samples/sum_square_autograph.py      # prints 285
    autoloop dump samples/sum_square_autograph.py::sumSquare
"""

import autoloop as tf


@tf.function
def sumSquare(n):
    i, result = tf.constant(0), tf.constant(0)
    while i < n:  # AutoGraph converts while loop to tf.while_loop().
        result += i * i
        i += 1
    return result


if __name__ == "__main__":
    print(sumSquare(10).numpy())

# expected output:
# 285
