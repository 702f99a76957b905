"""What the housing regression sets share: a numeric ``x``/``y`` ``.npz``, shuffled then split.

Example:
    >>> import numpy as np
    >>> (xt, yt), (xv, yv) = split(np.arange(10.0)[:, None], np.arange(10.0), 0.2, seed=113)
    >>> len(xt), len(xv)
    (8, 2)
"""

from __future__ import annotations

import pickle
import zipfile

import numpy as np

from unison.errors import DatasetError
from unison.keras.datasets import _keras_files, _safe_pickle

Split = tuple[np.ndarray, np.ndarray]


def check_test_split(func: str, test_split: float) -> None:
    if isinstance(test_split, bool) or not isinstance(test_split, (int, float)) or not 0 <= test_split < 1:
        raise ValueError(
            f"{func}(test_split={test_split!r}): test_split is the fraction of samples kept for testing; "
            "it must be a number in [0, 1)."
        )


def read_xy(spec: _keras_files.KerasFile, path: str, features: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``x`` (N, features) and ``y`` (N,) arrays of the set's ``.npz`` (no pickle allowed)."""
    file = _keras_files.find_file(spec, path)
    try:
        arrays = _safe_pickle.load_npz(file)
        x, y = arrays["x"], arrays["y"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError) as exc:
        raise DatasetError(
            f"Could not read {file} as Keras's {spec.fname} (numeric arrays x and y): "
            f"{type(exc).__name__}: {exc}. To fix: delete it (unison then looks elsewhere and downloads a "
            f"verified copy from {spec.origin}) or replace it."
        ) from None
    if x.ndim != 2 or x.shape[1] != features or y.shape != (len(x),):
        raise DatasetError(
            f"{file} is not Keras's {spec.fname}: x {x.shape}, y {y.shape}; expected x (N, {features}) and "
            "y (N,). To fix: delete or replace it."
        )
    return x, y


def split(x: np.ndarray, y: np.ndarray, test_split: float, seed: int) -> tuple[Split, Split]:
    """Shuffle with ``np.random.RandomState(seed)``; the first ``int(n * (1 - test_split))`` train."""
    indices = np.arange(len(x))
    np.random.RandomState(seed).shuffle(indices)
    x, y = x[indices], y[indices]
    idx = int(len(x) * (1 - test_split))
    return (np.array(x[:idx]), np.array(y[:idx])), (np.array(x[idx:]), np.array(y[idx:]))
