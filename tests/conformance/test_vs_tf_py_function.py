"""``tf.py_function``, ``tf.numpy_function``, ``tf.custom_gradient`` and ``tf.recompute_grad``
against TensorFlow 2.21 (see tf_oracle.py for the rules)."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf


@same_as_tf("py_function")
def test_py_function(tf):
    x = tf.constant([1.0, 2.0])
    one = tf.py_function(lambda a: a * 2, [x], tf.float32)
    pair = tf.py_function(lambda a, b: (a + b, tf.cast(a, tf.int32)), [x, 1.0], [tf.float32, tf.int32])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.py_function(lambda a: a * a, [x], tf.float32))
    return one, pair, tape.gradient(y, x)


@same_as_tf("py_function", edge=True)
def test_py_function_wrong_output_dtype(tf):
    return tf.py_function(lambda a: a, [tf.constant(3)], tf.int64)


@same_as_tf("numpy_function")
def test_numpy_function(tf):
    x = tf.constant([1.0, 4.0])
    return (
        tf.numpy_function(lambda a: np.sqrt(a), [x], tf.float32),
        tf.numpy_function(lambda a, b: (a * b, (a > 1).astype(np.int64)), [x, x], [tf.float32, tf.int64]),
    )


@same_as_tf("numpy_function", edge=True)
def test_numpy_function_keeps_the_returned_dtype(tf):
    return tf.numpy_function(lambda a: (a * 2).astype("float64"), [tf.constant(3.0)], tf.float32)


@same_as_tf("custom_gradient")
def test_custom_gradient_stable_log1pexp(tf):
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))

        return tf.math.log(1 + e), grad

    x = tf.constant([0.0, 100.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    return y, tape.gradient(y, x)


@same_as_tf("custom_gradient", edge=True)
def test_custom_gradient_two_inputs_and_variables(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scaled(a, b):
        def grad(dy, variables=None):
            return [dy * 10.0, dy * 20.0], [dy * 100.0 for _ in variables]

        return a * b * v, grad

    a, b = tf.constant(3.0), tf.constant(4.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = scaled(a, b)
    return y, tape.gradient(y, [a, b, v])


@same_as_tf("recompute_grad")
def test_recompute_grad(tf):
    f = tf.recompute_grad(lambda z: tf.sin(z) * z)
    x = tf.constant([0.5, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return y, tape.gradient(y, x)


@same_as_tf("recompute_grad", edge=True)
def test_recompute_grad_through_a_variable(tf):
    w = tf.Variable([[1.0, -1.0], [2.0, 0.5]])
    f = tf.recompute_grad(lambda z: tf.nn.relu(tf.matmul(z, w)))
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(f(x))
    return y, tape.gradient(y, w)


@same_as_tf("grad_pass_through")
def test_grad_pass_through_is_straight_through(tf):
    x = tf.constant([0.4, 1.6])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.grad_pass_through(tf.round)(x) * tf.constant([2.0, 3.0]))
    return y, tape.gradient(y, x)


@same_as_tf("grad_pass_through", edge=True)
def test_grad_pass_through_of_a_variable_assign(tf):
    v = tf.Variable(1.0)
    z = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = tf.grad_pass_through(v.assign)(z * z)
    return tape.gradient(y, z), v.read_value()
