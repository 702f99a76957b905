"""Boston and California housing in Keras's ``.npz`` format: seeded split, versions, errors.

``RandomState(113)`` shuffles ``arange(10)`` to [9, 3, 6, 1, 0, 7, 4, 8, 2, 5].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_datasets_cifar import isolated  # noqa: F401  (autouse fixture: no data dir, no network)

from unison.errors import DatasetError
from unison.keras.datasets import _fetch, boston_housing, california_housing


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    (tmp_path / "data" / "boston_housing").mkdir(parents=True)
    x = np.arange(130, dtype=np.float64).reshape(10, 13)
    np.savez(tmp_path / "data" / "boston_housing" / "boston_housing.npz", x=x, y=np.arange(10.0) + 0.5)
    (tmp_path / "data" / "california_housing").mkdir(parents=True)
    cx = np.repeat(np.arange(700, dtype=np.float32)[:, None], 8, axis=1)
    np.savez(tmp_path / "data" / "california_housing" / "california_housing.npz", x=cx, y=np.arange(700.0))
    return tmp_path / "data"


def test_boston_seeded_split(data_dir: Path) -> None:
    (x_train, y_train), (x_test, y_test) = boston_housing.load_data()
    assert x_train.shape == (8, 13) and x_test.shape == (2, 13) and x_train.dtype == np.float64
    assert y_train.tolist() == [9.5, 3.5, 6.5, 1.5, 0.5, 7.5, 4.5, 8.5] and y_test.tolist() == [2.5, 5.5]
    assert x_train[0, 0] == 9 * 13 and x_test[1, 12] == 5 * 13 + 12
    (x_train, _), (x_test, _) = boston_housing.load_data(test_split=0.35, seed=0)
    assert len(x_train) == 6 and len(x_test) == 4  # int(10 * 0.65) = 6
    assert sorted(
        boston_housing.load_data(seed=7)[0][1].tolist() + boston_housing.load_data(seed=7)[1][1].tolist()
    ) == [v + 0.5 for v in range(10)]


def test_california_versions(data_dir: Path) -> None:
    (x_train, y_train), (x_test, y_test) = california_housing.load_data()
    assert x_train.shape == (560, 8) and x_test.shape == (140, 8) and x_train.dtype == np.float32
    (x_train, y_train), (x_test, y_test) = california_housing.load_data(version="small")
    assert (len(x_train), len(x_test)) == (480, 120)
    assert sorted(y_train.tolist() + y_test.tolist()) == list(range(600))  # the first 600, before shuffling
    assert (x_train[:, 3] == y_train).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: california_housing.load_data(version="medium"), "version must be 'large'"),
        (lambda: california_housing.load_data(test_split=1.0), r"must be a number in \[0, 1\)"),
        (lambda: boston_housing.load_data(test_split=-0.1), r"must be a number in \[0, 1\)"),
    ],
)
def test_argument_errors(data_dir: Path, call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_wrong_shape_and_pickled_arrays_refused(data_dir: Path) -> None:
    np.savez(data_dir / "boston_housing" / "boston_housing.npz", x=np.zeros((4, 8)), y=np.zeros(4))
    with pytest.raises(DatasetError, match=r"x \(4, 8\), y \(4,\); expected x \(N, 13\)"):
        boston_housing.load_data()
    ragged = np.empty(1, dtype=object)
    ragged[0] = [1]
    np.savez(data_dir / "boston_housing" / "boston_housing.npz", x=ragged, y=np.zeros(1))
    with pytest.raises(DatasetError, match="refusing to load an object array"):
        boston_housing.load_data()


def test_missing_everywhere(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="boston_housing.npz is not on this machine") as info:
        boston_housing.load_data()
    assert str(tmp_path / "keras" / "datasets" / "boston_housing.npz") in str(info.value)
