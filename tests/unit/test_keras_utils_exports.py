"""Keras 3's top-level classes (keras.Layer, keras.Loss, ...) are unison's own."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras

pytestmark = pytest.mark.timeout(60)


def test_top_level_names_are_the_module_classes() -> None:
    assert keras.Layer is keras.layers.Layer and keras.Loss is keras.losses.Loss
    assert keras.Metric is keras.metrics.Metric and keras.Optimizer is keras.optimizers.Optimizer
    assert keras.Variable is tf.Variable and isinstance(keras.Input((3,)), keras.KerasTensor)


def test_keras3_style_subclasses_train() -> None:
    class Double(keras.Layer):
        def call(self, x: Any) -> Any:
            return 2 * x

    class HalfMSE(keras.Loss):
        def call(self, y_true: Any, y_pred: Any) -> Any:
            return 0.5 * torch.mean((y_true - y_pred) ** 2, dim=-1)

    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,)), Double()])
    model.compile(optimizer="sgd", loss=HalfMSE())
    x = np.ones((4, 2), "float32")
    y = np.zeros((4, 1), "float32")
    pred = model.predict(x, verbose=0)
    assert model.evaluate(x, y, verbose=0) == pytest.approx(0.5 * float(np.mean(pred**2)), rel=1e-6)
    v = keras.Variable(np.array([1.0, 2.0], "float32"))
    v.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [2.0, 3.0]
