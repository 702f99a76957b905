"""fit with Keras 3's newer optimizers under MirroredStrategy (run in replica processes and in the parent)."""

from __future__ import annotations

import torch
from replica_fns import make_data

import unison as tf

NAMES = ("Adafactor", "Lamb", "Muon", "ScheduleFreeAdamW")


def fit_each(devices: list[str] | None) -> dict[str, list]:
    """An MLP trained one epoch by each optimizer (same seed, same data order); its final weights."""
    strategy = tf.distribute.MirroredStrategy(devices)
    x, y = make_data(64)
    out: dict[str, list] = {}
    for name in NAMES:
        torch.manual_seed(0)
        with strategy.scope():
            model = tf.keras.Sequential(
                [tf.keras.layers.Dense(8, activation="tanh", input_shape=(12,)), tf.keras.layers.Dense(4)]
            )
            model.compile(
                optimizer=getattr(tf.keras.optimizers, name)(learning_rate=0.01),
                loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            )
        model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
        out[name] = [w.copy() for w in model.get_weights()]
    return out
