"""``serialize``/``deserialize`` of losses, metrics, optimizers and regularizers, ``OrthogonalRegularizer``,
Keras 3's ``Dice``/``Tversky`` losses and correlation metrics, and Keras's metric spellings of loss
functions, on unison against Keras 3.15 and Keras 2 (tf_keras) on TF 2.21."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
Y = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]], np.float32)
P = np.array([[0.8, 0.1, 0.6, 0.3], [0.2, 0.4, 0.9, 0.7], [0.55, 0.65, 0.05, 0.45]], np.float32)

SERIALIZE_NAMES = (
    "keras:losses.serialize",
    "keras:losses.deserialize",
    "keras:metrics.serialize",
    "keras:metrics.deserialize",
    "keras:regularizers.serialize",
    "keras:regularizers.deserialize",
    "keras:optimizers.serialize",
    "keras:optimizers.deserialize",
)


def _roundtrip(tf, kind: str, case: str):
    y, p = tf.constant(Y), tf.constant(P)
    if kind == "losses":
        mod = tf.keras.losses
        obj = {"class": mod.BinaryCrossentropy(label_smoothing=0.1), "function": mod.mean_squared_error}[case]
        data = mod.serialize(obj)
        back = mod.deserialize(data)
        return data["class_name"], data.get("module"), back(y, p)
    if kind == "metrics":
        mod = tf.keras.metrics
        obj = {"class": mod.AUC(num_thresholds=7), "function": mod.Precision(thresholds=0.35)}[case]
        data = mod.serialize(obj)
        back = mod.deserialize(data)
        back.update_state(y, p)
        return data["class_name"], data.get("module"), back.result()
    if kind == "regularizers":
        mod = tf.keras.regularizers
        obj = {"class": mod.L1L2(l1=0.1, l2=0.2), "function": mod.OrthogonalRegularizer(factor=0.3, mode="columns")}[
            case
        ]
        data = mod.serialize(obj)
        back = mod.deserialize(data)
        return data["class_name"], data.get("module"), back(p), back.get_config()
    mod = tf.keras.optimizers
    obj = {"class": mod.Adam(learning_rate=0.01, beta_1=0.8), "function": mod.SGD(learning_rate=0.1, momentum=0.5)}[
        case
    ]
    data = mod.serialize(obj)
    back = mod.deserialize(data)
    config = back.get_config()
    return (
        data["class_name"],
        type(back).__name__,
        float(config["learning_rate"]),
        float(config.get("beta_1", config.get("momentum"))),
    )


@pytest.mark.parametrize("kind", ["losses", "metrics", "regularizers", "optimizers"])
@same_as_tf(*SERIALIZE_NAMES, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_serialize_roundtrip(tf, kind):
    return _roundtrip(tf, kind, "class")


@pytest.mark.parametrize("kind", ["losses", "metrics", "regularizers", "optimizers"])
@same_as_tf(*SERIALIZE_NAMES, edge=True, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_serialize_roundtrip_of_functions_and_options(tf, kind):
    return _roundtrip(tf, kind, "function")


ORTHO_NAMES = ("keras:regularizers.OrthogonalRegularizer", "keras:regularizers.orthogonal_regularizer")


@pytest.mark.parametrize(("factor", "mode"), [(0.01, "rows"), (0.5, "columns")])
@same_as_tf(*ORTHO_NAMES, dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_orthogonal_regularizer(tf, factor, mode):
    r = tf.keras.regularizers
    reg = r.OrthogonalRegularizer(factor=factor, mode=mode)
    by_name = r.get("orthogonal_regularizer")
    return (
        reg(tf.constant(P)),
        by_name(tf.constant(P)),
        reg.get_config(),
        r.orthogonal_regularizer is r.OrthogonalRegularizer,
    )


@pytest.mark.parametrize("case", ["mode", "rank"])
@same_as_tf(*ORTHO_NAMES, edge=True, dialects=BOTH)
def test_orthogonal_regularizer_refuses_bad_input(tf, case):
    r = tf.keras.regularizers
    if case == "mode":
        return r.OrthogonalRegularizer(mode="diagonal")
    return r.OrthogonalRegularizer()(tf.constant(np.ones((2, 2, 2), np.float32)))


OVERLAP_NAMES = ("keras:losses.Dice", "keras:losses.dice", "keras:losses.Tversky", "keras:losses.tversky")


@pytest.mark.parametrize("axis", [None, (1,)])
@same_as_tf(*OVERLAP_NAMES, rtol=1e-5, atol=1e-6)
def test_overlap_losses(tf, axis):
    L = tf.keras.losses
    y, p = tf.constant(Y), tf.constant(P)
    return (
        L.dice(y, p, axis=axis),
        L.Dice(axis=axis)(y, p),
        L.tversky(y, p, alpha=0.3, beta=0.7, axis=axis),
        L.Tversky(alpha=0.3, beta=0.7, axis=axis)(y, p),
        # reduction="sum" with axis=None: Keras sums the one batch value; unison counts it per example
        L.Dice(axis=(1,), reduction="sum")(y, p),
    )


@same_as_tf(*OVERLAP_NAMES, edge=True, rtol=1e-5, atol=1e-6)
def test_overlap_losses_of_empty_masks(tf):
    L = tf.keras.losses
    z = tf.constant(np.zeros((2, 3), np.float32))
    return L.dice(z, z), L.tversky(z, z), L.Dice(axis=(1,))(z, z)


CORR_NAMES = (
    "keras:metrics.PearsonCorrelation",
    "keras:metrics.pearson_correlation",
    "keras:metrics.ConcordanceCorrelation",
    "keras:metrics.concordance_correlation",
)


@same_as_tf(*CORR_NAMES, rtol=1e-5, atol=1e-6)
def test_correlation_metrics(tf):
    M = tf.keras.metrics
    y, p = tf.constant(Y + np.arange(4, dtype=np.float32)), tf.constant(P)
    pm, cm = M.PearsonCorrelation(), M.ConcordanceCorrelation()
    pm.update_state(y, p)
    cm.update_state(y, p)
    cm.update_state(p, y)
    return M.pearson_correlation(y, p), M.concordance_correlation(y, p), pm.result(), cm.result(), pm.name, cm.name


@same_as_tf(*CORR_NAMES, edge=True, rtol=1e-5, atol=1e-6)
def test_correlation_metrics_along_the_batch_axis(tf):
    M = tf.keras.metrics
    y, p = tf.constant(Y), tf.constant(P)
    return M.pearson_correlation(y, p, axis=0), M.concordance_correlation(y[:, :1], p[:, :1], axis=0)


ALIAS_NAMES = ("keras:metrics.binary_focal_crossentropy", "keras:metrics.categorical_focal_crossentropy")


@same_as_tf(*ALIAS_NAMES, "tf_keras:metrics.kullback_leibler_divergence", dialects=("tf_keras",), rtol=1e-5, atol=1e-6)
def test_metric_spellings_of_losses(tf):
    M = tf.keras.metrics
    y, p = tf.constant(Y), tf.constant(P)
    norm = P / P.sum(axis=1, keepdims=True)
    soft, flipped = tf.constant(norm), tf.constant(norm[::-1].copy())
    return (
        M.binary_focal_crossentropy(y, p),
        M.categorical_focal_crossentropy(y, soft),
        M.kullback_leibler_divergence(soft, flipped),
    )


@same_as_tf(
    *ALIAS_NAMES,
    "tf_keras:metrics.kullback_leibler_divergence",
    edge=True,
    dialects=("tf_keras",),
    rtol=1e-5,
    atol=1e-6,
)
def test_metric_spellings_of_losses_from_logits(tf):
    M = tf.keras.metrics
    y, logits = tf.constant(Y), tf.constant(P * 6.0 - 3.0)
    return (
        M.binary_focal_crossentropy(y, logits, from_logits=True, gamma=1.0),
        M.categorical_focal_crossentropy(y, logits, from_logits=True),
        M.kullback_leibler_divergence(
            tf.constant(np.zeros((2, 3), np.float32)), tf.constant(np.ones((2, 3), np.float32))
        ),
    )


@same_as_tf(*ALIAS_NAMES, dialects=("keras",), rtol=1e-5, atol=1e-6)
def test_metric_spellings_of_focal_losses_keras3(tf):
    M = tf.keras.metrics
    y, p = tf.constant(Y), tf.constant(P)
    return M.binary_focal_crossentropy(y, p), M.categorical_focal_crossentropy(
        y, tf.constant(P / P.sum(axis=1, keepdims=True))
    )


@same_as_tf(*ALIAS_NAMES, edge=True, dialects=("keras",), rtol=1e-5, atol=1e-6)
def test_metric_spellings_of_focal_losses_keras3_from_logits(tf):
    M = tf.keras.metrics
    y, logits = tf.constant(Y), tf.constant(P * 6.0 - 3.0)
    return M.binary_focal_crossentropy(y, logits, from_logits=True), M.categorical_focal_crossentropy(
        y, logits, from_logits=True
    )


GCE_NAMES = ("keras:losses.CategoricalGeneralizedCrossEntropy", "keras:losses.categorical_generalized_cross_entropy")


@pytest.mark.parametrize("q", [0.5, 0.1])
@same_as_tf(*GCE_NAMES, rtol=1e-5, atol=1e-6)
def test_generalized_cross_entropy(tf, q):
    L = tf.keras.losses
    ids = tf.constant(np.array([0, 3, 1]))
    probs = tf.constant(P / P.sum(axis=1, keepdims=True))
    return (
        L.categorical_generalized_cross_entropy(ids, probs, q=q),
        L.CategoricalGeneralizedCrossEntropy(q=q)(ids, probs),
        L.CategoricalGeneralizedCrossEntropy(q=q, reduction="sum")(ids, probs),
    )


@pytest.mark.parametrize("q", [0.0, 1.0])
@same_as_tf(*GCE_NAMES, edge=True)
def test_generalized_cross_entropy_refuses_q_outside_the_interval(tf, q):
    tf.keras.losses.CategoricalGeneralizedCrossEntropy(q=q)
