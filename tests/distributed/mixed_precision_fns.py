"""Functions the mixed-precision tests run inside replica processes (module level, so picklable)."""

from __future__ import annotations

import numpy as np
import torch

import unison as tf
from unison.keras import layers, mixed_precision


def _sequence_data(n: int = 64, t: int = 8, vocab: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, vocab, size=(n, t)).astype("int64")
    return x, (x[:, 0] % 2).astype("int64")


def mixed_bfloat16_fit(devices: list[str] | None, steps: int) -> dict:
    """A small attention classifier under mixed_bfloat16; return weights and how it computed."""
    mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        return _mixed_bfloat16_fit(devices, steps)
    finally:
        mixed_precision.set_global_policy("float32")


def _mixed_bfloat16_fit(devices: list[str] | None, steps: int) -> dict:
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([
            layers.Embedding(16, 16, input_shape=(8,)),
            layers.MultiHeadAttention(num_heads=2, key_dim=8),
            layers.LayerNormalization(),
            layers.GlobalAveragePooling1D(),
            layers.Dense(2, activation="softmax", dtype="float32"),
        ])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    dtypes: list[torch.dtype] = []
    model.layers[1].register_forward_hook(lambda mod, inp, out: dtypes.append(out.dtype))
    x, y = _sequence_data(n=16 * steps)
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    return {"weights": model.get_weights(), "loss": history.history["loss"],
            "attention_dtypes": sorted({str(d) for d in dtypes}),
            "variable_dtypes": sorted({str(p.dtype) for p in model.parameters()}),
            "replicas": strategy.num_replicas_in_sync}


def loss_scale_overflow(devices: list[str] | None) -> dict:
    """The first global batch overflows on one replica's rows only: every replica must skip it."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 4)).astype("float32")
    y = np.ones((8, 1), "float32")
    x[3] = 1e30  # row 3 of the first batch of 4: replica 1's share with 2 replicas -> inf loss
    with strategy.scope():
        model = tf.keras.Sequential([layers.Dense(1, input_shape=(4,))])
        opt = mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.01), initial_scale=1024.0,
                                                 dynamic_growth_steps=10)
        model.compile(optimizer=opt, loss="mse")
    before = [w.copy() for w in model.get_weights()]
    model.fit(x[:4], y[:4], batch_size=4, epochs=1, shuffle=False, verbose=0)
    after_overflow = [w.copy() for w in model.get_weights()]
    scale_after_overflow = opt.dynamic_scale
    model.fit(x[4:], y[4:], batch_size=4, epochs=1, shuffle=False, verbose=0)
    return {"unchanged": all(np.array_equal(a, b) for a, b in zip(before, after_overflow)),
            "scale_after_overflow": scale_after_overflow, "skipped": opt.skipped_steps,
            "scale": opt.dynamic_scale, "weights": model.get_weights()}
