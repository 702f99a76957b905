"""MNIST from the four IDX ``.gz`` files, numpy only (for the TensorFlow runs).

``tf.keras.datasets.mnist.load_data()`` would download Keras's ``mnist.npz`` (no network here, and
the shared copy is IDX with non-canonical checksums), so the TF children read the same files that
``unison.keras.datasets.mnist.load_data()`` reads and return the same arrays (uint8, same order).
"""

from __future__ import annotations

import gzip
import os

import numpy as np


def data_dir() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "data"))
    return os.environ.get("UNISON_DATA_DIR", default)


def _read(path: str, offset: int) -> np.ndarray:
    with gzip.open(path, "rb") as fh:
        return np.frombuffer(fh.read(), dtype=np.uint8, offset=offset)


def load_data() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    root = os.path.join(data_dir(), "mnist")
    x_train = _read(os.path.join(root, "train-images-idx3-ubyte.gz"), 16).reshape(-1, 28, 28)
    y_train = _read(os.path.join(root, "train-labels-idx1-ubyte.gz"), 8)
    x_test = _read(os.path.join(root, "t10k-images-idx3-ubyte.gz"), 16).reshape(-1, 28, 28)
    y_test = _read(os.path.join(root, "t10k-labels-idx1-ubyte.gz"), 8)
    return (x_train, y_train), (x_test, y_test)
