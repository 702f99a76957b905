"""Replica functions of the keras.applications tests (module level, so picklable)."""

from __future__ import annotations

import numpy as np
import torch

import unison as tf


def resnet50_step(devices: list[str] | None) -> dict:
    """One fit step of ResNet50(weights=None) at 32x32 on a global batch of 4; a digest of the weights."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.applications.ResNet50(weights=None, input_shape=(32, 32, 3), classes=10)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="sparse_categorical_crossentropy")
    before = [w.copy() for w in model.get_weights()]
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, size=(4, 32, 32, 3)).astype("float32")
    # scaled to [-1, 1] ("tf" mode): with caffe-mode inputs (+-128) a random ResNet's activations are so
    # large that batch-norm variances cancel badly in float32 and the gradients differ with the split
    x = tf.keras.applications.resnet_v2.preprocess_input(x)
    y = rng.integers(0, 10, size=(4,))
    history = model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    after = model.get_weights()
    return {
        "loss": history.history["loss"][0],
        "changed": sum(int(not np.array_equal(a, b)) for a, b in zip(after, before)),
        "digest": [float(np.abs(w).sum()) for w in after],
        "top_update": after[-2] - before[-2],  # the predictions kernel's step
        "replicas": strategy.num_replicas_in_sync,
    }


__all__ = ["resnet50_step"]
