"""keras.utils.timeseries_dataset_from_array, split_dataset and the image helpers exported from keras.utils."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from unison import keras

pytestmark = pytest.mark.timeout(60)


def _all(ds: object) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = zip(*((np.asarray(x), np.asarray(y)) for x, y in ds))  # type: ignore[attr-defined]
    return np.concatenate(xs), np.concatenate(ys)


def test_keras_docstring_examples() -> None:
    # Keras's example 1: inputs data[:-10], targets data[10:], windows of 10.
    data = np.arange(100)
    ds = keras.utils.timeseries_dataset_from_array(data[:-10], data[10:], sequence_length=10)
    inputs, targets = next(iter(ds))
    assert np.array_equal(np.asarray(inputs[0]), data[:10]) and int(targets[0]) == 10
    assert tuple(inputs.shape) == (81, 10)  # 90 - 9 windows, one batch of at most 128
    # Keras's example 2: indices 0..98, sequence_length=10, sampling_rate=2, sequence_stride=3.
    x = keras.utils.timeseries_dataset_from_array(np.arange(99), None, 10, sequence_stride=3, sampling_rate=2)
    windows = np.concatenate([np.asarray(b) for b in x])
    assert windows[0].tolist() == list(range(0, 20, 2)) and windows[1].tolist() == list(range(3, 23, 2))
    assert windows[-1].tolist() == list(range(78, 98, 2)) and len(windows) == 27


def test_start_end_index_batches_and_shuffle() -> None:
    data = np.arange(50, dtype="float32").reshape(25, 2)
    targets = np.arange(25) * 10
    ds = keras.utils.timeseries_dataset_from_array(data, targets, 4, batch_size=5, start_index=3, end_index=20)
    sizes = [len(y) for _, y in ds]
    x, y = _all(ds)
    assert sizes == [5, 5, 4] and x.shape == (14, 4, 2) and x.dtype == np.float32
    assert x[0].tolist() == data[3:7].tolist() and y.tolist() == [10 * i for i in range(3, 17)]
    shuffled = keras.utils.timeseries_dataset_from_array(data, targets, 4, batch_size=5, shuffle=True, seed=2)
    sx, sy = _all(shuffled)
    assert sorted(sy.tolist()) == [10 * i for i in range(22)] and sy.tolist() != sorted(sy.tolist())
    for window, target in zip(sx, sy):  # each window still goes with the target at its start
        assert window[0].tolist() == data[target // 10].tolist()


def test_timeseries_mistakes() -> None:
    make = keras.utils.timeseries_dataset_from_array
    with pytest.raises(ValueError, match="sequence_length` must be a positive integer"):
        make(np.arange(10), None, 0)
    with pytest.raises(ValueError, match="`start_index` must be lower than `end_index`"):
        make(np.arange(10), None, 2, start_index=5, end_index=5)
    assert list(make(np.arange(5), None, 6)) == []  # no window fits: empty, as Keras
    # fewer targets than windows: as many windows as targets (Keras)
    x, y = _all(make(np.arange(10), np.arange(3) * 7, 2))
    assert x.tolist() == [[0, 1], [1, 2], [2, 3]] and y.tolist() == [0, 7, 14]


def test_split_dataset_sizes_shuffle_and_datasets() -> None:
    x, y = np.arange(10), np.arange(10) * 2
    left, right = keras.utils.split_dataset((x, y), left_size=0.7)
    assert [int(a) for a, _ in left] == list(range(7)) and [int(b) for _, b in right] == [14, 16, 18]
    left, right = keras.utils.split_dataset(np.arange(10), left_size=3, right_size=2)
    assert [int(v) for v in left] == [0, 1, 2] and [int(v) for v in right] == [8, 9]  # the last rows, as Keras
    left, right = keras.utils.split_dataset(np.arange(10), right_size=0.25, shuffle=True, seed=4)
    values = [int(v) for v in left] + [int(v) for v in right]
    assert sorted(values) == list(range(10)) and values != list(range(10)) and len(list(right)) == 2
    source = keras.utils.split_dataset(np.arange(6), left_size=4)[0]  # a Dataset splits again
    a, b = keras.utils.split_dataset(source, left_size=0.5)
    assert [int(v) for v in a] == [0, 1] and [int(v) for v in b] == [2, 3]
    with pytest.raises(ValueError, match="pass left_size, right_size"):
        keras.utils.split_dataset(np.arange(4))
    with pytest.raises(ValueError, match="more than the 4"):
        keras.utils.split_dataset(np.arange(4), left_size=3, right_size=2)
    with pytest.raises(ValueError, match="fraction in"):
        keras.utils.split_dataset(np.arange(4), left_size=1.5)


def test_image_helpers_exported_from_utils(tmp_path: Path) -> None:
    array = np.stack([np.full((3, 4), v, "float32") for v in (0, 128, 255)], axis=-1)
    path = str(tmp_path / "x.png")
    keras.utils.save_img(path, array, scale=False)
    loaded = keras.utils.img_to_array(keras.utils.load_img(path))
    assert loaded.shape == (3, 4, 3) and loaded[0, 0].tolist() == [0.0, 128.0, 255.0]
    img = keras.utils.array_to_img(torch.zeros(2, 2, 1).numpy(), scale=False)
    assert img.size == (2, 2) and keras.utils.load_img is keras.preprocessing.image.load_img
