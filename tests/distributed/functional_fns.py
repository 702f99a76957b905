"""Replica functions of the functional-model tests (module level, so picklable)."""

from __future__ import annotations

import os

import torch
from replica_fns import make_data

import unison as tf


def functional_fit(devices: list[str] | None, n: int, batch_size: int, out_dir: str | None = None) -> dict:
    """Train a functional MLP (BatchNorm, a torch op on symbolic tensors) through fit; weights + history."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        inputs = tf.keras.Input(shape=(12,), name="x")
        hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
        hidden = tf.keras.layers.BatchNormalization()(hidden) * 0.5
        outputs = tf.keras.layers.Dense(4, activation="softmax")(hidden)
        model = tf.keras.Model(inputs, outputs)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = make_data(n)
    xv, yv = make_data(101, seed=1)
    callbacks = [] if out_dir is None else [tf.keras.callbacks.TensorBoard(os.path.join(out_dir, "logs"))]
    history = model.fit(x, y, batch_size=batch_size, epochs=1, validation_data=(xv, yv), verbose=0, callbacks=callbacks)
    if out_dir is not None:
        model.save(os.path.join(out_dir, "model.keras"))  # the chief writes, the others return at once
    return {
        "weights": [w.copy() for w in model.get_weights()],
        "history": history.history,
        "predict": model.predict(xv, verbose=0),
        "replicas": strategy.num_replicas_in_sync,
        "rank": int(os.environ.get("RANK", "0")),
    }


__all__ = ["functional_fit"]
