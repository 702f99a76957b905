"""IMDB and Reuters in Keras's formats: shuffling, index shifting, num_words/skip_top/maxlen, errors.

Expected values are worked out by hand from Keras's documented steps (shuffle with
``RandomState(seed)``, prepend ``start_char``, add ``index_from``, drop texts not shorter than
``maxlen``, map indices outside ``[skip_top, num_words)`` to ``oov_char``). ``RandomState(113)``
shuffles ``arange(3)`` to [2, 0, 1], then ``arange(2)`` to [1, 0]; ``arange(5)`` to [1, 0, 3, 2, 4];
``RandomState(1)``: [0, 2, 1], then [1, 0].
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_datasets_cifar import isolated  # noqa: F401  (autouse fixture: no data dir, no network)

from unison.errors import DatasetError
from unison.keras.datasets import _fetch, imdb, reuters


def _ragged(seqs: list[list[int]]) -> np.ndarray:
    out = np.empty(len(seqs), dtype=object)
    out[:] = seqs
    return out


def write_imdb(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(
        folder / "imdb.npz",
        x_train=_ragged([[1, 2, 3], [4, 5], [6]]),
        y_train=np.array([1, 0, 1]),
        x_test=_ragged([[7, 8], [9]]),
        y_test=np.array([0, 1]),
    )


def write_reuters(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "reuters.npz", x=_ragged([[1, 2], [3], [4, 5, 6], [7], [8, 9]]), y=np.arange(5))


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    write_imdb(tmp_path / "data" / "imdb")
    write_reuters(tmp_path / "data" / "reuters")
    return tmp_path / "data"


def _lists(x: np.ndarray) -> list[list[int]]:
    assert x.dtype == object and x.ndim == 1
    return [list(s) for s in x]


def test_imdb_defaults(data_dir: Path) -> None:
    (x_train, y_train), (x_test, y_test) = imdb.load_data()
    # Shuffled [[6], [1,2,3], [4,5]] / [[9], [7,8]]; +3 and a leading 1; the largest index (12) is OOV.
    assert _lists(x_train) == [[1, 9], [1, 4, 5, 6], [1, 7, 8]]
    assert _lists(x_test) == [[1, 2], [1, 10, 11]]
    assert y_train.tolist() == [1, 1, 0] and y_test.tolist() == [1, 0]
    assert all(type(w) is int for s in x_train for w in s)


@pytest.mark.parametrize(
    ("kwargs", "train", "test"),
    [
        ({"num_words": 10}, [[1, 9], [1, 4, 5, 6], [1, 7, 8]], [[1, 2], [1, 2, 2]]),
        ({"num_words": 10, "skip_top": 5}, [[2, 9], [2, 2, 5, 6], [2, 7, 8]], [[2, 2], [2, 2, 2]]),
        ({"num_words": 10, "oov_char": None}, [[1, 9], [1, 4, 5, 6], [1, 7, 8]], [[1], [1]]),
        ({"start_char": None, "index_from": 0}, [[6], [1, 2, 3], [4, 5]], [[2], [7, 8]]),
        ({"seed": 1, "num_words": 100}, [[1, 4, 5, 6], [1, 9], [1, 7, 8]], [[1, 12], [1, 10, 11]]),
    ],
)
def test_imdb_options(data_dir: Path, kwargs: dict[str, Any], train: list[list[int]], test: list[list[int]]) -> None:
    (x_train, _), (x_test, _) = imdb.load_data(**kwargs)
    assert _lists(x_train) == train and _lists(x_test) == test


def test_imdb_maxlen_keeps_strictly_shorter(data_dir: Path) -> None:
    (x_train, y_train), (x_test, y_test) = imdb.load_data(maxlen=3)
    assert _lists(x_train) == [[1, 9]] and y_train.tolist() == [1]
    assert _lists(x_test) == [[1, 2]] and y_test.tolist() == [1]  # 12 is the largest kept index: OOV
    with pytest.raises(ValueError, match="no review is shorter than 2 words .* Increase maxlen"):
        imdb.load_data(maxlen=2)


def test_imdb_argument_errors(data_dir: Path) -> None:
    with pytest.raises(ValueError, match="num_words must be a non-negative int or None"):
        imdb.load_data(num_words=-5)
    with pytest.raises(ValueError, match="skip_top must be a non-negative int"):
        imdb.load_data(skip_top=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['bogus'\\]"):
        imdb.load_data(bogus=1)
    assert _lists(imdb.load_data(nb_words=10)[1][0]) == [[1, 2], [1, 2, 2]]  # Keras 1's spelling


def test_word_index_and_decoding(data_dir: Path) -> None:
    (data_dir / "imdb" / "imdb_word_index.json").write_text(json.dumps({"the": 1, "a": 2, "film": 6}))
    index = imdb.get_word_index()
    assert index == {"the": 1, "a": 2, "film": 6}
    inverted = {i + 3: w for w, i in index.items()}  # Keras's documented decoding recipe
    (x_train, _), _ = imdb.load_data(num_words=100)
    assert [inverted.get(i, "?") for i in x_train[0]] == ["?", "film"]
    (data_dir / "reuters" / "reuters_word_index.json").write_text("[1, 2]")
    with pytest.raises(DatasetError, match="not a word index"):
        reuters.get_word_index()


def test_keras_cache_and_path_argument(tmp_path: Path) -> None:
    write_imdb(tmp_path / "keras" / "datasets")  # KERAS_HOME=tmp/keras (fixture)
    assert len(imdb.load_data()[0][0]) == 3
    write_reuters(tmp_path / "elsewhere")
    assert len(reuters.load_data(path=str(tmp_path / "elsewhere" / "reuters.npz"))[1][0]) == 1
    with pytest.raises(DatasetError, match="does not exist"):
        reuters.load_data(path=str(tmp_path / "nowhere" / "reuters.npz"))


def test_missing_file_names_every_place(tmp_path: Path, isolated: list[str]) -> None:  # noqa: F811
    with pytest.raises(DatasetError) as info:
        imdb.get_word_index()
    msg = str(info.value)
    assert isolated == [imdb._WORD_INDEX.origin]
    for part in (
        str(tmp_path / "system" / "imdb" / "imdb_word_index.json"),
        str(tmp_path / "keras" / "datasets" / "imdb_word_index.json"),
        str(tmp_path / "cache" / "imdb" / "imdb_word_index.json"),
        "network disabled",
        "To fix",
    ):
        assert part in msg, part


def test_reuters_split_and_options(data_dir: Path) -> None:
    (x_train, y_train), (x_test, y_test) = reuters.load_data()
    # Shuffled [[3],[1,2],[7],[4,5,6],[8,9]], y [1,0,3,2,4]; 80% of 5 -> 4 training newswires.
    assert _lists(x_train) == [[1, 6], [1, 4, 5], [1, 10], [1, 7, 8, 9]]
    assert _lists(x_test) == [[1, 11, 2]] and y_train.tolist() == [1, 0, 3, 2] and y_test.tolist() == [4]
    (x_train, _), (x_test, _) = reuters.load_data(test_split=0.5)
    assert (len(x_train), len(x_test)) == (2, 3)
    (x_train, y_train), (x_test, y_test) = reuters.load_data(maxlen=3)
    assert _lists(x_train) == [[1, 6]] and _lists(x_test) == [[1, 2]] and y_test.tolist() == [3]
    (x_train, _), _ = reuters.load_data(num_words=6, skip_top=2, oov_char=None, test_split=0.0)
    assert _lists(x_train) == [[], [4, 5], [], [], []]
    assert len(reuters.load_data(test_split=1.0)[0][0]) == 0  # Keras takes 1.0: everything is test data
    with pytest.raises(ValueError, match=r"test_split must be in \[0, 1\]"):
        reuters.load_data(test_split=1.5)
    assert reuters.get_label_names()[:4] == ("cocoa", "grain", "veg-oil", "earn")
    assert len(reuters.get_label_names()) == 46


def test_malicious_npz_is_refused_not_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            import os

            return (os.system, (f"touch {marker}",))

    (tmp_path / "data" / "imdb").mkdir(parents=True)
    np.savez(
        tmp_path / "data" / "imdb" / "imdb.npz",
        x_train=_ragged([[1]]),
        y_train=np.array([1]),
        x_test=np.array([Evil()], dtype=object),
        y_test=np.array([0]),
    )
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    with pytest.raises(
        DatasetError, match=r"imdb.npz as Keras's imdb.npz: UnsafePickleError: refusing to load (posix|os)\.system"
    ):
        imdb.load_data()
    assert not marker.exists()


def test_corrupt_npz(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    (tmp_path / "data" / "reuters").mkdir(parents=True)
    (tmp_path / "data" / "reuters" / "reuters.npz").write_bytes(b"garbage")
    with pytest.raises(DatasetError, match="Could not read .*reuters.npz as Keras's reuters.npz: BadZipFile"):
        reuters.load_data()
    np.savez(tmp_path / "data" / "reuters" / "reuters.npz", x_train=np.zeros(2))
    with pytest.raises(DatasetError, match=r"lacks the arrays \['x', 'y'\]"):
        reuters.load_data()
    np.savez(tmp_path / "data" / "reuters" / "reuters.npz", x=_ragged([[1], [2]]), y=np.zeros(3))
    with pytest.raises(DatasetError, match="one label per text"):
        reuters.load_data()
    np.savez(tmp_path / "data" / "reuters" / "reuters.npz", x=_ragged(["ab", "c"]), y=np.zeros(2))
    with pytest.raises(DatasetError, match="a text is a str, expected a list of word ranks"):
        reuters.load_data()
    # Texts of one length stored as a 2-D int array: rows are texts (as Keras iterates them).
    np.savez(tmp_path / "data" / "reuters" / "reuters.npz", x=np.array([[1, 2], [3, 4]]), y=np.array([0, 1]))
    (x_train, _), _ = reuters.load_data(test_split=0.0, seed=0, num_words=100)
    assert sorted(_lists(x_train)) == [[1, 4, 5], [1, 6, 7]]
