"""What tests/distributed/test_on_batch_replicas.py runs in each replica (module level, so picklable)."""

from __future__ import annotations

import numpy as np
import torch

import unison as tf


def on_batch_run(distributed: int) -> dict:
    """Three train_on_batch steps on global batches of 10, then test_on_batch and predict_on_batch."""
    strategy = tf.distribute.MirroredStrategy() if distributed else tf.distribute.get_strategy()
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 4)).astype("float32"), rng.integers(0, 3, 30)
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="softmax")])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.set_weights([np.full((4, 3), 0.1, "float32"), np.zeros(3, "float32")])
    train = [model.train_on_batch(x[i : i + 10], y[i : i + 10]) for i in range(0, 30, 10)]
    return {
        "replicas": strategy.num_replicas_in_sync,
        "train": train,
        "test": model.test_on_batch(x, y, return_dict=True),
        "predict": model.predict_on_batch(x[:7]),
        "weights": model.get_weights(),
        "iterations": int(model.optimizer.iterations),
    }
