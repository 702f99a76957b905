"""Replica functions for the tests of constraints, use_ema and stateful RNNs under MirroredStrategy."""

from __future__ import annotations

import numpy as np
import torch

import unison as tf


def constrained_ema_fit(devices: list[str] | None) -> dict:
    """Constraints + use_ema (+ a stateful LSTM) trained by fit; the weights at the end."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    keras = tf.keras
    with strategy.scope():
        model = keras.Sequential(
            [
                keras.Input((5, 3)),
                keras.layers.LSTM(4, stateful=True, recurrent_constraint="non_neg"),
                keras.layers.Dense(3, kernel_constraint="unit_norm"),
                keras.layers.Dense(1, kernel_constraint=keras.constraints.MaxNorm(0.5)),
            ]
        )
        optimizer = keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5, ema_overwrite_frequency=3)
        model.compile(optimizer=optimizer, loss="mse")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 5, 3)).astype("float32"), rng.normal(size=(16, 1)).astype("float32")
    model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    return {"weights": [w.copy() for w in model.get_weights()], "replicas": strategy.num_replicas_in_sync}
