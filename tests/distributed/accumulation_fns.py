"""fit with Keras 3's gradient_accumulation_steps (run in replica processes and in the unit tests)."""

from __future__ import annotations

import torch
from replica_fns import make_data

import unison as tf


def accumulated_fit(devices: list[str] | None, k: int | None, batch_size: int, n: int = 192) -> dict:
    """Adam on an MLP, batches of ``batch_size`` in order, updating every ``k``-th batch."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(16, activation="tanh", input_shape=(12,)),
                tf.keras.layers.Dense(4, activation="softmax"),
            ]
        )
        model.compile(
            optimizer=tf.keras.optimizers.Adam(0.01, gradient_accumulation_steps=k),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
        )
    x, y = make_data(n)
    history = model.fit(x, y, batch_size=batch_size, epochs=2, shuffle=False, verbose=0)
    sync = tf.DistributedOptimizer.of(model.optimizer.torch_optimizer)
    return {
        "weights": [w.copy() for w in model.get_weights()],
        "history": history.history,
        "iterations": int(model.optimizer.iterations),
        "synchronisations": None if sync is None else sync.steps,
    }
