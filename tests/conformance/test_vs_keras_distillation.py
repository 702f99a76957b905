"""Keras 3's ``keras.distillation`` losses on unison against Keras 3.15 on TF 2.21: ``compute_loss`` of
teacher and student outputs, their configs' round trip, and the argument checks."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

TEACHER = (np.sin(np.arange(12) * 0.9) * 2.0).reshape(3, 4).astype(np.float32)
STUDENT = (np.cos(np.arange(12) * 0.4)).reshape(3, 4).astype(np.float32)
NAMES = (
    "keras:distillation.DistillationLoss",
    "keras:distillation.LogitsDistillation",
    "keras:distillation.FeatureDistillation",
)


@same_as_tf(*NAMES, dialects=("keras",), rtol=1e-5, atol=1e-6)
def test_distillation_losses(tf):
    d = tf.keras.distillation
    logits = d.LogitsDistillation(temperature=2.0)
    kl = d.LogitsDistillation(temperature=4.0, loss=tf.keras.losses.KLDivergence())
    feature = d.FeatureDistillation(loss="mae")
    nested = d.FeatureDistillation(loss={"a": "mse", "b": None})
    clone = type(logits).from_config(logits.get_config())
    return (
        logits.compute_loss(TEACHER, STUDENT),
        kl.compute_loss(TEACHER, STUDENT),
        feature.compute_loss(TEACHER, STUDENT),
        d.FeatureDistillation().compute_loss(TEACHER, STUDENT),
        nested.compute_loss({"a": TEACHER, "b": TEACHER}, {"a": STUDENT, "b": STUDENT}),
        clone.compute_loss(TEACHER, STUDENT),
        clone.temperature,
        isinstance(logits, d.DistillationLoss) and isinstance(feature, d.DistillationLoss),
    )


def _raised(fn):
    try:
        fn()
    except Exception as e:  # the class is what both sides must agree on
        return type(e).__name__
    return None


@same_as_tf(*NAMES, edge=True, dialects=("keras",), rtol=1e-5, atol=1e-6)
def test_distillation_losses_refuse_bad_arguments(tf):
    d = tf.keras.distillation
    return (
        _raised(lambda: d.LogitsDistillation(temperature=0.0)),
        _raised(lambda: d.LogitsDistillation(temperature="hot")),
        _raised(lambda: d.FeatureDistillation(loss=None)),
        _raised(lambda: d.DistillationLoss().compute_loss(TEACHER, STUDENT)),
        _raised(lambda: d.DistillationLoss().validate_outputs([TEACHER], (STUDENT, STUDENT))),
        # NaN logits: the loss is NaN, not an error
        bool(np.isnan(np.asarray(d.LogitsDistillation().compute_loss(TEACHER * np.nan, STUDENT)))),
    )
