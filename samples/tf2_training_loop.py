"""A TF2 training loop: a Module's weights in Variables, trained by gradient descent inside one function.

The whole loop (a ``while`` over the steps, the loss, its gradient from a
GradientTape, ``assign_sub``) is one traced function; the weights live in
the model's variables and keep their trained values after the call. The
same training is written by hand in numpy, with the gradient worked out on
paper, and the two agree on both backends.
"""

import importlib.util

import numpy as np

import autoloop as tf


class Linear(tf.Module):
    def __init__(self, size_in, size_out, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = tf.Variable(np.full([size_in, size_out], 0.1, np.float32), name="w")
            self.b = tf.Variable(np.zeros([size_out], np.float32), name="b")

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


def make_train(model, learning_rate, backend):
    @tf.function(backend=backend)
    def train(x, y, steps):
        step = 0
        loss = tf.constant(0.0)
        while step < steps:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            gradients = tape.gradient(loss, model.trainable_variables)
            for variable, gradient in zip(model.trainable_variables, gradients):
                variable.assign_sub(learning_rate * gradient)
            step += 1
        return loss
    return train


def train_by_hand(x, y, steps, learning_rate):
    w, b = np.full([3, 1], 0.1, np.float32), np.zeros([1], np.float32)
    for _ in range(steps):
        error = x @ w + b - y
        loss = np.mean(error ** 2)
        grad_w = 2 * x.T @ error / error.size
        grad_b = 2 * error.sum(axis=0) / error.size
        b, w = b - learning_rate * grad_b, w - learning_rate * grad_w
    return loss, w, b


x = np.sin(np.arange(24, dtype=np.float32).reshape(8, 3) * np.float32([1.0, 2.3, 0.7]))
y = x @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.25

expected_loss, expected_w, expected_b = train_by_hand(x, y, steps=40, learning_rate=0.1)
for backend in ("numpy", "jax"):
    if backend == "jax" and importlib.util.find_spec("jax") is None:
        print("jax: not installed (pip install 'autoloop[jax]')")
        continue
    model = Linear(3, 1, name="linear")
    train = make_train(model, learning_rate=0.1, backend=backend)
    loss = train(x, y, tf.constant(40))
    matches = np.allclose(model.w.numpy(), expected_w, atol=1e-4) and np.allclose(model.b.numpy(), expected_b,
                                                                                   atol=1e-4)
    print(f"{backend}: loss {loss.numpy():.4f}, trained {[v.name for v in model.trainable_variables]}, "
          f"matches numpy: {matches}")
print("w", [round(float(v), 2) for v in expected_w.ravel()], "b", [round(float(v), 2) for v in expected_b])

# expected output:
# numpy: loss 0.0395, trained ['linear/b:0', 'linear/w:0'], matches numpy: True
# jax: loss 0.0395, trained ['linear/b:0', 'linear/w:0'], matches numpy: True
# w [1.66, -0.79, 0.34] b [0.35]
