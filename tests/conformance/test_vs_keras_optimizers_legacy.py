"""Keras 2's ``keras.optimizers.legacy`` against tf_keras: the same steps from the same variables.

tf_keras programs written before the optimizer rewrite (TF <= 2.10) use the legacy classes; unison
serves them with its optimizers, whose update rules are the same. A few steps on fixed gradients
(``apply_gradients``) are compared after each step, with default and with non-default options.
Keras 3 has no legacy optimizers (its ``keras.optimizers.legacy`` raises ImportError), so only the
tf_keras dialect runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

K2 = ("tf_keras",)
W0 = (np.sin(np.arange(6)) * 0.5).reshape(2, 3).astype(np.float32)
GRADS = [(np.cos(np.arange(6) + k) * 0.3).reshape(2, 3).astype(np.float32) for k in range(3)]

LEGACY = (
    ("SGD", {"learning_rate": 0.1}),
    ("Adam", {"learning_rate": 0.01}),
    ("RMSprop", {"learning_rate": 0.01}),
    ("Adagrad", {"learning_rate": 0.1}),
    ("Adadelta", {"learning_rate": 1.0}),
    ("Adamax", {"learning_rate": 0.02}),
    ("Nadam", {"learning_rate": 0.01}),
    ("Ftrl", {"learning_rate": 0.1}),
)
LEGACY_EDGE = (
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"learning_rate": 0.01, "amsgrad": True, "beta_1": 0.5}),
    ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"learning_rate": 0.1, "initial_accumulator_value": 0.5}),
    ("Adadelta", {"learning_rate": 0.5, "rho": 0.5}),
    ("Adamax", {"learning_rate": 0.02, "beta_2": 0.5}),
    ("Nadam", {"learning_rate": 0.01, "beta_1": 0.5}),
    ("Ftrl", {"learning_rate": 0.1, "l2_regularization_strength": 0.1}),
)
LEGACY_NAMES = (
    "tf_keras:optimizers.legacy.SGD",
    "tf_keras:optimizers.legacy.Adam",
    "tf_keras:optimizers.legacy.RMSprop",
    "tf_keras:optimizers.legacy.Adagrad",
    "tf_keras:optimizers.legacy.Adadelta",
    "tf_keras:optimizers.legacy.Adamax",
    "tf_keras:optimizers.legacy.Nadam",
    "tf_keras:optimizers.legacy.Ftrl",
    "tf_keras:optimizers.legacy.Optimizer",
)


def _steps(tf, name: str, kwargs: dict) -> dict:
    w = tf.Variable(W0)
    optimizer = getattr(tf.keras.optimizers.legacy, name)(**kwargs)
    out = []
    for g in GRADS:
        optimizer.apply_gradients([(tf.constant(g), w)])
        out.append(w.numpy())
    return {
        "steps": out,
        "iterations": int(optimizer.iterations.numpy()),
        "learning_rate": float(np.asarray(optimizer.learning_rate)),
        "is_an_optimizer": isinstance(optimizer, tf.keras.optimizers.legacy.Optimizer),
    }


@pytest.mark.parametrize(("name", "kwargs"), LEGACY)
@same_as_tf(*LEGACY_NAMES, dialects=K2, rtol=1e-5, atol=1e-5)
def test_legacy_optimizer_steps(tf, name, kwargs):
    return _steps(tf, name, kwargs)


@pytest.mark.parametrize(("name", "kwargs"), LEGACY_EDGE)
@same_as_tf(*LEGACY_NAMES, edge=True, dialects=K2, rtol=1e-5, atol=1e-5)
def test_legacy_optimizer_steps_with_options(tf, name, kwargs):
    return _steps(tf, name, kwargs)


def test_the_legacy_tables_name_their_classes():
    assert [r[0] for r in LEGACY] == [n.rsplit(".", 1)[1] for n in LEGACY_NAMES[:-1]]
    assert [r[0] for r in LEGACY_EDGE] == [r[0] for r in LEGACY]
