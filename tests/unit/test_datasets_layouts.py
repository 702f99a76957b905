"""Where Keras users already have the data: Debian's/Keras's `fashion-mnist/`, Keras's `mnist.npz`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_datasets import _write_fake_set, isolated_env, refused_port  # noqa: F401  (fixtures)

from unison.errors import DatasetError
from unison.keras.datasets import _fetch, fashion_mnist, mnist


def _npz(path: Path, n: int = 4) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    arrays = {
        "x_train": rng.integers(0, 256, (n, 28, 28), dtype=np.uint8),
        "y_train": np.arange(n, dtype=np.uint8),
        "x_test": rng.integers(0, 256, (2, 28, 28), dtype=np.uint8),
        "y_test": np.arange(2, dtype=np.uint8),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return arrays


def test_fashion_mnist_found_under_debian_and_keras_folder_name(monkeypatch, tmp_path) -> None:
    arrays = _write_fake_set(tmp_path / "share" / "fashion-mnist")
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "share"))
    (x_train, y_train), (x_test, _) = fashion_mnist.load_data()
    assert np.array_equal(x_train, arrays[_fetch.TRAIN_IMAGES]) and x_test.shape == (3, 28, 28)
    assert np.array_equal(y_train, arrays[_fetch.TRAIN_LABELS])


def test_fashion_mnist_underscore_name_still_first(monkeypatch, tmp_path) -> None:
    _write_fake_set(tmp_path / "share" / "fashion-mnist", n_train=5)
    _write_fake_set(tmp_path / "share" / "fashion_mnist", n_train=7)
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "share"))
    assert fashion_mnist.load_data()[0][0].shape == (7, 28, 28)


def test_mnist_reads_keras_cache_under_home(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KERAS_HOME", raising=False)
    arrays = _npz(tmp_path / "home" / ".keras" / "datasets" / "mnist.npz")
    (x_train, y_train), (x_test, y_test) = mnist.load_data()  # no data dir, empty cache, no network
    assert np.array_equal(x_train, arrays["x_train"]) and np.array_equal(y_test, arrays["y_test"])


def test_mnist_path_argument_and_keras_home(monkeypatch, tmp_path) -> None:
    arrays = _npz(tmp_path / "elsewhere" / "digits.npz", n=6)
    assert mnist.load_data(path=str(tmp_path / "elsewhere" / "digits.npz"))[0][0].shape == (6, 28, 28)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    _npz(tmp_path / "kh" / "datasets" / "other.npz", n=3)
    assert mnist.load_data(path="other.npz")[0][1].tolist() == [0, 1, 2]
    assert arrays["x_train"].shape == (6, 28, 28)
    with pytest.raises(DatasetError, match="does not exist"):
        mnist.load_data(path="missing.npz")


def test_data_dir_wins_over_keras_cache_and_bad_npz_is_named(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _npz(tmp_path / "home" / ".keras" / "datasets" / "mnist.npz")
    _write_fake_set(tmp_path / "data" / "mnist", n_train=5)
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    assert mnist.load_data()[0][0].shape == (5, 28, 28)
    bad = tmp_path / "bad.npz"
    np.savez(bad, x_train=np.zeros((2, 3)))
    with pytest.raises(DatasetError, match=str(bad)):
        mnist.load_data(path=str(bad))
