"""A batched per-entry Newton iteration, run whole or sharded over processes with JAX's runtime.

Each entry of `a` runs Newton's method for its square root until its own
residual is small: entries stop at different steps, and the loop ends when
the last one is done. Run as it is, the script computes the batch in one
process (numpy backend). Two local processes of JAX's distributed runtime
(the `jax` extra) split the batch between them:

    autoloop run --processes 2 samples/sharded_newton.py::newton_sqrt '[1, 2, 9, 100, 0.25, 7, 1e6, 3]'

or, as a cluster launcher would start it (one command per process, the same
program on every host):

    JAX_COORDINATOR_ADDRESS=127.0.0.1:9876 JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=0 python samples/sharded_newton.py &
    JAX_COORDINATOR_ADDRESS=127.0.0.1:9876 JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=1 python samples/sharded_newton.py

Each process then runs the loop on its own half; the one value they share per
iteration is the `reduce_any` of the loop's condition (an all-reduce).
"""

import os

import numpy as np

import autoloop as tf

BATCH = [1.0, 2.0, 9.0, 100.0, 0.25, 7.0, 1e6, 3.0]


def newton_sqrt(a):
    """The square root of each entry of `a` and the Newton steps each took."""
    x = a
    steps = tf.zeros_like(a, dtype=tf.int32)
    active = tf.abs(x * x - a) > 1e-6 * a
    while tf.reduce_any(active):
        x = tf.where(active, 0.5 * (x + a / x), x)
        steps += tf.cast(active, tf.int32)
        active = (tf.abs(x * x - a) > 1e-6 * a) & (steps < 100)
    return x, steps


def main():
    batch = np.array(BATCH, np.float32)
    whole = tf.function(newton_sqrt)(tf.constant(batch))
    if "JAX_NUM_PROCESSES" not in os.environ:  # one process
        print([round(float(root), 3) for root in whole[0].numpy()])
        print(whole[1].numpy().tolist())
        return
    cluster = tf.distributed.initialize()
    sharded = tf.function(newton_sqrt, backend="jax", jax_arrays=True)
    roots, steps = tf.distributed.gather(sharded(tf.distributed.shard(batch)))
    if cluster.process_id == 0:
        agree = np.allclose(roots, whole[0].numpy(), rtol=1e-6) and np.array_equal(steps, whole[1].numpy())
        print(f"{cluster.num_processes} processes agree with one: {agree}")
    tf.distributed.shutdown()


if __name__ == "__main__":
    main()

# expected output:
# [1.0, 1.414, 3.0, 10.0, 0.5, 2.646, 1000.0, 1.732]
# [0, 4, 5, 7, 4, 5, 13, 4]
