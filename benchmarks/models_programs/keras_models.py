"""The suite's models and training steps as Keras code, run with ``tf`` = unison or TensorFlow.

Each ``build_<model>(tf, batch)`` returns ``(step, args)``: ``step(*args)`` runs one training step
(``GradientTape`` inside ``tf.function``, as the TF tutorials and Horovod's synthetic benchmark
write it) on fixed synthetic data. The same source runs on both systems; only the module differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _sgd_step(tf: Any, model: Any, loss_fn: Any, opt: Any) -> Callable[..., Any]:
    @tf.function
    def step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def _classes(tf: Any, batch: int, n: int) -> Any:
    return tf.constant((np.arange(batch) * 7 % n).astype("int64"))


def _floats(tf: Any, shape: tuple[int, ...]) -> Any:
    return tf.constant(np.random.default_rng(0).normal(size=shape).astype("float32"))


def build_resnet50(tf: Any, batch: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    model = tf.keras.applications.ResNet50(weights=None)
    loss = tf.keras.losses.SparseCategoricalCrossentropy()
    step = _sgd_step(tf, model, loss, tf.keras.optimizers.SGD(0.01))
    return step, (_floats(tf, (batch, 224, 224, 3)), _classes(tf, batch, 1000))


def build_cnn(tf: Any, batch: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    layers = tf.keras.layers
    model = tf.keras.Sequential(
        [
            tf.keras.Input((28, 28, 1)),
            layers.Conv2D(32, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(64, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.Flatten(),
            layers.Dense(64, activation="relu"),
            layers.Dense(10),
        ]
    )
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    step = _sgd_step(tf, model, loss, tf.keras.optimizers.Adam())
    return step, (_floats(tf, (batch, 28, 28, 1)), _classes(tf, batch, 10))


def build_fcn(tf: Any, batch: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """keras.io's "Timeseries classification from scratch" FCN (FordA: 500 steps, 2 classes)."""
    layers = tf.keras.layers
    inputs = tf.keras.Input((500, 1))
    x = inputs
    for _ in range(3):
        x = layers.Conv1D(64, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)
        x = layers.ReLU()(x)
    outputs = layers.Dense(2, activation="softmax")(layers.GlobalAveragePooling1D()(x))
    model = tf.keras.Model(inputs, outputs)
    loss = tf.keras.losses.SparseCategoricalCrossentropy()
    step = _sgd_step(tf, model, loss, tf.keras.optimizers.Adam())
    return step, (_floats(tf, (batch, 500, 1)), _classes(tf, batch, 2))


def build_text(tf: Any, batch: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """keras.io's "Text classification from scratch" (Embedding + two strided Conv1D), 500 tokens."""
    layers = tf.keras.layers
    inputs = tf.keras.Input((500,), dtype="int64")
    x = layers.Embedding(20000, 128)(inputs)
    x = layers.Dropout(0.5)(x)
    x = layers.Conv1D(128, 7, padding="valid", activation="relu", strides=3)(x)
    x = layers.Conv1D(128, 7, padding="valid", activation="relu", strides=3)(x)
    x = layers.GlobalMaxPooling1D()(x)
    x = layers.Dense(128, activation="relu")(x)
    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)
    model = tf.keras.Model(inputs, outputs)
    step = _sgd_step(tf, model, tf.keras.losses.BinaryCrossentropy(), tf.keras.optimizers.Adam())
    tokens = tf.constant((np.arange(batch * 500) * 7919 % 20000).reshape(batch, 500).astype("int64"))
    return step, (tokens, tf.constant((np.arange(batch) % 2).astype("float32").reshape(batch, 1)))


def build_transformer(tf: Any, batch: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """keras.io's "Text classification with Transformer": one block (MultiHeadAttention + LayerNorm)."""
    layers = tf.keras.layers
    maxlen, vocab, embed, heads, ff = 200, 20000, 32, 2, 32

    class TokenAndPosition(tf.keras.layers.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.tokens, self.positions = layers.Embedding(vocab, embed), layers.Embedding(maxlen, embed)

        def call(self, ids: Any) -> Any:
            return self.tokens(ids) + self.positions(tf.range(maxlen))

    inputs = tf.keras.Input((maxlen,), dtype="int64")
    x = TokenAndPosition()(inputs)
    attn = layers.MultiHeadAttention(num_heads=heads, key_dim=embed)(x, x)
    x = layers.LayerNormalization(epsilon=1e-6)(x + layers.Dropout(0.1)(attn))
    ffn = layers.Dense(embed)(layers.Dense(ff, activation="relu")(x))
    x = layers.LayerNormalization(epsilon=1e-6)(x + layers.Dropout(0.1)(ffn))
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dense(20, activation="relu")(layers.Dropout(0.1)(x))
    outputs = layers.Dense(2, activation="softmax")(layers.Dropout(0.1)(x))
    model = tf.keras.Model(inputs, outputs)
    step = _sgd_step(tf, model, tf.keras.losses.SparseCategoricalCrossentropy(), tf.keras.optimizers.Adam())
    ids = tf.constant((np.arange(batch * maxlen) * 7919 % vocab).reshape(batch, maxlen).astype("int64"))
    return step, (ids, _classes(tf, batch, 2))


def build_dcgan(tf: Any, batch: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """TF's DCGAN tutorial: generator and discriminator trained together, one step per batch."""
    layers = tf.keras.layers
    gen = tf.keras.Sequential(
        [
            tf.keras.Input((100,)),
            layers.Dense(7 * 7 * 256, use_bias=False),
            layers.BatchNormalization(),
            layers.LeakyReLU(),
            layers.Reshape((7, 7, 256)),
            layers.Conv2DTranspose(128, 5, strides=1, padding="same", use_bias=False),
            layers.BatchNormalization(),
            layers.LeakyReLU(),
            layers.Conv2DTranspose(64, 5, strides=2, padding="same", use_bias=False),
            layers.BatchNormalization(),
            layers.LeakyReLU(),
            layers.Conv2DTranspose(1, 5, strides=2, padding="same", use_bias=False, activation="tanh"),
        ]
    )
    disc = tf.keras.Sequential(
        [
            tf.keras.Input((28, 28, 1)),
            layers.Conv2D(64, 5, strides=2, padding="same"),
            layers.LeakyReLU(),
            layers.Dropout(0.3),
            layers.Conv2D(128, 5, strides=2, padding="same"),
            layers.LeakyReLU(),
            layers.Dropout(0.3),
            layers.Flatten(),
            layers.Dense(1),
        ]
    )
    bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
    g_opt, d_opt = tf.keras.optimizers.Adam(1e-4), tf.keras.optimizers.Adam(1e-4)

    @tf.function
    def step(images: Any, noise: Any) -> Any:
        with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            fake = gen(noise, training=True)
            real_out = disc(images, training=True)
            fake_out = disc(fake, training=True)
            g_loss = bce(tf.ones_like(fake_out), fake_out)
            d_loss = bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out), fake_out)
        g_opt.apply_gradients(zip(g_tape.gradient(g_loss, gen.trainable_variables), gen.trainable_variables))
        d_opt.apply_gradients(zip(d_tape.gradient(d_loss, disc.trainable_variables), disc.trainable_variables))
        return g_loss

    return step, (_floats(tf, (batch, 28, 28, 1)), _floats(tf, (batch, 100)))


BUILDERS = {
    "resnet50": build_resnet50,
    "cnn": build_cnn,
    "fcn": build_fcn,
    "text": build_text,
    "transformer": build_transformer,
    "dcgan": build_dcgan,
}
