"""A keras.utils.PyDataset trained under MirroredStrategy (run in replica processes and in one process)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import unison as tf

keras = tf.keras


class Batches(keras.utils.PyDataset):
    """Six global batches of 5 rows (uneven across 2 replicas); records the indices it reads."""

    def __init__(self, n: int = 6, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.n = n
        self.reads: list[int] = []
        self.ends = 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        self.reads.append(index)
        rng = np.random.default_rng(10 + index)
        x = rng.normal(size=(5, 4)).astype("float32")
        return x, (x[:, :1] - 2 * x[:, 1:2] > 0).astype("int64").ravel()

    def on_epoch_end(self) -> None:
        self.ends += 1


def pydataset_fit(devices: list[str] | None, shuffle: bool) -> dict[str, Any]:
    """Train a small classifier on :class:`Batches` (2 epochs, Adam); weights, reads and results."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = keras.Sequential(
            [keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(2, activation="softmax")]
        )
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    data = Batches(workers=2)
    history = model.fit(data, epochs=2, shuffle=shuffle, validation_data=Batches(n=2), verbose=0)
    return {
        "weights": [w.copy() for w in model.get_weights()],
        "reads": data.reads,
        "ends": data.ends,
        "history": history.history,
        "evaluate": model.evaluate(Batches(n=3), verbose=0, return_dict=True),
        "predict": model.predict(Batches(n=3), verbose=0),
        "replicas": strategy.num_replicas_in_sync,
    }
