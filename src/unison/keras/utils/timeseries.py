"""``keras.utils.timeseries_dataset_from_array``: sliding windows over an array as a ``tf.data``
dataset of ``(windows, targets)`` batches (Keras's rules).

Window ``i`` holds ``data[s, s + r, ..., s + (L - 1) * r]`` with ``s = start_index + p_i``,
``r = sampling_rate``, ``L = sequence_length`` and ``p_i = i * sequence_stride``; its target is
``targets[s]``. Windows are gathered lazily, batch by batch.

Example:
    >>> import numpy as np
    >>> ds = timeseries_dataset_from_array(np.arange(10), np.arange(10) * 10, sequence_length=3, batch_size=4)
    >>> x, y = next(iter(ds))
    >>> x.tolist(), y.tolist()
    ([[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5]], [0, 10, 20, 30])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.data import Dataset


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
    return int(value)


def _as_tensor(a: Any, what: str) -> torch.Tensor:
    if isinstance(a, torch.Tensor):
        return a.detach().cpu()
    array = np.asarray(a)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"timeseries_dataset_from_array: `{what}` must be numeric. Received dtype {array.dtype}.")
    return torch.from_numpy(np.ascontiguousarray(array))


def timeseries_dataset_from_array(
    data: Any,
    targets: Any,
    sequence_length: int,
    sequence_stride: int = 1,
    sampling_rate: int = 1,
    batch_size: int | None = 128,
    shuffle: bool = False,
    seed: int | None = None,
    start_index: int | None = None,
    end_index: int | None = None,
) -> Dataset:
    """Windows of ``data`` (and the target at each window's start), batched.

    Args:
        data: array whose first axis is time.
        targets: ``targets[i]`` is the target of the window starting at ``data[i]``; ``None``
            yields windows only.
        sequence_length: time steps per window.
        sequence_stride: offset between consecutive windows' starts.
        sampling_rate: offset between time steps inside a window.
        batch_size: windows per batch (``None``: single windows).
        shuffle: shuffle the windows (with ``seed``).
        seed: shuffling seed.
        start_index, end_index: use ``data[start_index:end_index]`` only (``end_index`` excluded).

    Returns:
        A ``Dataset`` of ``(batch, sequence_length, ...)`` windows, or ``(windows, targets)``.
    """
    sequence_length = _positive("sequence_length", sequence_length)
    sequence_stride = _positive("sequence_stride", sequence_stride)
    sampling_rate = _positive("sampling_rate", sampling_rate)
    if batch_size is not None:
        batch_size = _positive("batch_size", batch_size)
    values = _as_tensor(data, "data")
    n = len(values)
    start = 0 if start_index is None else start_index
    end = n if end_index is None else end_index
    for name, value in (("start_index", start_index), ("end_index", end_index)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= n):
            raise ValueError(f"`{name}` must be an integer in [0, {n}] (len(data)). Received: {name}={value!r}")
    if start >= end:
        raise ValueError(
            f"`start_index` must be lower than `end_index`. Received: start_index={start}, end_index={end}"
        )
    target_values = None if targets is None else _as_tensor(targets, "targets")
    num_seqs = end - start - (sequence_length - 1) * sampling_rate
    if target_values is not None:  # Keras: fewer targets than windows -> as many windows as targets
        num_seqs = min(num_seqs, len(target_values) - start)
    # no window fits (too little data): an empty dataset, as Keras (np.arange of a negative stop)
    positions = np.arange(0, max(num_seqs, 0), sequence_stride, dtype=np.int64)
    if shuffle:
        seed = seed if seed is not None else int(np.random.randint(1_000_000))
        np.random.RandomState(seed).shuffle(positions)
    offsets = torch.arange(0, sequence_length * sampling_rate, sampling_rate)

    def window(p: Any) -> Any:
        first = start + int(p)
        x = values[first + offsets]
        return x if target_values is None else (x, target_values[first])

    dataset = Dataset.from_tensor_slices(positions).map(window)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=(batch_size or 128) * 8, seed=seed)
    if batch_size is not None:
        dataset = dataset.batch(batch_size)
    return dataset.prefetch(-1)


__all__ = ["timeseries_dataset_from_array"]
