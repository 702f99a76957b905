"""Keras 3's colour (and hue/saturation) augmentation layers on unison against Keras 3.15 on TensorFlow 2.21.

Deterministic settings are compared by value: ``AutoContrast`` and ``Equalization`` always, the
random layers with a one-value factor (``(f, f)``) or a probability of 0 or 1, and every layer at
inference (``training=False``). Random draws themselves differ from Keras's, so a random setting
is compared by shape and dtype. Each layer is also rebuilt from its config and must act the same.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_IMAGES = (np.sin(np.arange(2 * 4 * 5 * 3) * 1.3) * 110 + 120).reshape(2, 4, 5, 3).astype(np.float32)

# (layer, kwargs giving a fixed transform, kwargs giving a random one)
LAYERS = (
    ("AutoContrast", {}, {"value_range": (0, 1)}),
    ("Equalization", {}, {"bins": 16}),
    ("Solarization", {"threshold_factor": (0, 0)}, {"addition_factor": 0.3, "threshold_factor": 0.5}),
    ("RandomInvert", {"factor": (1.0, 1.0)}, {"factor": 0.5}),
    ("RandomGrayscale", {"factor": 1.0}, {"factor": 0.5}),
    ("RandomColorDegeneration", {"factor": (0.4, 0.4)}, {"factor": 0.8}),
    ("RandomPosterization", {"factor": (3, 3)}, {"factor": (2, 6)}),
    ("RandomSharpness", {"factor": (0.3, 0.3)}, {"factor": 0.5}),
    ("RandomHue", {"factor": (1.0, 1.0)}, {"factor": 0.5}),
    ("RandomSaturation", {"factor": (0.7, 0.7)}, {"factor": 0.5}),
    (
        "RandomColorJitter",
        {"brightness_factor": (0.1, 0.1), "contrast_factor": (0.0, 0.0), "saturation_factor": (0.6, 0.6)},
        {"brightness_factor": 0.2, "contrast_factor": 0.3, "saturation_factor": 0.5, "hue_factor": 0.2},
    ),
)
NAMES = (
    "keras:layers.AutoContrast",
    "keras:layers.Equalization",
    "keras:layers.Solarization",
    "keras:layers.RandomInvert",
    "keras:layers.RandomGrayscale",
    "keras:layers.RandomColorDegeneration",
    "keras:layers.RandomPosterization",
    "keras:layers.RandomSharpness",
    "keras:layers.RandomHue",
    "keras:layers.RandomSaturation",
    "keras:layers.RandomColorJitter",
)
RANDOM_NAMES = (
    "keras:layers.Solarization",
    "keras:layers.RandomInvert",
    "keras:layers.RandomGrayscale",
    "keras:layers.RandomColorDegeneration",
    "keras:layers.RandomPosterization",
    "keras:layers.RandomSharpness",
    "keras:layers.RandomHue",
    "keras:layers.RandomSaturation",
    "keras:layers.RandomColorJitter",
)


def _value(out):
    return out.numpy() if hasattr(out, "numpy") else np.asarray(out)


@pytest.mark.parametrize(("name", "fixed", "random"), LAYERS)
@same_as_tf(*NAMES)
def test_a_fixed_transform_and_inference(tf, name, fixed, random):
    layer = getattr(tf.keras.layers, name)(**fixed)
    clone = type(layer).from_config(layer.get_config())
    x = tf.constant(_IMAGES)
    return _value(layer(x, training=True)), _value(clone(x[0], training=True)), _value(layer(x, training=False))


@pytest.mark.parametrize(("name", "fixed", "random"), LAYERS)
@same_as_tf(*NAMES, values=False)
def test_a_random_transform_keeps_shape_and_dtype(tf, name, fixed, random):
    layer = (
        getattr(tf.keras.layers, name)(seed=5, **random)
        if name not in ("AutoContrast", "Equalization")
        else (getattr(tf.keras.layers, name)(**random))
    )
    out = _value(layer(tf.constant(_IMAGES / 255.0 if random.get("value_range") == (0, 1) else _IMAGES)))
    return out


@pytest.mark.parametrize(("name", "fixed", "random"), LAYERS[2:])
@same_as_tf(*RANDOM_NAMES, edge=True)
def test_random_values_stay_in_the_value_range(tf, name, fixed, random):
    layer = getattr(tf.keras.layers, name)(**random)
    out = _value(layer(tf.constant(_IMAGES), training=True))
    return bool(out.min() >= 0.0), bool(out.max() <= 255.0), out.shape


@same_as_tf("keras:layers.AutoContrast", "keras:layers.Equalization", edge=True)
def test_flat_images_and_other_value_ranges(tf):
    flat = tf.constant(np.full((1, 3, 3, 3), 0.25, np.float32))
    scaled = tf.constant(_IMAGES / 255.0)
    return (
        _value(tf.keras.layers.AutoContrast(value_range=(0, 1))(flat)),
        _value(tf.keras.layers.AutoContrast(value_range=(0, 1))(scaled)),
        _value(tf.keras.layers.Equalization(value_range=(0, 1))(scaled)),
        _value(tf.keras.layers.Equalization(bins=8)(tf.constant(_IMAGES))),
    )


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("RandomPosterization", {"factor": 9}),
        ("RandomSharpness", {"factor": 2.0}),
        ("Solarization", {"addition_factor": 1.5}),
        ("RandomGrayscale", {"factor": -0.1}),
        ("AutoContrast", {"value_range": (0, 1, 2)}),
    ],
)
@same_as_tf(
    "keras:layers.RandomPosterization",
    "keras:layers.RandomSharpness",
    "keras:layers.Solarization",
    "keras:layers.RandomGrayscale",
    "keras:layers.AutoContrast",
    edge=True,
)
def test_bad_factors_are_errors(tf, name, kwargs):
    return getattr(tf.keras.layers, name)(**kwargs)


def test_the_name_tables_follow_the_layer_table():
    assert [n.split(".")[-1] for n in NAMES] == [row[0] for row in LAYERS]
    assert RANDOM_NAMES == NAMES[2:]
