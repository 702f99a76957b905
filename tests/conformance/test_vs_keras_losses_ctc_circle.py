"""Keras 3's ``losses.CTC``/``ctc`` and ``losses.Circle``/``circle``, and Keras 2's ``backend.ctc_batch_cost``,
``ctc_decode`` and ``ctc_label_dense_to_sparse``, on unison against Keras 3.15 / tf_keras on TF 2.21."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

# (batch 2, time 5, classes 4) logits; labels padded with 0 (Keras 3: 0 is the blank)
LOGITS = (np.sin(np.arange(40) * 0.7) * 2.0).reshape(2, 5, 4).astype(np.float32)
LABELS = np.array([[1, 2, 0], [3, 3, 1]], np.int32)

CTC_NAMES = ("keras:losses.CTC", "keras:losses.ctc")


@same_as_tf(*CTC_NAMES, dialects=("keras",), rtol=1e-4, atol=1e-5)
def test_ctc_loss(tf):
    losses = tf.keras.losses
    weighted = losses.CTC(reduction="sum")(LABELS, LOGITS, sample_weight=np.array([1.0, 0.5], np.float32))
    return losses.ctc(LABELS, LOGITS), losses.CTC()(LABELS, LOGITS), weighted, losses.CTC().get_config()


@same_as_tf(*CTC_NAMES, edge=True, dialects=("keras",), rtol=1e-4, atol=1e-5)
def test_ctc_loss_of_an_empty_label_and_a_bad_rank(tf):
    losses = tf.keras.losses
    empty = np.zeros((2, 3), np.int32)  # no label: the probability of all-blank paths
    try:
        losses.ctc(LABELS[0], LOGITS)
    except ValueError as e:
        raised = type(e).__name__
    return losses.ctc(empty, LOGITS), raised


EMB = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-0.6, 0.8], [0.6, -0.8]], np.float32)
CLASSES = np.array([0, 0, 1, 1, 0], np.int32)
CIRCLE_NAMES = ("keras:losses.Circle", "keras:losses.circle")


@same_as_tf(*CIRCLE_NAMES, dialects=("keras",), rtol=1e-4, atol=1e-5)
def test_circle_loss(tf):
    losses = tf.keras.losses
    loss = losses.Circle(gamma=10.0, margin=0.25)
    return (
        losses.circle(CLASSES, EMB),
        losses.circle(CLASSES, EMB, ref_labels=CLASSES[:3], ref_embeddings=EMB[:3], remove_diagonal=False),
        loss(CLASSES, EMB),
        losses.Circle(reduction="sum")(CLASSES, EMB),
        {k: v for k, v in loss.get_config().items() if k != "dtype"},
    )


@same_as_tf(*CIRCLE_NAMES, edge=True, dialects=("keras",), rtol=1e-4, atol=1e-5)
def test_circle_loss_with_one_class_and_zero_losses(tf):
    losses = tf.keras.losses
    one_class = np.zeros(5, np.int32)  # no negatives: every loss is softplus(-inf) = 0
    apart = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)  # well separated: the mean divides by no one
    return (
        losses.circle(one_class, EMB),
        losses.Circle()(one_class, EMB),
        losses.Circle(gamma=1.0)(np.array([0, 1], np.int32), apart),
        losses.Circle(gamma=5.0)(CLASSES, EMB, sample_weight=np.array([1, 0, 1, 2, 1], np.float32)),
    )


# Keras 2: softmax probabilities, the blank is the last class
PROBS = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
K2_LABELS = np.array([[0, 1, 2], [2, 2, 0]], np.int32)
K2_CTC = (
    "tf_keras:backend.ctc_batch_cost",
    "tf_keras:backend.ctc_decode",
    "tf_keras:backend.ctc_label_dense_to_sparse",
)


def _sparse(sp):
    return np.asarray(sp.indices), np.asarray(sp.values), np.asarray(sp.dense_shape)


@same_as_tf(*K2_CTC, dialects=("tf_keras",), rtol=1e-4, atol=1e-5)
def test_keras2_ctc(tf):
    K = tf.keras.backend
    column = np.array([[5], [5]], np.int32)
    cost = K.ctc_batch_cost(K2_LABELS, PROBS, column, np.array([[2], [3]], np.int32))
    greedy, greedy_lp = K.ctc_decode(PROBS, np.array([5, 4], np.int32))
    beam, beam_lp = K.ctc_decode(PROBS, np.array([5, 5], np.int32), greedy=False, beam_width=8, top_paths=2)
    sparse = K.ctc_label_dense_to_sparse(K2_LABELS, np.array([2, 3], np.int32))
    return cost, greedy, greedy_lp, beam, beam_lp, _sparse(sparse)


@same_as_tf(*K2_CTC, edge=True, dialects=("tf_keras",), rtol=1e-4, atol=1e-5)
def test_keras2_ctc_of_short_inputs_and_empty_labels(tf):
    K = tf.keras.backend
    cost = K.ctc_batch_cost(K2_LABELS, PROBS, np.array([[5], [3]], np.int32), np.array([[1], [1]], np.int32))
    decoded, log_prob = K.ctc_decode(PROBS, np.array([1, 0], np.int32))
    sparse = K.ctc_label_dense_to_sparse(K2_LABELS, np.array([0, 0], np.int32))
    return cost, decoded, log_prob, _sparse(sparse)


@same_as_tf(*K2_CTC, edge=True, dialects=("tf_keras",))
def test_keras2_ctc_cost_of_an_empty_label_raises(tf):
    K = tf.keras.backend
    return K.ctc_batch_cost(K2_LABELS, PROBS, np.array([[5], [5]], np.int32), np.array([[0], [1]], np.int32))
