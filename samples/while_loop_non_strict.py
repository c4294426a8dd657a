"""Seed 000: non-strict iterations, in a TF1 Session.

The counter's next value depends only on the counter, so the loop may run
the counter ahead of ``x`` (``parallel_iterations`` iterations at most).
``tf.compat.v1.Print`` writes its message to stderr each time it runs: run
this script to see the two threads' messages interleave. Fetching only the
counter (the last line) never runs ``x``'s updates, so no "Updating x"
message follows it.
"""

import autoloop as tf

with tf.compat.v1.Session() as sess:
    n = 10
    c = lambda i, x: i < n  # noqa: E731
    b = lambda i, x: (  # noqa: E731
        tf.compat.v1.Print(i + 1, [i], "Updating i based on i == "),
        # Let x depend on i
        tf.compat.v1.Print(x + i, [i], "Updating x based on i == "))
    # Make x to be a big matrix so its updating thread would run slowly
    x = tf.zeros([1000, 100], dtype=tf.int32)
    counter = tf.constant(0)
    counter_out, x_out = tf.while_loop(c, b, (counter, x))
    # The following line may increment the counter and x in parallel.
    # The counter thread may get ahead of the x thread, but not the
    # other way around. For example, the log may contain these messages:
    # ```
    # Updating i based on i == [9]
    # Updating x based on i == [3]
    # ```
    # meaning that the counter(i) thread is on iteration 9,
    # while the x thread is on iteration 3.
    print(sess.run(x_out).shape)

    # Only the counter: x is never updated.
    print(sess.run(counter_out))

# expected output:
# (1000, 100)
# 10
