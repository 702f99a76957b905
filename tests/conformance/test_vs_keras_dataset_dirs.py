"""Keras's dataset builders from folders and arrays against Keras 3 and Keras 2.

``image_dataset_from_directory`` and ``text_dataset_from_directory`` read a folder per class,
written here with real files (PNG images through Pillow, UTF-8 text); the batches (in file order,
``shuffle=False``), labels and class names are compared. They are reachable as ``keras.utils.*``
and, like ``timeseries_dataset_from_array``, as ``keras.preprocessing.*``. Both sides write the same
files into the same temporary folder before reading it.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")


def _image_folder(name: str) -> str:
    from PIL import Image

    root = os.path.join(tempfile.gettempdir(), f"unison_conformance_{name}")
    for k, label in enumerate(("cats", "dogs")):
        os.makedirs(os.path.join(root, label), exist_ok=True)
        for i in range(3):
            pixels = ((np.arange(8 * 8 * 3).reshape(8, 8, 3) * (7 + i + 5 * k)) % 256).astype("uint8")
            Image.fromarray(pixels).save(os.path.join(root, label, f"{i}.png"))
    return root


def _text_folder(name: str) -> str:
    root = os.path.join(tempfile.gettempdir(), f"unison_conformance_{name}")
    for k, label in enumerate(("neg", "pos")):
        os.makedirs(os.path.join(root, label), exist_ok=True)
        for i in range(3):
            with open(os.path.join(root, label, f"{i}.txt"), "w", encoding="utf-8") as f:
                f.write(f"review {i} of class {label}: {'good ' * (i + k)}")
    return root


def _batches(ds) -> list:
    return [tuple(np.asarray(part) for part in batch) for batch in ds]


@pytest.mark.parametrize("module", ["utils", "preprocessing"])
@same_as_tf(
    "keras:utils.image_dataset_from_directory", "keras:preprocessing.image_dataset_from_directory", dialects=BOTH
)
def test_image_dataset_from_directory(tf, module):
    ds = getattr(tf.keras, module).image_dataset_from_directory(
        _image_folder("images"), image_size=(8, 8), batch_size=4, shuffle=False
    )
    return {"class_names": list(ds.class_names), "batches": _batches(ds)}


@same_as_tf(
    "keras:utils.image_dataset_from_directory",
    "keras:preprocessing.image_dataset_from_directory",
    edge=True,
    dialects=BOTH,
)
def test_image_dataset_grayscale_binary_labels(tf):
    ds = tf.keras.utils.image_dataset_from_directory(
        _image_folder("images_gray"),
        image_size=(8, 8),
        batch_size=6,
        shuffle=False,
        color_mode="grayscale",
        label_mode="binary",
    )
    return _batches(ds)


@pytest.mark.parametrize("module", ["utils", "preprocessing"])
@same_as_tf("keras:utils.text_dataset_from_directory", "keras:preprocessing.text_dataset_from_directory", dialects=BOTH)
def test_text_dataset_from_directory(tf, module):
    ds = getattr(tf.keras, module).text_dataset_from_directory(_text_folder("texts"), batch_size=4, shuffle=False)
    return {"class_names": list(ds.class_names), "batches": _batches(ds)}


@same_as_tf(
    "keras:utils.text_dataset_from_directory",
    "keras:preprocessing.text_dataset_from_directory",
    edge=True,
    dialects=BOTH,
)
def test_text_dataset_categorical_and_a_bad_label_mode(tf):
    ds = tf.keras.utils.text_dataset_from_directory(
        _text_folder("texts_cat"), batch_size=6, shuffle=False, label_mode="categorical"
    )
    batches = _batches(ds)
    try:
        tf.keras.utils.text_dataset_from_directory(_text_folder("texts_cat"), label_mode="ordinal")
    except ValueError:
        refused = True
    else:
        refused = False
    return batches, refused


@same_as_tf("keras:preprocessing.timeseries_dataset_from_array", dialects=BOTH)
def test_preprocessing_timeseries_dataset_from_array(tf):
    ds = tf.keras.preprocessing.timeseries_dataset_from_array(
        np.arange(12, dtype="float32"), np.arange(12, dtype="int32"), sequence_length=3, batch_size=4, shuffle=False
    )
    return _batches(ds)


@same_as_tf("keras:preprocessing.timeseries_dataset_from_array", edge=True, dialects=BOTH)
def test_preprocessing_timeseries_strided_window_without_targets(tf):
    ds = tf.keras.preprocessing.timeseries_dataset_from_array(
        np.arange(30, dtype="float32").reshape(15, 2),
        None,
        sequence_length=3,
        sequence_stride=3,
        sampling_rate=2,
        start_index=1,
        end_index=14,
        batch_size=2,
    )
    return [np.asarray(b) for b in ds]
