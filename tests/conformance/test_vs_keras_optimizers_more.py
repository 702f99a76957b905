"""Keras 2's ``optimizers.experimental`` names, ``schedules.CosineDecayRestarts`` and
``schedules.deserialize`` on unison against Keras 3.15 / Keras 2 (tf_keras) on TF 2.21."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

W0 = (np.sin(np.arange(6)) * 0.5).reshape(2, 3).astype(np.float32)
GRADS = [(np.cos(np.arange(6) + k) * 0.3).reshape(2, 3).astype(np.float32) for k in range(3)]

EXPERIMENTAL = (
    ("SGD", {"learning_rate": 0.1, "momentum": 0.5}),
    ("Adam", {"learning_rate": 0.01}),
    ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"learning_rate": 0.01}),
    ("Adagrad", {"learning_rate": 0.1}),
    ("Adadelta", {"learning_rate": 1.0}),
    ("Adamax", {"learning_rate": 0.02}),
    ("Nadam", {"learning_rate": 0.01}),
    ("Ftrl", {"learning_rate": 0.1}),
)
EXPERIMENTAL_NAMES = (
    "tf_keras:optimizers.experimental.SGD",
    "tf_keras:optimizers.experimental.Adam",
    "tf_keras:optimizers.experimental.AdamW",
    "tf_keras:optimizers.experimental.RMSprop",
    "tf_keras:optimizers.experimental.Adagrad",
    "tf_keras:optimizers.experimental.Adadelta",
    "tf_keras:optimizers.experimental.Adamax",
    "tf_keras:optimizers.experimental.Nadam",
    "tf_keras:optimizers.experimental.Ftrl",
    "tf_keras:optimizers.experimental.Optimizer",
)


def _steps(tf, name, kwargs):
    w = tf.Variable(W0)
    opt = getattr(tf.keras.optimizers.experimental, name)(**kwargs)
    out = []
    for g in GRADS:
        opt.apply_gradients([(tf.constant(g), w)])
        out.append(w.numpy())
    return out, isinstance(opt, tf.keras.optimizers.experimental.Optimizer), int(opt.iterations.numpy())


@pytest.mark.parametrize(("name", "kwargs"), EXPERIMENTAL, ids=[r[0] for r in EXPERIMENTAL])
@same_as_tf(*EXPERIMENTAL_NAMES, dialects=("tf_keras",), rtol=1e-5, atol=1e-5)
def test_experimental_optimizers(tf, name, kwargs):
    return _steps(tf, name, kwargs)


@pytest.mark.parametrize(("name", "kwargs"), EXPERIMENTAL, ids=[r[0] for r in EXPERIMENTAL])
@same_as_tf(*EXPERIMENTAL_NAMES, edge=True, dialects=("tf_keras",), rtol=1e-5, atol=1e-5)
def test_experimental_optimizers_with_clipping(tf, name, kwargs):
    return _steps(tf, name, {**kwargs, "clipnorm": 0.05})


SCHEDULE_NAMES = ("keras:optimizers.schedules.CosineDecayRestarts", "keras:optimizers.schedules.deserialize")


def _restarts(tf, kwargs):
    s = tf.keras.optimizers.schedules
    schedule = s.CosineDecayRestarts(**kwargs)
    back = s.deserialize(s.serialize(schedule))
    steps = [0, 1, 3, 5, 7, 10, 15, 22, 31, 40]
    return [float(np.asarray(schedule(k))) for k in steps], [float(np.asarray(back(k))) for k in steps]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"initial_learning_rate": 0.1, "first_decay_steps": 5},
        {"initial_learning_rate": 1.0, "first_decay_steps": 4, "t_mul": 1.0, "m_mul": 0.5, "alpha": 0.1},
    ],
)
@same_as_tf(*SCHEDULE_NAMES, dialects=("keras", "tf_keras"), rtol=1e-5, atol=1e-7)
def test_cosine_decay_restarts(tf, kwargs):
    return _restarts(tf, kwargs)


@same_as_tf(*SCHEDULE_NAMES, edge=True, dialects=("keras", "tf_keras"), rtol=1e-5, atol=1e-7)
def test_cosine_decay_restarts_with_longer_periods(tf):
    return _restarts(
        tf, {"initial_learning_rate": 0.5, "first_decay_steps": 3, "t_mul": 3.0, "m_mul": 0.9, "alpha": 0.2}
    )


KERAS2_EXPERIMENTAL_NAMES = ("tf_keras:experimental.CosineDecay", "tf_keras:experimental.CosineDecayRestarts")


@same_as_tf(*KERAS2_EXPERIMENTAL_NAMES, dialects=("tf_keras",), rtol=1e-5, atol=1e-7)
def test_keras2_experimental_schedules(tf):
    e = tf.keras.experimental
    decay, restarts = e.CosineDecay(0.1, decay_steps=8, alpha=0.1), e.CosineDecayRestarts(0.1, first_decay_steps=3)
    return [float(np.asarray(decay(k))) for k in range(0, 12, 2)], [
        float(np.asarray(restarts(k))) for k in range(0, 12, 2)
    ]


@same_as_tf(*KERAS2_EXPERIMENTAL_NAMES, edge=True, dialects=("tf_keras",), rtol=1e-5, atol=1e-7)
def test_keras2_experimental_schedules_past_the_end(tf):
    e = tf.keras.experimental
    decay = e.CosineDecay(0.1, decay_steps=2)
    restarts = e.CosineDecayRestarts(0.1, first_decay_steps=2, t_mul=1.0, m_mul=0.5, alpha=0.5)
    return [float(np.asarray(decay(k))) for k in (2, 5, 100)], [float(np.asarray(restarts(k))) for k in (2, 5, 9)]
