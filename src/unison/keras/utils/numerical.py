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


def to_ordinal(y: Any, num_classes: int | None = None, dtype: str = "float32") -> np.ndarray:
    """Keras 2's ``to_ordinal``: class ``k`` of ``n`` as ``k`` ones then ``n - 1 - k`` zeros (ordinal regression).

    Example:
        >>> to_ordinal([0, 2, 1], num_classes=3).tolist()
        [[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]
    """
    labels = np.array(y, dtype="int")
    shape = labels.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = tuple(shape[:-1])
    labels = labels.reshape(-1)
    if not num_classes:
        num_classes = int(np.max(labels)) + 1 if labels.size else 1
    ranks = np.arange(num_classes - 1)[None, :]
    ordinal = (ranks < labels[:, None]).astype(dtype)
    return ordinal.reshape(tuple(shape) + (num_classes - 1,))


def warmstart_embedding_matrix(
    base_vocabulary: Any, new_vocabulary: Any, base_embeddings: Any, new_embeddings_initializer: Any = "uniform"
) -> torch.Tensor:
    """Keras 2's ``warmstart_embedding_matrix``: rows of ``base_embeddings`` for the words both vocabularies
    share, freshly initialised rows (``new_embeddings_initializer``) for the new words.

    Example:
        >>> m = warmstart_embedding_matrix(["a", "b"], ["b", "c"], np.array([[1.0], [2.0]], "float32"), "zeros")
        >>> m.tolist()
        [[2.0], [0.0]]
    """
    from unison.keras import initializers

    base = torch.as_tensor(np.asarray(base_embeddings))
    if base.dim() != 2:
        raise ValueError(f"base_embeddings must be a 2-D matrix (vocabulary, dim). Received shape {tuple(base.shape)}")
    words = [w.decode() if isinstance(w, bytes) else w for w in np.asarray(base_vocabulary).tolist()]
    new_words = [w.decode() if isinstance(w, bytes) else w for w in np.asarray(new_vocabulary).tolist()]
    out = torch.empty(len(new_words), base.shape[1], dtype=base.dtype)
    initializers.get(new_embeddings_initializer)(out)
    position = {word: i for i, word in enumerate(words)}
    for index, word in enumerate(new_words):
        if word in position:
            out[index] = base[position[word]]
    return out
