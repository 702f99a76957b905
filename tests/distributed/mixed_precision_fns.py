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
        model = tf.keras.Sequential(
            [
                layers.Embedding(16, 16, input_shape=(8,)),
                layers.MultiHeadAttention(num_heads=2, key_dim=8),
                layers.LayerNormalization(),
                layers.GlobalAveragePooling1D(),
                layers.Dense(2, activation="softmax", dtype="float32"),
            ]
        )
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    dtypes: list[torch.dtype] = []
    model.layers[1].register_forward_hook(lambda mod, inp, out: dtypes.append(out.dtype))
    x, y = _sequence_data(n=16 * steps)
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    return {
        "weights": model.get_weights(),
        "loss": history.history["loss"],
        "attention_dtypes": sorted({str(d) for d in dtypes}),
        "variable_dtypes": sorted({str(p.dtype) for p in model.parameters()}),
        "replicas": strategy.num_replicas_in_sync,
    }


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
        opt = mixed_precision.LossScaleOptimizer(
            tf.keras.optimizers.SGD(0.01), initial_scale=1024.0, dynamic_growth_steps=10
        )
        model.compile(optimizer=opt, loss="mse")
    before = [w.copy() for w in model.get_weights()]
    model.fit(x[:4], y[:4], batch_size=4, epochs=1, shuffle=False, verbose=0)
    after_overflow = [w.copy() for w in model.get_weights()]
    scale_after_overflow = opt.dynamic_scale
    model.fit(x[4:], y[4:], batch_size=4, epochs=1, shuffle=False, verbose=0)
    return {
        "unchanged": all(np.array_equal(a, b) for a, b in zip(before, after_overflow)),
        "scale_after_overflow": scale_after_overflow,
        "skipped": opt.skipped_steps,
        "scale": opt.dynamic_scale,
        "weights": model.get_weights(),
    }


def _gpt_module():
    """examples/gpt.py as a module (its main() runs only as a script)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt.py"
    spec = importlib.util.spec_from_file_location("unison_example_gpt", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpt_fit(devices: list[str] | None, policy: str, steps: int = 20) -> dict:
    """The example's GPT, ``steps`` SGD steps of fit; return the weights and the skipped steps.

    SGD with momentum, not Adam: the key projection's bias gets a gradient that is zero in exact
    arithmetic (softmax ignores a shift shared by all keys) and rounding noise in practice, and
    Adam turns noise of any size into steps of size ``lr``, different on 1 and 2 replicas.
    """
    gpt = _gpt_module()
    mixed_precision.set_global_policy(policy)
    try:
        strategy = tf.distribute.MirroredStrategy(devices)
        rng = np.random.default_rng(0)
        corpus = rng.integers(0, 64, size=steps * 8 * 16 + 1).astype(np.uint8)
        corpus[1::2] = corpus[0:-1:2] + 1  # something learnable: every odd byte follows from the one before
        x, y = gpt.make_sequences(corpus, 16)
        torch.manual_seed(0)
        with strategy.scope():
            model = gpt.GPT(256, 16, 32, 4, 2)
            inner = tf.keras.optimizers.SGD(0.05, momentum=0.9)
            # 2**26 overflows float16 at first: the first steps are skipped while the scale halves
            opt = (
                mixed_precision.LossScaleOptimizer(inner, initial_scale=2.0**26, dynamic_growth_steps=5)
                if policy == "mixed_float16"
                else inner
            )
            model.compile(optimizer=opt, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
        return {
            "weights": model.get_weights(),
            "loss": history.history["loss"][0],
            "skipped": getattr(opt, "skipped_steps", 0),
            "replicas": strategy.num_replicas_in_sync,
        }
    finally:
        mixed_precision.set_global_policy("float32")


def ignore_class_fit(devices: list[str] | None) -> dict:
    """Token labels with ignored positions, unevenly spread over the rows (and so the replicas)."""
    strategy = tf.distribute.MirroredStrategy(devices)
    rng = np.random.default_rng(0)
    x = rng.integers(1, 10, size=(48, 6)).astype("int64")
    y = (x + 1) % 10
    y[:24, 2:] = -1  # the first rows count 2 positions, the others 6
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                layers.Embedding(10, 8, input_shape=(6,)),
                layers.MultiHeadAttention(num_heads=2, key_dim=4),
                layers.Dense(10),
            ]
        )
        model.compile(
            optimizer=tf.keras.optimizers.SGD(0.1),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1),
        )
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    return {"weights": model.get_weights(), "loss": history.history["loss"]}
