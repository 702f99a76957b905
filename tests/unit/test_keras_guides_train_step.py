"""What keras.io's "customizing what happens in fit() with TensorFlow" guide uses: a functional
subclass made as ``CustomModel(inputs, outputs)`` and a ``train_step`` model without ``call``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import unison as tf
from unison import keras
from unison.keras import layers


class CustomModel(keras.Model):
    def train_step(self, data: Any) -> dict[str, Any]:
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        for metric in self.metrics:
            metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_a_functional_subclass_takes_inputs_and_outputs_by_position() -> None:
    inputs = keras.Input(shape=(3,))
    outputs = layers.Dense(1)(inputs)
    model = CustomModel(inputs, outputs)
    named = CustomModel(inputs, outputs, name="named")
    assert model.outputs[0] is outputs and named.name == "named"
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x = np.ones((8, 3), "float32")
    history = model.fit(x, np.full((8, 1), 2.0, "float32"), epochs=3, batch_size=4, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert set(history.history) == {"loss", "mae"}


class TwoPart(keras.Model):
    """A GAN-shaped model: train_step drives two sub-models; there is no call()."""

    def __init__(self) -> None:
        super().__init__()
        self.first = keras.Sequential([keras.Input(shape=(2,)), layers.Dense(1)])
        self.tracker = keras.metrics.Mean(name="d_loss")

    @property
    def metrics(self) -> list[Any]:
        return [self.tracker]

    def compile(self, first_optimizer: Any) -> None:  # type: ignore[override]
        super().compile()
        self.first_optimizer = first_optimizer

    def train_step(self, data: Any) -> dict[str, Any]:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.first(data) - 1.0))
        grads = tape.gradient(loss, self.first.trainable_weights)
        self.first_optimizer.apply(grads, self.first.trainable_weights)
        self.tracker.update_state(loss)
        return {"d_loss": self.tracker.result()}


def test_fit_runs_a_train_step_model_that_has_no_call() -> None:
    model = TwoPart()
    model.compile(first_optimizer=keras.optimizers.SGD(0.1))
    dataset = tf.data.Dataset.from_tensor_slices(np.ones((16, 2), "float32")).batch(4)
    history = model.fit(dataset, epochs=3, verbose=0)
    losses = history.history["d_loss"]
    assert len(losses) == 3 and losses[-1] < losses[0]
    torch.testing.assert_close(model.first(torch.ones(1, 2)), torch.ones(1, 1), atol=0.2, rtol=0)
