"""Models whose ``train_step`` a user overrode, in Keras 3's torch style and in TF's style.

Module level so the replica processes (and parameter-server workers) can import them.
"""

from __future__ import annotations

import numpy as np
import torch
from replica_fns import make_data

import unison as tf

keras = tf.keras


class TorchStyle(keras.Sequential):
    """Keras 3's "customizing fit() with PyTorch" guide, as written there (``v.grad`` for ``v.value.grad``)."""

    def train_step(self, data):  # noqa: ANN001, ANN201  # as a user writes it
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        self.zero_grad()
        y_pred = self(x, training=True)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
        loss.backward()
        trainable_weights = list(self.trainable_weights)
        gradients = [v.grad for v in trainable_weights]
        with torch.no_grad():
            self.optimizer.apply(gradients, trainable_weights)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


class TFStyle(keras.Sequential):
    """The tf.keras guide's train_step: GradientTape, compiled_loss, apply_gradients, compiled_metrics."""

    def train_step(self, data):  # noqa: ANN001, ANN201
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


class Trackers(keras.Sequential):
    """Keras 3's "going lower-level" example: own loss and metric trackers in ``metrics``."""

    def __init__(self, layers: list) -> None:
        super().__init__(layers)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")

    def train_step(self, data):  # noqa: ANN001, ANN201
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(y - y_pred))
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self) -> list:
        return [self.loss_tracker, self.mae_metric]


STYLES = {"builtin": keras.Sequential, "torch": TorchStyle, "tf": TFStyle}


def _mlp(cls: type, batchnorm: bool = True) -> keras.Model:
    layers = [keras.layers.Dense(32, activation="relu", input_shape=(12,))]
    if batchnorm:
        layers.append(keras.layers.BatchNormalization())
    layers.append(keras.layers.Dense(4, activation="softmax"))
    return cls(layers)


def fit_style(devices: list[str] | None, style: str, n: int, batch_size: int) -> dict:
    """One epoch of fit with the given train_step on MirroredStrategy(devices); weights and logs."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = _mlp(STYLES[style])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = make_data(n)
    history = model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)
    return {
        "weights": [w.copy() for w in model.get_weights()],
        "history": history.history,
        "iterations": int(model.optimizer.iterations),
        "replicas": strategy.num_replicas_in_sync,
    }


def ps_custom_step(cluster: dict, style: str) -> dict:
    """fit under ParameterServerStrategy with a user's train_step; the loss must fall."""
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(tf.train.ClusterSpec(cluster), rpc_layer="grpc")
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    torch.manual_seed(0)
    with strategy.scope():
        model = _mlp(STYLES[style], batchnorm=False)
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = make_data(256)
    history = model.fit(x, y, batch_size=16, epochs=3, steps_per_epoch=8, verbose=0)
    return {"history": history.history, "iterations": int(model.optimizer.iterations)}


def regression_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype("float32")
    return x, (x @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")
