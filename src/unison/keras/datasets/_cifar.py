"""CIFAR-10 and CIFAR-100's python batches: pickled dicts of a flat uint8 image array and labels.

Each batch file (``data_batch_1`` ... ``test_batch`` for CIFAR-10; ``train``, ``test`` for CIFAR-100)
is a Python 2 pickle of a dict whose ``data`` is a ``(N, 3072)`` uint8 array, each row the red, then
green, then blue 32x32 plane in row-major order, and whose ``labels`` (CIFAR-10) or ``fine_labels``
and ``coarse_labels`` (CIFAR-100) are lists of N ints. The pickle is read by the restricted
unpickler (:mod:`unison.keras.datasets._safe_pickle`), never by ``pickle.load``.

Example:
    >>> import io, pickle
    >>> import numpy as np
    >>> blob = pickle.dumps({b"data": np.arange(3072, dtype=np.uint32).astype(np.uint8)[None],
    ...                      b"labels": [7]}, protocol=3)
    >>> x, y = parse_batch(io.BytesIO(blob), "labels", "example")
    >>> x.shape, y.tolist()
    ((1, 3, 32, 32), [7])
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import IO

import numpy as np

from unison.errors import DatasetError
from unison.keras.datasets import _keras_files, _safe_pickle

_PIXELS = 3 * 32 * 32


def parse_batch(stream: IO[bytes], label_key: str, source: str) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(images (N, 3, 32, 32) uint8, labels (N,) uint8)`` of one pickled batch.

    Raises:
        DatasetError: the pickle is refused (it names code to run), or the dict lacks ``data`` or
            ``label_key``, or their shapes disagree. The message names ``source``.
    """
    try:
        batch = _safe_pickle.load_pickle(stream, encoding="bytes")
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
        raise DatasetError(
            f"Could not read the CIFAR batch {source}: {exc}. To fix: replace it with the file from the "
            "original cifar-*-python.tar.gz, or delete it so that unison fetches a fresh copy."
        ) from None
    if not isinstance(batch, dict):
        raise DatasetError(f"The CIFAR batch {source} holds a {type(batch).__name__}, expected a dict. {_FIX}")
    # Python 2 wrote str keys; read with encoding="bytes" they are bytes (a re-pickled copy may have str).
    entries = {(k.decode("utf8") if isinstance(k, bytes) else k): v for k, v in batch.items()}
    data, labels = entries.get("data"), entries.get(label_key)
    if not isinstance(data, np.ndarray) or data.ndim != 2 or data.shape[1] != _PIXELS:
        got = f"{data.shape} {data.dtype}" if isinstance(data, np.ndarray) else type(data).__name__
        raise DatasetError(f"The CIFAR batch {source} has no 'data' array of shape (N, {_PIXELS}) (got {got}). {_FIX}")
    if not isinstance(labels, (list, np.ndarray)) or len(labels) != len(data):
        raise DatasetError(
            f"The CIFAR batch {source} has no '{label_key}' list of {len(data)} labels "
            f"(keys: {sorted(map(str, entries))}). {_FIX}"
        )
    try:
        label_array = np.asarray(labels, dtype=np.int64)
    except (TypeError, ValueError):
        raise DatasetError(f"The CIFAR batch {source} has non-integer '{label_key}'. {_FIX}") from None
    if label_array.ndim != 1 or (len(label_array) and (label_array.min() < 0 or label_array.max() > 255)):
        raise DatasetError(f"The CIFAR batch {source} has '{label_key}' outside 0-255. {_FIX}")
    return data.astype(np.uint8, copy=False).reshape(len(data), 3, 32, 32), label_array.astype(np.uint8)


_FIX = "To fix: replace the file with the original CIFAR batch, or delete it."


def load_batch(path: Path, label_key: str = "labels") -> tuple[np.ndarray, np.ndarray]:
    """Read one CIFAR batch file (see :func:`parse_batch`)."""
    with open(path, "rb") as f:
        return parse_batch(f, label_key, str(path))


def channels_last(x: np.ndarray) -> np.ndarray:
    """``(N, 3, 32, 32)`` -> ``(N, 32, 32, 3)``, contiguous (Keras's default image layout)."""
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def read_binary(path: Path, label_bytes: int, label_index: int) -> tuple[np.ndarray, np.ndarray]:
    """One batch of CIFAR's binary version: records of ``label_bytes`` label bytes, then 3072 pixels.

    CIFAR-10's records hold one label byte; CIFAR-100's two (coarse, then fine). No pickle involved.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "b.bin"
        >>> _ = p.write_bytes(bytes([7]) + bytes(3072))
        >>> x, y = read_binary(p, 1, 0)
        >>> x.shape, y.tolist()
        ((1, 3, 32, 32), [7])
    """
    raw = np.fromfile(path, dtype=np.uint8)
    record = label_bytes + _PIXELS
    if raw.size == 0 or raw.size % record:
        raise DatasetError(
            f"The CIFAR binary batch {path} holds {raw.size} bytes, not a whole number of {record}-byte "
            f"records ({label_bytes} label byte(s) and {_PIXELS} pixels). {_FIX}"
        )
    rows = raw.reshape(-1, record)
    return rows[:, label_bytes:].reshape(-1, 3, 32, 32), rows[:, label_index].copy()


def find(*forms: _keras_files.KerasArchive) -> tuple[_keras_files.KerasArchive, Path]:
    """The form found and the folder holding its batch files (see :func:`_keras_files.find_folder`)."""
    return _keras_files.find_folder(*forms)
