"""Keras 2's (tf_keras) spellings of ``InputLayer`` (``input_shape=``) and ``RandomHeight``/``RandomWidth``
at inference and with bad factors, on unison against tf_keras 2.21."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

K2 = ("tf_keras",)
IMAGES = np.arange(2 * 4 * 5 * 3, dtype="float32").reshape(2, 4, 5, 3)


@same_as_tf("tf_keras:layers.InputLayer", dialects=K2)
def test_input_layer_keras2_spelling(tf):
    keras = tf.keras
    model = keras.Sequential(
        [keras.layers.InputLayer(input_shape=(3,)), keras.layers.Dense(2, kernel_initializer="ones")]
    )
    return model(np.ones((2, 3), "float32")), [tuple(w.shape) for w in model.get_weights()]


@same_as_tf("tf_keras:layers.InputLayer", edge=True, dialects=K2)
def test_input_layer_of_ints_keras2_spelling(tf):
    keras = tf.keras
    model = keras.Sequential(
        [
            keras.layers.InputLayer(input_shape=(None,), dtype="int32"),
            keras.layers.Embedding(5, 2, embeddings_initializer="ones"),
        ]
    )
    return model(np.array([[1, 2, 3]], "int32"))


@same_as_tf("tf_keras:layers.RandomHeight", "tf_keras:layers.RandomWidth", dialects=K2)
def test_random_height_width_at_inference(tf):
    x = tf.constant(IMAGES)
    return (
        tf.keras.layers.RandomHeight(0.3, seed=1)(x, training=False),
        tf.keras.layers.RandomWidth((-0.2, 0.4), seed=1)(x, training=False),
    )


@pytest.mark.parametrize("factor", [1.5, (-1.5, 0.2), (0.5, 0.1)])
@same_as_tf("tf_keras:layers.RandomHeight", "tf_keras:layers.RandomWidth", edge=True, dialects=K2)
def test_random_height_width_bad_factors(tf, factor):
    errors = []
    for cls in (tf.keras.layers.RandomHeight, tf.keras.layers.RandomWidth):
        try:
            cls(factor)
            errors.append(None)
        except ValueError as exc:
            errors.append(type(exc).__name__)
    return errors
