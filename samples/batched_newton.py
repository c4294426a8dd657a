"""Newton's method per entry with `vectorized_map`: each entry iterates until its own tolerance is met.

`sqrt_newton` finds the square root of one number with Newton steps
``x = (x + a / x) / 2`` until ``|x * x - a| <= 1e-6 * a``: a data-dependent
while loop. `vectorized_map` runs it once on the whole batch; each entry
takes its own number of steps (the far-off 1e6 needs many more than 4),
finished entries are dropped from the work (compaction), and the results
equal `map_fn`'s, the loop over entries.
"""

import numpy as np

import autoloop as tf


def sqrt_newton(a):
    x = a
    steps = 0
    while tf.abs(x * x - a) > 1e-6 * a:
        x = (x + a / x) / 2.0
        steps += 1
    return x, steps


@tf.function
def batched_sqrt(values):
    return tf.vectorized_map(sqrt_newton, values)


values = tf.constant([4.0, 2.0, 1e6, 0.25], tf.float64)
roots, steps = batched_sqrt(values)
print([f"{root:.4f}" for root in roots.numpy()])
print(steps.numpy())
looped = tf.map_fn(sqrt_newton, values, fn_output_signature=(tf.float64, tf.int32))
print(bool(np.array_equal(looped[0].numpy(), roots.numpy())), bool(np.array_equal(looped[1].numpy(), steps.numpy())))

# expected output:
# ['2.0000', '1.4142', '1000.0002', '0.5000']
# [ 4  4 13  4]
# True True
