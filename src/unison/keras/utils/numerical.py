"""``keras.utils.to_categorical`` and ``keras.utils.set_random_seed``.

Example:
    >>> to_categorical([0, 2], num_classes=3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch


def to_categorical(x: Any, num_classes: int | None = None) -> np.ndarray:
    """One-hot encode integer class ids (Keras's ``to_categorical``): float32, a new last axis.

    A trailing axis of size 1 is dropped first (``(n, 1)`` labels become ``(n, num_classes)``),
    as in Keras.

    Args:
        x: integer class ids (array-like or tensor) in ``[0, num_classes)``.
        num_classes: number of classes; default ``max(x) + 1``.
    """
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x)
    if arr.dtype.kind == "f" and arr.size and not np.all(np.equal(np.mod(arr, 1), 0)):
        raise ValueError(
            f"to_categorical expects integer class ids. Received values such as {arr.flat[0]!r} (dtype {arr.dtype})."
        )
    if arr.dtype.kind not in "iuf b":
        raise ValueError(f"to_categorical expects integer class ids. Received dtype {arr.dtype}.")
    ids = arr.astype("int64")
    if ids.ndim > 1 and ids.shape[-1] == 1:
        ids = ids.reshape(ids.shape[:-1])
    if num_classes is None:
        num_classes = int(ids.max()) + 1 if ids.size else 0
    if not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
        raise ValueError(f"num_classes must be a positive integer. Received: num_classes={num_classes!r}")
    if ids.size and (ids.min() < 0 or ids.max() >= num_classes):
        bad = int(ids.max()) if ids.max() >= num_classes else int(ids.min())
        raise ValueError(
            f"to_categorical received class id {bad}, outside [0, num_classes={num_classes}). "
            "Raise num_classes or fix the labels."
        )
    out = np.zeros((*ids.shape, int(num_classes)), dtype="float32")
    np.put_along_axis(out, ids[..., None], 1.0, axis=-1)
    return out


def set_random_seed(seed: int) -> None:
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and every GPU) at once.

    Args:
        seed: a non-negative integer.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"set_random_seed expects a non-negative integer. Received: seed={seed!r}")
    random.seed(int(seed))
    np.random.seed(int(seed) % 2**32)
    torch.manual_seed(int(seed))


__all__ = ["set_random_seed", "to_categorical"]
