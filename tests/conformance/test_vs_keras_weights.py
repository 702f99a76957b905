"""A model's weight lists and ``keras.Input``'s batch size, unison against Keras 3 and Keras 2.

``model.weights``/``get_weights()`` list a model's variables layer by layer, each layer's own in
creation order (a BatchNormalization's gamma, beta, moving mean, moving variance in a row), in
both Keras versions; arrays from ``get_weights`` of one side must load into the other's model of
the same architecture and give the same predictions. ``Normalization`` keeps its statistics in the
shape of its kept axes (``(3,)`` for images' channels).
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")


def _deterministic_weights(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Arrays of ``shapes`` with values that depend on their position (variances stay positive)."""
    out = []
    for i, shape in enumerate(shapes):
        size = int(np.prod(shape)) if shape else 1
        values = 0.5 + 0.25 * np.sin(np.arange(size, dtype="float64") * 0.7 + i)
        out.append(values.reshape(shape).astype("float32"))
    return out


def _mixed_model(keras):
    inputs = keras.Input((4,))
    x = keras.layers.Dense(3, name="first")(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Dense(2, activation="tanh")(x)
    return keras.Model(inputs, x)


@pytest.mark.parametrize("frozen", [False, True])
@same_as_tf("keras:Model", dialects=BOTH)
def test_model_weights_order_and_exchange(tf, frozen):
    model = _mixed_model(tf.keras)
    if frozen:  # a frozen first layer: Keras still lists weights layer by layer
        model.get_layer("first").trainable = False
    shapes = [tuple(w.shape) for w in model.get_weights()]
    model.set_weights(_deterministic_weights(shapes))
    x = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(3, 4)
    return {
        "shapes": [list(s) for s in shapes],
        "weights_shapes": [list(w.shape) for w in model.weights],
        "trainable": [list(w.shape) for w in model.trainable_weights],
        "non_trainable": [list(w.shape) for w in model.non_trainable_weights],
        "prediction": model.predict(x, verbose=0),
        "back": model.get_weights(),
    }


@same_as_tf("keras:Model", edge=True, dialects=BOTH)
def test_set_weights_of_the_wrong_count_raises(tf):
    model = _mixed_model(tf.keras)
    model.set_weights(model.get_weights()[:-1])


@same_as_tf("keras:Sequential", dialects=BOTH)
def test_sequential_conv_bn_weights_order(tf):
    keras = tf.keras
    model = keras.Sequential(
        [
            keras.Input((6, 6, 2)),
            keras.layers.Conv2D(3, 3),
            keras.layers.BatchNormalization(),
            keras.layers.Conv2D(2, 1, use_bias=False),
            keras.layers.BatchNormalization(center=False),
        ]
    )
    shapes = [tuple(w.shape) for w in model.get_weights()]
    model.set_weights(_deterministic_weights(shapes))
    x = np.linspace(-1.0, 1.0, 72, dtype="float32").reshape(1, 6, 6, 2)
    return [list(s) for s in shapes], model.predict(x, verbose=0)


@pytest.mark.parametrize("how", ["batch_size", "batch_shape"])
@same_as_tf("keras:Input", "keras:layers.Input", dialects=BOTH)
def test_input_batch_size_is_in_the_shape(tf, how):
    keras = tf.keras
    inputs = keras.Input((3,), batch_size=4) if how == "batch_size" else keras.Input(batch_shape=(4, 3))
    hidden = keras.layers.Dense(2)(inputs)
    model = keras.Model(inputs, hidden)
    return {
        "input": list(inputs.shape),
        "dense": list(hidden.shape),
        "model_input": list(model.input_shape),
        "model_output": list(model.output_shape),
        "unbatched": list(keras.Input((3,)).shape),
    }


@pytest.mark.parametrize(("axis", "shape"), [(-1, (5, 4, 4, 3)), ((1, 2), (5, 4, 3, 2)), (None, (5, 3))])
@same_as_tf("keras:layers.Normalization", dialects=BOTH)
def test_normalization_statistics_shapes(tf, axis, shape):
    data = np.linspace(0.0, 4.0, int(np.prod(shape)), dtype="float32").reshape(shape)
    layer = tf.keras.layers.Normalization(axis=axis)
    layer.adapt(data)
    return [list(w.shape) for w in layer.weights[:2]], layer(data)
