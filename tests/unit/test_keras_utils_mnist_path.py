"""``mnist.load_data(path=...)`` names Keras's cache file: a missing one falls back to the usual lookup."""

from __future__ import annotations

import numpy as np
import pytest
from test_datasets import _write_fake_set, isolated_env, refused_port  # noqa: F401  (fixtures)

from unison.errors import DatasetError
from unison.keras.datasets import _fetch, mnist


def test_missing_per_rank_cache_file_falls_back_to_data_dir(monkeypatch, tmp_path) -> None:
    # Horovod's examples: mnist.load_data(path="mnist-%d.npz" % hvd.rank())
    arrays = _write_fake_set(tmp_path / "data" / "mnist", n_train=5)
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    (x_train, y_train), (x_test, _) = mnist.load_data(path="mnist-%d.npz" % 1)  # noqa: UP031 (as Horovod spells it)
    assert np.array_equal(x_train, arrays[_fetch.TRAIN_IMAGES])
    assert np.array_equal(y_train, arrays[_fetch.TRAIN_LABELS]) and x_test.shape[1:] == (28, 28)


def test_missing_cache_file_and_no_copy_names_both(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    with pytest.raises(DatasetError, match=r"mnist-0\.npz.*does not exist.*usual lookup") as info:
        mnist.load_data(path="mnist-0.npz")
    assert str(tmp_path / "kh" / "datasets" / "mnist-0.npz") in str(info.value)
