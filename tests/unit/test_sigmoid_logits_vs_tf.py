"""tf.nn.sigmoid / tf.nn.softmax outputs carry their logits into Keras's cross-entropies, as TF's graph mode does.

Keras 3 on TF computes a binary (categorical) cross-entropy from the input of a ``Sigmoid``
(``Softmax``) op when the probabilities come from one inside a graph (``fit``, ``tf.function``),
instead of clipping saturated probabilities at 1e-7. keras.io's collaborative-filtering example
ends in ``tf.nn.sigmoid`` and trains with ``BinaryCrossentropy()``: without this its losses differ.
Expected values printed by TensorFlow 2.21 + Keras 3.15 inside ``tf.function``.
"""

from __future__ import annotations

import pytest

import unison as tf
from unison import keras

pytestmark = pytest.mark.timeout(60)


def test_binary_crossentropy_on_tf_sigmoid_uses_the_logits():
    x = tf.constant([[30.0], [-2.0], [0.5]])
    y = tf.constant([[0.0], [1.0], [1.0]])
    bce = keras.losses.BinaryCrossentropy()
    for sigmoid in (tf.nn.sigmoid, tf.sigmoid, tf.math.sigmoid):
        assert float(bce(y, sigmoid(x))) == pytest.approx(10.867000579833984, rel=1e-6)  # TF eager, clipped: 6.18
    plain = tf.constant([[1.0], [0.11920292], [0.62245935]])  # the same probabilities, no logits attached
    assert float(bce(y, plain)) == pytest.approx(6.1811299324035645, rel=1e-5)


def test_categorical_crossentropy_on_tf_softmax_uses_the_logits():
    logits = tf.constant([[20.0, -20.0, 0.0]])
    target = tf.constant([[0.0, 1.0, 0.0]])
    cce = keras.losses.CategoricalCrossentropy()
    assert float(cce(target, tf.nn.softmax(logits))) == pytest.approx(40.0, rel=1e-6)  # TF eager, clipped: 16.118
    # a softmax over another axis does not normalise where the loss does: no logits attached
    assert not hasattr(tf.nn.softmax(logits, axis=0), keras.activations.LOGITS_ATTR)
    assert hasattr(tf.nn.softmax(logits, axis=-1), keras.activations.LOGITS_ATTR)
