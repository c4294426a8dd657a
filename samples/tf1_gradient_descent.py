"""A TF1 training loop: fit ``y = w * x + b`` with `GradientDescentOptimizer` in a Session.

The weights are `get_variable` variables; ``minimize(loss)`` returns one
operation that computes the gradients and updates both variables, and
each ``sess.run(train_op, feed_dict=...)`` runs one step. The data lie on
``y = 2x + 1``, so ``w`` and ``b`` approach 2 and 1 and the loss 0.
"""

import numpy as np

import autoloop.compat.v1 as tf

tf.disable_eager_execution()

xs = np.array([0.0, 1.0, 2.0, 3.0], dtype=np.float32)
ys = 2.0 * xs + 1.0

x = tf.placeholder(tf.float32, shape=[None], name="x")
y = tf.placeholder(tf.float32, shape=[None], name="y")
with tf.variable_scope("linear"):
    w = tf.get_variable("w", shape=[], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", shape=[], initializer=tf.constant_initializer(0.5))
loss = tf.reduce_mean(tf.square(w * x + b - y))
global_step = tf.get_variable("global_step", shape=[], dtype=tf.int32, initializer=tf.zeros_initializer(),
                              trainable=False)
train_op = tf.train.GradientDescentOptimizer(learning_rate=0.1).minimize(loss, global_step=global_step)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(200):
        _, current = sess.run([train_op, loss], feed_dict={x: xs, y: ys})
        if step % 50 == 0:
            print(f"step {step:3d}: loss {current:.4f}")
    final_w, final_b, steps = sess.run([w, b, global_step])
    print(f"w = {final_w:.3f}, b = {final_b:.3f} after {steps} steps; variables: "
          f"{[v.name for v in tf.trainable_variables()]}")

# expected output:
# step   0: loss 17.2500
# step  50: loss 0.0001
# step 100: loss 0.0000
# step 150: loss 0.0000
# w = 2.000, b = 1.000 after 200 steps; variables: ['linear/w:0', 'linear/b:0']
