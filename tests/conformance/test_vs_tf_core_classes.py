"""TF's core classes against TensorFlow 2.21: Variable, GradientTape, Module, function, TensorShape,
TensorSpec, DType, device and friends, compared through what a program observes of them."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

CLASSES = ("Variable", "GradientTape", "UnconnectedGradients", "stop_gradient")


@same_as_tf(*CLASSES, rtol=1e-5)
def test_variables_and_gradients(tf):
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    b = tf.Variable(0.5, trainable=False)
    w.assign_add(tf.ones([2, 2]))
    w.assign_sub(tf.constant([[0.5, 0.5], [0.5, 0.5]]))
    x = tf.constant([[1.0], [2.0]])
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.matmul(w, x) ** 2) + b
        z = tf.reduce_sum(tf.stop_gradient(w) * w)
    grads = tape.gradient(y, [w, b], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return w, w.numpy(), w.trainable, b.trainable, list(w.shape), grads, tape.gradient(z, w)


@same_as_tf(*CLASSES, edge=True)
def test_unconnected_gradients_and_second_order(tf):
    x = tf.Variable(3.0)
    other = tf.Variable(1.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x**3
        dy = inner.gradient(y, x)
    return (
        dy,
        outer.gradient(dy, x),
        tf.GradientTape().gradient(tf.constant(1.0), other),
        tf.UnconnectedGradients.NONE.value,
    )


@same_as_tf("Module", "function", "Variable")
def test_module_and_function(tf):
    class Dense(tf.Module):
        def __init__(self):
            super().__init__(name="dense")
            self.w = tf.Variable(tf.ones([3, 2]), name="w")
            self.b = tf.Variable(tf.zeros([2]), name="b")

        @tf.function
        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b

    layer = Dense()
    return layer(tf.constant([[1.0, 2.0, 3.0]])), layer.name, len(layer.trainable_variables), len(layer.variables)


@same_as_tf("Module", "function", "Variable", edge=True)
def test_function_with_input_signature(tf):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def double(x):
        return x * 2

    return double(tf.constant([1.0, 2.0])), double(tf.zeros([0]))


SHAPES = ("TensorShape", "TensorSpec", "DType", "as_dtype", "is_tensor", "Tensor")


@same_as_tf(*SHAPES)
def test_shapes_specs_and_dtypes(tf):
    s = tf.TensorShape([2, None, 3])
    spec = tf.TensorSpec([None, 4], tf.float32, name="x")
    return (
        s.as_list(),
        s.rank,
        s[0],
        s.is_fully_defined(),
        tf.TensorShape([2, 3]).num_elements(),
        s.is_compatible_with([2, 5, 3]),
        s.merge_with([None, 4, 3]).as_list(),
        list(spec.shape),
        spec.dtype == tf.float32,
        spec.name,
        spec.is_compatible_with(tf.zeros([7, 4])),
        tf.as_dtype("int64") == tf.int64,
        tf.is_tensor(tf.constant(1)),
        tf.is_tensor(np.array(1)),
        isinstance(tf.constant(1.0), tf.Tensor),
    )


@same_as_tf(*SHAPES, edge=True)
def test_unknown_shapes_and_dtype_limits(tf):
    unknown = tf.TensorShape(None)
    return (
        unknown.rank,
        tf.TensorShape([]).as_list(),
        tf.TensorShape([None]).is_fully_defined(),
        len(tf.TensorSpec([], tf.int32).shape),
        tf.as_dtype(np.float16) == tf.half,
        tf.is_tensor([1, 2]),
    )


@same_as_tf("device", "control_dependencies", "print", "executing_eagerly", "get_logger")
def test_context_managers_run_eagerly(tf):
    with tf.device("/cpu:0"):
        a = tf.constant([1.0, 2.0]) * 2
    with tf.control_dependencies([a]):
        b = a + 1
    tf.print("value:", b)
    return a, b, tf.executing_eagerly(), tf.get_logger().name


@same_as_tf("device", "control_dependencies", "print", "executing_eagerly", "get_logger", edge=True)
def test_context_managers_with_nothing(tf):
    with tf.device(None):
        a = tf.constant(1)
    with tf.control_dependencies(None):
        b = a + 1
    return a, b, tf.print(), tf.get_logger().name == "tensorflow"
