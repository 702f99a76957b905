"""What keras.io's example programs meet, against Keras 3: ``model.summary()``'s table, ``add_metric``.

The examples print a functional model's summary first thing (the VAE's encoder, the conditional
GAN's discriminator); these compare the printed lines, with ``line_length`` given so that Keras
does not size the table to the terminal.
"""

import numpy as np
import pytest
from tf_oracle import same_as_tf


def _lines(model, **kwargs):
    lines = []
    model.summary(print_fn=lines.append, line_length=76, **kwargs)
    # Keras 3 hands print_fn the whole table at once, unison line by line
    return [line.rstrip() for line in "\n".join(lines).rstrip("\n").split("\n")]


@pytest.mark.parametrize("graph", ["chain", "branches", "shared", "late_input"])
@same_as_tf("keras:Model")
def test_functional_summary_lines_as_keras_3(tf, graph):
    keras = tf.keras
    if graph == "chain":  # sequential-like: three columns, the InputLayer's row first
        x = keras.Input((3,), name="pixels")
        model = keras.Model(x, keras.layers.Dense(2, name="out")(keras.layers.Dense(4, name="hidden")(x)))
    elif graph == "branches":  # two inputs merged, two outputs: the "Connected to" column
        a, b = keras.Input((3,), name="a"), keras.Input((3,), name="b")
        z = keras.layers.Concatenate(name="cat")([a, b])
        mean, log_var = keras.layers.Dense(2, name="mean")(z), keras.layers.Dense(2, name="log_var")(z)
        model = keras.Model([a, b], [mean, keras.layers.Add(name="sum")([mean, log_var])])
    elif graph == "late_input":  # an Input joining late is listed just before the layer it feeds
        a, b = keras.Input((3,), name="a"), keras.Input((2,), name="b")
        h = keras.layers.Dense(4, name="d2")(keras.layers.Dense(4, name="d1")(a))
        model = keras.Model([a, b], keras.layers.Concatenate(name="cat")([h, b]))
    else:  # a layer called twice: both calls listed, the second naming the first's node
        a = keras.Input((3,), name="a")
        shared = keras.layers.Dense(3, name="shared")
        model = keras.Model(a, [shared(shared(a)), keras.layers.Dense(1, name="o")(a)])
    lines = _lines(model)
    return lines[1:]  # the title holds the model's auto-numbered name


@same_as_tf("keras:Model", edge=True)
def test_sequential_summary_rules_between_rows_and_nested_rows_as_keras_3(tf):
    keras = tf.keras
    inner = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="inner_dense")], name="inner")
    model = keras.Sequential([keras.Input((3,)), inner, keras.layers.Dense(2, name="head")], name="outer")
    return _lines(model, expand_nested=True)


@same_as_tf("keras:layers.Layer", dialects=("keras",), edge=True)
def test_add_metric_raises_as_keras_3(tf):
    # keras.io's endpoint-layer example calls it; tf_keras still has it, Keras 3 raises
    keras = tf.keras

    class Endpoint(keras.layers.Layer):
        def call(self, logits):
            self.add_metric(tf.reduce_mean(logits), name="mean_logit")
            return logits

    return Endpoint()(tf.ones((2, 1)))


@same_as_tf("keras:initializers.VarianceScaling", "keras:initializers.HeNormal")
def test_variance_scaling_fan_axes_as_keras_3_15(tf):
    # keras.io's antirectifier serializes its he_normal initializer: Keras 3.15 lists the fan axes
    inits = tf.keras.initializers
    he = inits.get("he_normal")
    rebuilt = inits.deserialize(inits.serialize(he))
    scaled = inits.VarianceScaling(1.0, "fan_in", "uniform", seed=3, input_axes=[0], output_axes=[1, 2])
    values = tf.convert_to_tensor(scaled((50, 2, 3))).numpy()
    limit = (3.0 / 50) ** 0.5  # fan_in is axis 0's size alone, not 50 * 2
    return (
        he.get_config(),
        rebuilt.get_config(),
        scaled.get_config(),
        bool(abs(values).max() <= limit * 1.0001),
        bool(abs(values).max() > 0.9 * limit),
    )


@same_as_tf("linspace")
def test_linspace_of_integers_is_float64_as_tf(tf):
    # keras.io's conditional GAN interpolates with tf.linspace(0, 1, num_interpolation)[:, None]
    return tf.linspace(0, 1, 9)[:, None], tf.linspace(tf.constant([0, 2]), tf.constant([4, 6]), 3, axis=-1)


@pytest.mark.parametrize("stop", ["float", "tensor"])
@same_as_tf("linspace", edge=True)
def test_linspace_refuses_a_stop_of_another_dtype_as_tf(tf, stop):
    return tf.linspace(0, 1.5 if stop == "float" else tf.constant(1.0), 3)


@same_as_tf("keras:Model", edge=True)
def test_summary_cuts_a_word_too_long_for_its_column_as_keras_3(tf):
    # keras.io's subclassing_conv_layers: (StandardizedConv2DWithOverride) is wider than the column
    keras = tf.keras

    class StandardizedConv2DWithOverride(keras.layers.Conv2D):
        pass

    layer = StandardizedConv2DWithOverride(2, 3, name="standardized_conv2d_with_override")
    return _lines(keras.Sequential([keras.Input((5, 5, 1)), layer], name="long"))


@pytest.mark.parametrize("hook", ["override", "call"])
@same_as_tf("keras:layers.Conv2D")
def test_conv2d_convolution_op_as_keras(tf, hook):
    # keras.io's subclassing_conv_layers: a subclass changes the kernel its convolution uses
    keras = tf.keras

    class DoubledOverride(keras.layers.Conv2D):
        def convolution_op(self, inputs, kernel):
            return tf.nn.conv2d(inputs, kernel * 2.0, strides=list(self.strides), padding="VALID")

    class DoubledCall(keras.layers.Conv2D):
        def call(self, inputs):
            return self.convolution_op(inputs, self.kernel * 2.0) + self.bias

    cls = DoubledOverride if hook == "override" else DoubledCall
    layer = cls(2, 2, activation="relu", kernel_initializer="ones", bias_initializer="ones")
    x = tf.reshape(tf.range(-8.0, 10.0), (1, 3, 3, 2))
    return layer(x)


@pytest.mark.parametrize("rank", [1, 3])
@same_as_tf("keras:layers.Conv1D", "keras:layers.Conv3D")
def test_conv1d_conv3d_convolution_op_as_keras(tf, rank):
    keras = tf.keras
    base = keras.layers.Conv1D if rank == 1 else keras.layers.Conv3D

    class Doubled(base):
        def call(self, inputs):
            return self.convolution_op(inputs, self.kernel * 2.0) + self.bias

    layer = Doubled(2, 2, padding="same", kernel_initializer="ones", bias_initializer="ones")
    shape = (1, 3, 4) if rank == 1 else (1, 2, 2, 2, 3)
    size = int(np.prod(shape))
    x = tf.reshape(tf.range(-size / 2, size / 2), shape)
    return layer(x)


@same_as_tf("keras:Model")
def test_fit_logs_a_metric_kept_by_a_layer_as_keras_3(tf):
    # keras.io's endpoint-layer pattern: the layer updates its own BinaryAccuracy, fit logs it
    keras = tf.keras

    class Endpoint(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.accuracy_fn = keras.metrics.BinaryAccuracy(name="accuracy")

        def call(self, logits, targets=None):
            if targets is not None:
                self.add_loss(tf.reduce_mean(tf.square(logits - targets)))
                self.accuracy_fn.update_state(targets, tf.sigmoid(logits))
            return logits

    inputs, targets = keras.Input((2,), name="inputs"), keras.Input((1,), name="targets")
    model = keras.Model(
        [inputs, targets], Endpoint()(keras.layers.Dense(1, kernel_initializer="ones")(inputs), targets)
    )
    model.compile("sgd")
    x = np.array([[1.0, 0.0], [-1.0, -1.0], [2.0, 1.0], [0.0, -3.0]], "float32")
    y = np.array([[1.0], [1.0], [1.0], [0.0]], "float32")
    history = model.fit({"inputs": x, "targets": y}, batch_size=4, epochs=2, verbose=0).history
    return sorted(history), history["accuracy"]


@pytest.mark.parametrize("metrics", [None, ["mae"]])
@same_as_tf("keras:Model", edge=True)
def test_model_metrics_list_compile_metrics_only_when_compiled_with_some(tf, metrics):
    # keras.io's trainer pattern returns {m.name: m.result() for m in self.metrics}
    keras = tf.keras
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=metrics)
    model.fit(np.ones((4, 2), "float32"), np.ones((4, 1), "float32"), verbose=0)
    return [m.name for m in model.metrics]
