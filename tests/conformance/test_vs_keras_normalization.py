"""BatchNormalization, GroupNormalization and LayerNormalization against Keras 3 on TensorFlow 2.21.

Beyond the layer table of ``test_vs_keras_layers.py`` (outputs only), these run training steps
under ``GradientTape`` and compare what training depends on: the outputs, the gradients with
respect to the input, ``gamma`` and ``beta``, and BatchNormalization's moving statistics after
each step (Keras's momentum convention and its biased batch variance), then inference with the
moving statistics, and a frozen layer (``trainable = False`` runs in inference mode).
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

pytestmark = pytest.mark.timeout(300)


def _inputs(shape: tuple, step: int) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.cos(np.arange(n) * 0.37 + step) * (step + 1) + 0.1 * step).reshape(shape).astype("float32")


def _seed(shape: tuple) -> np.ndarray:
    return np.sin(np.arange(int(np.prod(shape))) * 0.61).reshape(shape).astype("float32")


def _train_steps(tf, layer, shape: tuple, steps: int) -> list:
    out = []
    for step in range(steps):
        x = tf.constant(_inputs(shape, step))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=True)
            loss = tf.reduce_sum(y * tf.constant(_seed(shape)))
        grads = tape.gradient(loss, [x, *layer.trainable_weights])
        out.append([y, *grads, *[np.array(w) for w in layer.non_trainable_weights]])
    return out


BATCH_CASES = (
    ({}, (6, 4)),
    ({"momentum": 0.8}, (2, 5, 5, 3)),
    ({"axis": 1, "momentum": 0.5, "epsilon": 1e-2}, (3, 4, 5)),
    ({"center": False}, (4, 6, 2)),
    ({"scale": False, "axis": 2}, (2, 3, 4, 2)),
)


@pytest.mark.parametrize(("kwargs", "shape"), BATCH_CASES)
@same_as_tf("keras:layers.BatchNormalization", rtol=1e-4, atol=1e-4)
def test_batch_normalization_training_steps_and_inference(tf, kwargs, shape):
    layer = tf.keras.layers.BatchNormalization(**kwargs)
    layer.build(shape)
    steps = _train_steps(tf, layer, shape, 3)
    x = tf.constant(_inputs(shape, 7))
    return steps, layer(x, training=False)


@same_as_tf("keras:layers.BatchNormalization", edge=True, rtol=1e-4, atol=1e-4)
def test_frozen_batch_normalization_uses_its_moving_statistics(tf):
    shape = (8, 3)
    layer = tf.keras.layers.BatchNormalization(momentum=0.5)
    layer.build(shape)
    _train_steps(tf, layer, shape, 2)
    layer.trainable = False
    x = tf.constant(_inputs(shape, 5))
    y = layer(x, training=True)
    return y, [np.array(w) for w in layer.weights]


@same_as_tf("keras:layers.BatchNormalization", edge=True, rtol=1e-4, atol=1e-4)
def test_batch_normalization_of_a_single_row(tf):
    layer = tf.keras.layers.BatchNormalization(momentum=0.5)
    layer.build((1, 3))
    return _train_steps(tf, layer, (1, 3), 2)


@pytest.mark.parametrize(("kwargs", "shape"), [({"groups": 2}, (2, 5, 4)), ({"groups": -1}, (2, 3, 3, 4))])
@same_as_tf("keras:layers.GroupNormalization", rtol=1e-4, atol=1e-4)
def test_group_normalization_outputs_and_gradients(tf, kwargs, shape):
    layer = tf.keras.layers.GroupNormalization(**kwargs)
    layer.build(shape)
    return _train_steps(tf, layer, shape, 2)


@pytest.mark.parametrize("kwargs", [{}, {"rms_scaling": True}, {"axis": (1, 2)}])
@same_as_tf("keras:layers.LayerNormalization", rtol=1e-4, atol=1e-4)
def test_layer_normalization_outputs_and_gradients(tf, kwargs):
    layer = tf.keras.layers.LayerNormalization(**kwargs)
    layer.build((2, 3, 4))
    return _train_steps(tf, layer, (2, 3, 4), 2)
