"""Keras's ``training`` rule for calls given none (layers/base.py), and the torch-mode escape hatch.

The Keras side is compared with Keras itself in tests/conformance/test_vs_keras_training_default.py;
these tests cover what only unison has: a user's ``model.train()``/``model.eval()`` (a raw PyTorch
loop) keeps its mode, while unison's own switches (fit, evaluate, predict, build) do not count as one.
"""

from __future__ import annotations

import numpy as np
import torch

import unison as tf
from unison.keras.backend import common as backend_common


def _dropped(out: torch.Tensor) -> float:
    return float((np.asarray(out) == 0).mean())


def _model() -> tf.keras.Model:
    model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dropout(0.9), tf.keras.layers.Dense(4)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def _dropout_fraction(model: tf.keras.Model, x: np.ndarray) -> float:
    return _dropped(model.layers[0](torch.as_tensor(x)))


def test_a_fresh_layer_called_without_training_applies_no_dropout() -> None:
    x = np.ones((2, 64), np.float32)
    assert _dropped(tf.keras.layers.Dropout(0.9)(x)) == 0.0
    assert _dropped(tf.keras.layers.Dropout(0.9)(x, training=True)) > 0.5


def test_a_users_train_call_makes_later_calls_follow_torch_mode() -> None:
    x = np.ones((2, 64), np.float32)
    model = _model()
    model.train()  # a raw PyTorch loop's habit
    assert _dropout_fraction(model, x) > 0.5
    model.eval()
    assert _dropout_fraction(model, x) == 0.0
    assert _dropped(model.layers[0](torch.as_tensor(x), training=True)) > 0.5  # an explicit flag still wins


def test_fit_evaluate_predict_and_build_leave_keras_rule_in_place() -> None:
    x, y = np.ones((8, 64), np.float32), np.zeros((8, 4), np.float32)
    model = _model()
    model.fit(x, y, epochs=1, verbose=0)
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    model.build((None, 64))
    assert "_torch_mode_by_user" not in model.__dict__
    assert _dropout_fraction(model, x) == 0.0
    # the model's output equals inference mode's: same as an explicit training=False
    np.testing.assert_allclose(np.asarray(model(x)), np.asarray(model(x, training=False)))


def test_set_learning_phase_applies_to_layers_until_cleared() -> None:
    x = np.ones((2, 64), np.float32)
    drop = tf.keras.layers.Dropout(0.9)
    try:
        tf.keras.backend.set_learning_phase(1)
        assert _dropped(drop(x)) > 0.5
        tf.keras.backend.set_learning_phase(0)
        assert _dropped(drop(x)) == 0.0
    finally:
        backend_common._SET_PHASE.clear()
    assert backend_common.global_learning_phase() is None


def test_batch_norm_called_without_training_uses_and_keeps_its_moving_statistics() -> None:
    bn = tf.keras.layers.BatchNormalization()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.asarray(bn(x))
    np.testing.assert_allclose(out, x / np.sqrt(1.0 + 1e-3), rtol=1e-6)  # mean 0, variance 1
    np.testing.assert_allclose(bn.moving_mean.numpy(), np.zeros(4))
    bn(x, training=True)
    assert float(np.abs(bn.moving_mean.numpy()).max()) > 0  # a training call updates them
