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


X = (np.sin(np.arange(24) * 0.5)).reshape(8, 3).astype(np.float32)
Y = (np.arange(8) % 2).astype(np.int32)


def _pair(keras):
    def make(seed):
        model = keras.Sequential(
            [keras.Input((3,)), keras.layers.Dense(4, activation="tanh", name="h"), keras.layers.Dense(2, name="o")]
        )
        model.set_weights(
            [(np.cos(np.arange(w.size) + seed) * 0.5).reshape(w.shape).astype(np.float32) for w in model.get_weights()]
        )
        return model

    return make(1), make(2)


@same_as_tf("keras:distillation.Distiller", dialects=("keras",), rtol=1e-4, atol=1e-5)
def test_distiller_trains_the_student_only(tf):
    keras = tf.keras
    d = keras.distillation
    teacher, student = _pair(keras)
    losses = [
        d.LogitsDistillation(temperature=2.0),
        d.FeatureDistillation(teacher_layer_name="h", student_layer_name="h"),
    ]
    distiller = d.Distiller(teacher, student, losses, distillation_loss_weights=[1.0, 0.5], student_loss_weight=0.3)
    distiller.compile(
        optimizer=keras.optimizers.SGD(0.1), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    first = distiller.compute_loss(X, Y, distiller(X))
    history = distiller.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    return (
        first,
        {k: history.history[k] for k in ("student_loss", "distillation_loss", "total_loss", "loss")},
        student.get_weights(),
        teacher.get_weights(),
        distiller.predict(X[:2], verbose=0),
        teacher.trainable,
    )


@same_as_tf("keras:distillation.Distiller", edge=True, dialects=("keras",))
def test_distiller_refuses_bad_arguments(tf):
    keras = tf.keras
    d = keras.distillation
    teacher, student = _pair(keras)
    logits = d.LogitsDistillation()
    wide = keras.Sequential([keras.Input((3,)), keras.layers.Dense(5)])
    distiller = d.Distiller(teacher, student, logits)
    return (
        _raised(lambda: d.Distiller(teacher, student, logits, student_loss_weight=1.5)),
        _raised(lambda: d.Distiller(teacher, student, None)),
        _raised(lambda: d.Distiller(teacher, student, [logits, logits], distillation_loss_weights=[1.0])),
        _raised(lambda: d.Distiller(teacher, wide, logits)),
        _raised(lambda: d.Distiller(teacher, student, d.FeatureDistillation(teacher_layer_name="nope"))),
        _raised(lambda: distiller.compile(optimizer="sgd", loss=None)),
    )
