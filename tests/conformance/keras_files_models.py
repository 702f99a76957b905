"""The models of the Keras file round trips, written once against a ``keras`` module.

The same builders run with ``unison.keras`` (in the pytest process), and with Keras 3
(``tensorflow.keras``) or Keras 2 (``tf_keras``) in the oracle subprocess
(``keras_files_oracle.py``), so each side builds the same architecture under the same names.

Example:
    >>> from unison import keras
    >>> build(keras, "cnn").count_params() > 0
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

MODELS = ("cnn", "multi_input", "custom_layer", "subclassed", "transformer", "mobilenet_v2", "efficientnet_b0")
FORMATS = (".keras", ".h5", ".weights.h5")
_CLASSES: dict[int, dict[str, Any]] = {}


def custom_classes(keras: Any) -> dict[str, Any]:
    """A registered custom layer (``roundtrip>Scale``) and subclassed model (``roundtrip>TinyNet``)."""
    if id(keras) in _CLASSES:
        return _CLASSES[id(keras)]
    register = keras.utils.register_keras_serializable  # tf.keras of TF 2.21 has no keras.saving

    @register(package="roundtrip")
    class Scale(keras.layers.Layer):
        """Multiplies each feature by a learned factor (one weight, as a user's custom layer)."""

        def build(self, input_shape: Any) -> None:
            self.scale = self.add_weight(name="scale", shape=(int(input_shape[-1]),), initializer="ones")
            self.built = True

        def call(self, inputs: Any) -> Any:
            return inputs * self.scale

    @register(package="roundtrip")
    class TinyNet(keras.Model):
        """A subclassed model with a constructor argument, as Keras saves it: by name and config."""

        def __init__(self, units: int = 4, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.units = units
            self.hidden = keras.layers.Dense(units, activation="relu")
            self.out = keras.layers.Dense(2)

        def call(self, inputs: Any) -> Any:
            return self.out(self.hidden(inputs))

        def get_config(self) -> dict[str, Any]:
            return {"units": self.units, "name": self.name}

    _CLASSES[id(keras)] = {"Scale": Scale, "TinyNet": TinyNet}
    return _CLASSES[id(keras)]


def build(keras: Any, name: str) -> Any:
    """A fresh model ``name`` of :data:`MODELS`, built (its weights exist)."""
    layers = keras.layers
    if name == "cnn":
        return keras.Sequential(
            [
                keras.Input((12, 12, 3)),
                layers.Conv2D(6, 3, activation="relu"),
                layers.BatchNormalization(),
                layers.MaxPooling2D(),
                layers.Flatten(),
                layers.Dense(4, activation="softmax"),
            ]
        )
    if name == "multi_input":
        a = keras.Input((6,), name="a")
        b = keras.Input((5,), name="b")
        x = layers.Concatenate()([layers.Dense(8, activation="relu")(a), layers.Dense(8)(b)])
        return keras.Model([a, b], layers.Dense(3)(x))
    if name == "custom_layer":
        scale = custom_classes(keras)["Scale"]
        inputs = keras.Input((5,))
        return keras.Model(inputs, layers.Dense(3)(scale()(layers.Dense(4)(inputs))))
    if name == "subclassed":
        model = custom_classes(keras)["TinyNet"](units=4)
        model(np.zeros((1, 5), np.float32))
        return model
    if name == "transformer":
        inputs = keras.Input((6, 8))
        attention = layers.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs)
        x = layers.LayerNormalization()(layers.Add()([inputs, attention]))
        ff = layers.Dense(8)(layers.Dense(16, activation="relu")(x))
        return keras.Model(inputs, layers.LayerNormalization()(layers.Add()([x, ff])))
    if name == "einsum_transformer":  # issue 35's block: EinsumDense feed-forward and head projections
        inputs = keras.Input((6, 8))
        attention = layers.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs)
        x = layers.LayerNormalization()(layers.Add()([inputs, attention]))
        h = layers.EinsumDense("abc,cd->abd", output_shape=(None, 16), bias_axes="d", activation="relu")(x)
        h = layers.EinsumDense("abd,dc->abc", output_shape=(None, 8), bias_axes="c")(h)
        heads = layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 4), bias_axes="de")(x)
        merged = layers.EinsumDense("abde,dec->abc", output_shape=(None, 8), bias_axes="c")(heads)
        return keras.Model(inputs, layers.LayerNormalization()(layers.Add()([x, h, merged])))
    if name == "nested_sequential":  # ConvNeXt's shape: Sequential stems/downsamplers inside a Functional
        stem = keras.Sequential([layers.Conv2D(4, 2, strides=2), layers.LayerNormalization(epsilon=1e-6)])
        inputs = keras.Input((8, 8, 3))
        x = layers.Conv2D(5, 1)(stem(inputs))
        down = keras.Sequential([layers.LayerNormalization(epsilon=1e-6), layers.Conv2D(6, 2, strides=2)])
        return keras.Model(inputs, layers.Dense(2)(layers.GlobalAveragePooling2D()(down(x))))
    if name == "convnext_tiny":  # nested Sequentials and a grouped (depthwise) Conv2D
        return keras.applications.ConvNeXtTiny(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    if name == "mobilenet_v2":
        return keras.applications.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=5)
    if name == "efficientnet_b0":
        return keras.applications.EfficientNetB0(input_shape=(32, 32, 3), weights=None, classes=5)
    raise ValueError(f"unknown model {name!r}; one of {MODELS}")


def inputs(name: str) -> list[np.ndarray]:
    """The fixed inputs both sides predict on."""
    rng = np.random.RandomState(0)
    if name == "cnn":
        return [rng.rand(2, 12, 12, 3).astype(np.float32)]
    if name == "multi_input":
        return [rng.rand(2, 6).astype(np.float32), rng.rand(2, 5).astype(np.float32)]
    if name in ("custom_layer", "subclassed"):
        return [rng.rand(2, 5).astype(np.float32)]
    if name in ("transformer", "einsum_transformer"):
        return [rng.rand(2, 6, 8).astype(np.float32)]
    if name == "nested_sequential":
        return [rng.rand(2, 8, 8, 3).astype(np.float32)]
    return [rng.rand(2, 32, 32, 3).astype(np.float32) * 255.0]


def predict(model: Any, name: str) -> np.ndarray:
    """The model's outputs on :func:`inputs` (inference mode)."""
    xs = inputs(name)
    out = model(xs if len(xs) > 1 else xs[0], training=False)
    return np.asarray(out.numpy() if hasattr(out, "numpy") else out)


def perturb(model: Any) -> None:
    """Move every weight off its initial value (BatchNorm's moving statistics too), so a file that
    loaded nothing cannot pass for one that loaded everything."""
    rng = np.random.RandomState(1)
    values = [np.asarray(v) for v in model.get_weights()]
    # scaled, not shifted: a deep network (EfficientNet) stays finite
    model.set_weights(
        [(v * rng.uniform(0.8, 1.2, v.shape) + rng.uniform(0, 0.02, v.shape)).astype(v.dtype) for v in values]
    )
