"""What IMDB and Reuters share: reading their ``.npz`` safely and Keras's word-index transforms.

Both files store each text as a list of word ranks (1 = most frequent word), ragged, in numpy
object arrays. ``load_data`` shuffles with ``np.random.RandomState(seed)``, prepends ``start_char``
and adds ``index_from`` to every rank, drops texts whose length (start mark included) is not below
``maxlen``, then replaces every index outside ``[skip_top, num_words)`` by ``oov_char`` (or drops it
when ``oov_char`` is None). As in Keras, ``num_words=None`` means the largest index present, which
therefore itself falls outside the range and becomes ``oov_char``.

Example:
    >>> cap_vocab([[1, 4, 9]], num_words=5, skip_top=2, oov_char=2)
    [[2, 4, 2]]
"""

from __future__ import annotations

import json
import pickle
import zipfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from unison.errors import DatasetError
from unison.keras.datasets import _keras_files, _safe_pickle

Seqs = list[list[int]]


def read_npz(spec: _keras_files.KerasFile, path: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
    """The arrays ``keys`` of the data set's ``.npz`` (found by :func:`_keras_files.find_file`)."""
    file = _keras_files.find_file(spec, path)
    try:
        arrays = _safe_pickle.load_npz(file, allow_object=True)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError, TypeError) as exc:
        raise DatasetError(
            f"Could not read {file} as Keras's {spec.fname}: {type(exc).__name__}: {exc}. To fix: delete "
            f"it (unison then looks elsewhere and downloads a verified copy from {spec.origin}) or replace it."
        ) from None
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise DatasetError(
            f"{file} is not Keras's {spec.fname}: it lacks the arrays {missing} (has {sorted(arrays)}). "
            "To fix: delete it or replace it with Keras's file."
        )
    return {k: arrays[k] for k in keys}


def check_sequences(xs: np.ndarray, labels: np.ndarray, file: str) -> None:
    """Every element of ``xs`` is a list (its words are made ints by :func:`shift`), one label per text."""
    # A file whose texts all have one length may hold them as a 2-D int array; its rows are the texts.
    if not (xs.ndim == 1 or (xs.ndim == 2 and xs.dtype.kind in "iu")) or labels.shape != (len(xs),):
        raise DatasetError(
            f"{file}: expected a 1-D array of texts (or a 2-D int array) and one label per text, got {xs.shape} and "
            f"{labels.shape}. To fix: delete the file or replace it with Keras's."
        )
    for x in xs if xs.dtype == object else ():
        if not isinstance(x, (list, np.ndarray)):
            raise DatasetError(
                f"{file}: a text is a {type(x).__name__}, expected a list of word ranks (ints). "
                "To fix: delete the file or replace it with Keras's."
            )


def shuffle(rng: np.random.RandomState, *arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays permuted by one ``rng.shuffle`` of their indices (Keras's draw, in Keras's order)."""
    indices = np.arange(len(arrays[0]))
    rng.shuffle(indices)
    return [a[indices] for a in arrays]


def shift(xs: np.ndarray, start_char: int | None, index_from: int) -> Seqs:
    """Add ``index_from`` to every rank and prepend ``start_char`` (unless None)."""
    head = [] if start_char is None else [start_char]
    return [head + [int(w) + index_from for w in x] for x in xs]


def drop_long(maxlen: int | None, xs: Seqs, labels: np.ndarray) -> tuple[Seqs, np.ndarray]:
    """Keep the texts shorter than ``maxlen`` (strictly, as Keras's ``remove_long_seq``)."""
    if not maxlen:
        return xs, labels
    keep = [i for i, x in enumerate(xs) if len(x) < maxlen]
    return [xs[i] for i in keep], labels[np.asarray(keep, dtype=np.int64)]


def cap_vocab(xs: Seqs, num_words: int | None, skip_top: int, oov_char: int | None) -> Seqs:
    """Replace (or with ``oov_char=None`` drop) every index outside ``[skip_top, num_words)``."""
    if not num_words:
        num_words = max((max(x) for x in xs if x), default=0)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def as_object_array(xs: Seqs) -> np.ndarray:
    """A 1-D object array of lists (``np.array`` would make a 2-D one when all lengths agree)."""
    out = np.empty(len(xs), dtype=object)
    out[:] = xs
    return out


def check_args(func: str, num_words: int | None, skip_top: int, maxlen: int | None) -> None:
    """User mistakes Keras lets through into odd results: negative or non-integer limits."""
    for name, value, allow_none in (
        ("num_words", num_words, True),
        ("skip_top", skip_top, False),
        ("maxlen", maxlen, True),
    ):
        if value is None and allow_none:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(
                f"{func}({name}={value!r}): {name} must be a non-negative int"
                + (" or None" if allow_none else "")
                + "."
            )


def read_word_index(spec: _keras_files.KerasFile, path: str) -> dict[str, int]:
    """Keras's word-index JSON: word -> rank."""
    file = _keras_files.find_file(spec, path)
    try:
        with open(file, encoding="utf-8") as f:
            index: Any = json.load(f)
    except (OSError, ValueError) as exc:
        raise DatasetError(
            f"Could not read {file} as Keras's {spec.fname}: {exc}. To fix: delete it (unison then looks "
            f"elsewhere and downloads it from {spec.origin}) or replace it."
        ) from None
    if not isinstance(index, dict) or not all(isinstance(v, int) for v in index.values()):
        raise DatasetError(f"{file} is not a word index (a JSON object of word -> int). To fix: delete or replace it.")
    return index
