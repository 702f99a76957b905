"""Keras 2's sequence tools: ``TimeseriesGenerator``, ``make_sampling_table``, ``skipgrams``.

``TimeseriesGenerator`` is a ``keras.utils.Sequence`` of ``(samples, targets)`` batches of
windows, as tf_keras's: window ``k`` ends before row ``start_index + length + k * stride``.
``skipgrams`` draws from Python's ``random`` exactly as tf_keras does (one ``random.random()`` per
word when a sampling table is given, one shuffle of the words and one ``randint`` per negative
pair, then the same seed for both shuffles), so after the same ``random.seed`` the pairs are equal.

Example:
    >>> import numpy as np
    >>> gen = TimeseriesGenerator(np.arange(6), np.arange(6), length=2, batch_size=2)
    >>> len(gen), gen[0][0].tolist(), gen[0][1].tolist()
    (2, [[0, 1], [1, 2]], [2, 3])
    >>> skipgrams([1, 2], vocabulary_size=3, negative_samples=0.0, shuffle=False)
    ([[1, 2], [2, 1]], [1, 1])
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np

from unison.keras.utils.py_dataset import Sequence


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{what}` must be a positive integer. Received: {what}={value!r}")
    return int(value)


class TimeseriesGenerator(Sequence):
    """Batches of ``length``-long windows of ``data`` and the ``targets`` row after each window.

    Args:
        data: an indexable of rows (a list or array), axis 0 the time.
        targets: one target per row of ``data``.
        length: the window's length in rows (before ``sampling_rate``).
        sampling_rate: keep every ``sampling_rate``-th row of a window.
        stride: rows between the ends of two consecutive windows.
        start_index, end_index: the rows that may end a window (``end_index`` included).
        shuffle: draw the window ends at random (NumPy's global generator) instead of in order.
        reverse: each window in reverse time order.
        batch_size: windows per batch.
    """

    def __init__(
        self,
        data: Any,
        targets: Any,
        length: int,
        sampling_rate: int = 1,
        stride: int = 1,
        start_index: int = 0,
        end_index: int | None = None,
        shuffle: bool = False,
        reverse: bool = False,
        batch_size: int = 128,
    ) -> None:
        super().__init__()
        if len(data) != len(targets):
            raise ValueError(
                "Data and targets have to be of same length. "
                f"Data length is {len(data)} while target length is {len(targets)}"
            )
        self.data, self.targets = data, targets
        self.length = _positive_int(length, "length")
        self.sampling_rate = _positive_int(sampling_rate, "sampling_rate")
        self.stride = _positive_int(stride, "stride")
        self.batch_size = _positive_int(batch_size, "batch_size")
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse = shuffle, reverse
        if self.start_index > self.end_index:
            raise ValueError(
                f"`start_index+length={self.start_index} > end_index={self.end_index}` is disallowed, as no part "
                "of the sequence would be left to be used as current step. Use a shorter `length` or more data."
            )

    def __len__(self) -> int:
        span = self.batch_size * self.stride
        return (self.end_index - self.start_index + span) // span

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride, self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length : row : self.sampling_rate] for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        return (samples[:, ::-1, ...], targets) if self.reverse else (samples, targets)

    def get_config(self) -> dict[str, Any]:
        """The generator's arguments (data and targets as JSON-ready lists), as tf_keras's."""
        return {
            "data": json.dumps(np.asarray(self.data).tolist()),
            "targets": json.dumps(np.asarray(self.targets).tolist()),
            "length": self.length,
            "sampling_rate": self.sampling_rate,
            "stride": self.stride,
            "start_index": self.start_index,
            "end_index": self.end_index,
            "shuffle": self.shuffle,
            "reverse": self.reverse,
            "batch_size": self.batch_size,
        }

    def to_json(self, **kwargs: Any) -> str:
        """``{"class_name": "TimeseriesGenerator", "config": get_config()}`` as JSON."""
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()}, **kwargs)


def make_sampling_table(size: int, sampling_factor: float = 1e-5) -> np.ndarray:
    """Word2vec's keep-probabilities for word ranks ``0..size-1`` (Zipf's law, as tf_keras).

    Example:
        >>> make_sampling_table(3, 0.5).round(3).tolist()
        [0.705, 0.705, 1.0]
    """
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(
    sequence: Any,
    vocabulary_size: int,
    window_size: int = 4,
    negative_samples: float = 1.0,
    shuffle: bool = True,
    categorical: bool = False,
    sampling_table: Any = None,
    seed: int | None = None,
) -> tuple[list[list[int]], list[Any]]:
    """Word pairs within ``window_size`` of each other (label 1) and random pairs (label 0).

    Index 0 is padding and never paired. ``negative_samples`` negatives per positive pair, each
    a shuffled first word with a random word of ``[1, vocabulary_size)``; ``categorical`` labels
    are ``[0, 1]`` / ``[1, 0]``.
    """
    couples: list[list[int]] = []
    labels: list[Any] = []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0 and couples:
        num_negative = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)] for i in range(num_negative)]
        labels += [[1, 0] if categorical else 0 for _ in range(num_negative)]
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels


__all__ = ["TimeseriesGenerator", "make_sampling_table", "skipgrams"]
