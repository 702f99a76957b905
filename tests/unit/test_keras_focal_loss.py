"""CategoricalFocalCrossentropy: Keras 3's documented values and formula."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras

Y_TRUE = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
Y_PRED = [[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]]


def test_keras_documented_values() -> None:
    cce = keras.losses.CategoricalFocalCrossentropy()
    assert float(cce(Y_TRUE, Y_PRED)) == pytest.approx(0.23315276, rel=1e-5)
    assert float(cce(Y_TRUE, Y_PRED, sample_weight=[0.3, 0.7])) == pytest.approx(0.1632, rel=1e-3)
    summed = keras.losses.CategoricalFocalCrossentropy(reduction="sum")
    assert float(summed(Y_TRUE, Y_PRED)) == pytest.approx(0.46631, rel=1e-4)
    each = keras.losses.CategoricalFocalCrossentropy(reduction=None)(Y_TRUE, Y_PRED)
    np.testing.assert_allclose(each.numpy(), [3.2058331e-05, 4.6627346e-01], rtol=1e-4)


def test_logits_smoothing_alpha_gamma_against_the_formula() -> None:
    logits = torch.tensor([[2.0, -1.0, 0.5], [0.1, 0.2, 3.0]])
    y = torch.tensor(Y_TRUE)
    got = keras.losses.categorical_focal_crossentropy(
        y, logits, alpha=0.5, gamma=1.5, from_logits=True, label_smoothing=0.1
    )
    p = torch.softmax(logits, -1).clamp(1e-7, 1 - 1e-7)
    smooth = y * 0.9 + 0.1 / 3
    want = (0.5 * (1 - p) ** 1.5 * -smooth * torch.log(p)).sum(-1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    plain = keras.losses.categorical_focal_crossentropy(y, torch.tensor(Y_PRED).clamp(1e-7), alpha=1.0, gamma=0.0)
    np.testing.assert_allclose(
        plain.numpy(), keras.losses.categorical_crossentropy(y, torch.tensor(Y_PRED)).numpy(), rtol=1e-5
    )


def test_compile_by_name_and_bad_arguments() -> None:
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="categorical_focal_crossentropy")
    x = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")
    history = model.fit(x, np.eye(3, dtype="float32")[np.arange(8) % 3], verbose=0)
    assert np.isfinite(history.history["loss"][0])
    with pytest.raises(ValueError, match="label_smoothing"):
        keras.losses.CategoricalFocalCrossentropy(label_smoothing=2.0)
    with pytest.raises(ValueError, match="same shape"):
        keras.losses.categorical_focal_crossentropy(Y_TRUE, [[0.5, 0.5]])
