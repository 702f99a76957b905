"""Replica functions of test_export_replicas.py (imported by the replicas, so at module level)."""

from __future__ import annotations

import os

import numpy as np
import torch
from replica_fns import make_data

import unison as tf


def fit_then_export(devices: list[str], out_dir: str) -> dict:
    """Two replicas fit a functional model, then each calls model.export: the chief writes the file."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        inputs = tf.keras.Input(shape=(12,), name="x")
        hidden = tf.keras.layers.BatchNormalization()(tf.keras.layers.Dense(16, activation="relu")(inputs))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(4)(hidden))
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = make_data(64)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    path = os.path.join(out_dir, "model.onnx")
    model.export(path, format="onnx", verbose=False)
    # every replica returns after the chief's file is complete (model.export waits for it)
    xv, _ = make_data(10, seed=1)
    return {
        "chief": bool(strategy.extended.should_checkpoint),
        "file_complete": os.path.isfile(path) and os.path.getsize(path) > 0,
        "predict": np.asarray(model.predict(xv, verbose=0)),
    }


__all__ = ["fit_then_export"]
