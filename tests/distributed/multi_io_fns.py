"""A two-input, two-output functional model (run in replica processes and in the unit tests)."""

from __future__ import annotations

import numpy as np
import torch

import unison as tf

keras = tf.keras


def multi_io_model(as_dict: bool) -> keras.Model:
    a = keras.Input(shape=(4,), name="a")
    b = keras.Input(shape=(2,), name="b")
    h = keras.layers.Dense(8, activation="relu", name="hidden")(keras.layers.Concatenate(name="join")([a, b]))
    cls = keras.layers.Dense(3, activation="softmax", name="cls")(h)
    reg = keras.layers.Dense(1, name="reg")(h)
    if as_dict:
        return keras.Model(inputs={"a": a, "b": b}, outputs={"cls": cls, "reg": reg})
    return keras.Model(inputs=[a, b], outputs=[cls, reg])


def multi_io_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    xa = rng.normal(size=(n, 4)).astype("float32")
    xb = rng.normal(size=(n, 2)).astype("float32")
    yc = ((xa[:, 0] > 0).astype("int64") + (xb[:, 0] > 1)) % 3
    yr = (xa[:, 1:2] - 2 * xb[:, 1:2]).astype("float32")
    return xa, xb, yc, yr


def multi_io_fit(devices: list[str] | None, n: int, batch_size: int, source: str = "arrays") -> dict:
    """Train the two-output model (list form) on MirroredStrategy(devices); weights and logs."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = multi_io_model(as_dict=False)
        model.compile(
            optimizer="adam",
            loss=["sparse_categorical_crossentropy", "mse"],
            loss_weights=[1.0, 0.5],
            metrics=[["accuracy"], ["mae"]],
        )
    xa, xb, yc, yr = multi_io_data(n)
    if source == "arrays":
        history = model.fit([xa, xb], [yc, yr], batch_size=batch_size, epochs=1, shuffle=False, verbose=0)
    else:
        ds = tf.data.Dataset.from_tensor_slices(((xa, xb), (yc, yr))).batch(batch_size)
        history = model.fit(ds, epochs=1, verbose=0)
    return {
        "weights": [w.copy() for w in model.get_weights()],
        "history": history.history,
        "evaluate": model.evaluate([xa, xb], [yc, yr], batch_size=7, verbose=0, return_dict=True),
        "predict": model.predict([xa, xb], batch_size=9, verbose=0),
        "replicas": strategy.num_replicas_in_sync,
    }
