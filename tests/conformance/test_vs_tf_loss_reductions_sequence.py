"""Loss reductions on sequence outputs ``(batch, steps, ...)``, against Keras 3 on TF 2.21 and tf_keras 2.21.

``reduction="none"`` gives the unreduced losses back (``(batch, steps)``: TF's translation
tutorials multiply them by their own padding mask), ``"sum"`` adds every one of them, and the
default divides that sum by their number.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
PRED = np.random.default_rng(0).normal(size=(2, 3, 5)).astype("float32")
LABELS = np.array([[1, 2, 0], [3, 0, 0]], "int64")


@pytest.mark.parametrize("reduction", ["none", "sum", "sum_over_batch_size"])
@same_as_tf("keras:losses.SparseCategoricalCrossentropy", dialects=BOTH)
def test_sparse_crossentropy_of_a_sequence(tf, reduction):
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=reduction)
    return loss(LABELS, PRED), loss(LABELS, PRED, sample_weight=np.array([[1.0], [2.0]], "float32"))


@pytest.mark.parametrize("reduction", ["none", "sum", "sum_over_batch_size"])
@same_as_tf("keras:losses.SparseCategoricalCrossentropy", dialects=("keras",))
def test_sparse_crossentropy_ignore_class_of_a_sequence(tf, reduction):
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0, reduction=reduction)
    return loss(LABELS, PRED)


@pytest.mark.parametrize("reduction", ["none", "sum"])
@same_as_tf("keras:losses.MeanSquaredError", "keras:losses.BinaryCrossentropy", dialects=BOTH)
def test_elementwise_losses_of_a_sequence(tf, reduction):
    mse = tf.keras.losses.MeanSquaredError(reduction=reduction)
    bce = tf.keras.losses.BinaryCrossentropy(reduction=reduction)
    probs = 1.0 / (1.0 + np.exp(-PRED[..., :1]))
    return mse(np.zeros_like(PRED), PRED), bce(np.ones((2, 3, 1), "float32"), probs)


@same_as_tf("keras:losses.SparseCategoricalCrossentropy", dialects=BOTH)
def test_the_tutorials_masked_loss(tf):
    # TF's "Neural machine translation with a Transformer and Keras" tutorial, as written there
    def masked_loss(label, pred):
        mask = label != 0
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
        loss = loss_object(label, pred)
        mask = tf.cast(mask, dtype=loss.dtype)
        loss *= mask
        return tf.reduce_sum(loss) / tf.reduce_sum(mask)

    return masked_loss(tf.constant(LABELS), tf.constant(PRED))
