"""CIFAR-10/100 in Keras's formats: every place they are looked for, the layout returned, each error.

The fixtures are written exactly as the original ``cifar-*-python.tar.gz`` holds them: Python 2
pickles (protocol 2, ``str`` as 8-bit strings, ``numpy.core.multiarray._reconstruct``) of dicts
with a ``(N, 3072)`` uint8 ``data`` array, R then G then B planes per row.
"""

from __future__ import annotations

import io
import pickle
import struct
import tarfile
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from unison.errors import DatasetError
from unison.keras.datasets import _fetch, cifar10, cifar100
from unison.keras.utils import file_utils


class _Py2Pickler(pickle._Pickler):  # type: ignore[name-defined,misc]
    """Writes str and bytes as Python 2 8-bit strings, as the original CIFAR batches are."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

    def _save_py2_str(self, obj: str | bytes) -> None:
        raw = obj.encode("latin1") if isinstance(obj, str) else obj
        head = b"U" + bytes([len(raw)]) if len(raw) < 256 else b"T" + struct.pack("<I", len(raw))
        self.write(head + raw)
        self.memoize(obj)

    dispatch[bytes] = _save_py2_str
    dispatch[str] = _save_py2_str


def py2_pickle(obj: Any) -> bytes:
    buf = io.BytesIO()
    _Py2Pickler(buf, protocol=2).dump(obj)
    return buf.getvalue().replace(b"numpy._core.multiarray\n", b"numpy.core.multiarray\n")


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """No data dir, no Debian folder, empty Keras and unison caches, and no network."""
    monkeypatch.delenv(_fetch.ENV_DATA_DIR, raising=False)
    monkeypatch.setattr(_fetch, "SYSTEM_DATA_DIR", tmp_path / "system")
    monkeypatch.setenv(_fetch.ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    urls: list[str] = []

    def no_network(url: str, *args: object, **kwargs: object) -> None:
        urls.append(url)
        raise urllib.error.URLError("network disabled in tests")

    monkeypatch.setattr(file_utils.urllib.request, "urlopen", no_network)
    yield urls


def _cifar10_arrays(n: int = 2, seed: int = 0) -> tuple[list[np.ndarray], list[list[int]]]:
    rng = np.random.default_rng(seed)
    data = [rng.integers(0, 256, (n, 3072), dtype=np.uint8) for _ in range(6)]
    labels = [[int(v) for v in rng.integers(0, 10, n)] for _ in range(6)]
    return data, labels


def write_cifar10(folder: Path, n: int = 2, seed: int = 0) -> tuple[list[np.ndarray], list[list[int]]]:
    """``cifar-10-batches-py``'s six batches (``n`` images each) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    data, labels = _cifar10_arrays(n, seed)
    names = [*(f"data_batch_{i}" for i in range(1, 6)), "test_batch"]
    for name, d, y in zip(names, data, labels, strict=True):
        batch = {"batch_label": f"{name} of 6", "labels": y, "data": d, "filenames": [b"a.png"] * n}
        (folder / name).write_bytes(py2_pickle(batch))
    return data, labels


def write_cifar100(folder: Path, n: int = 3) -> dict[str, dict[str, Any]]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    out = {}
    for name in ("train", "test"):
        batch = {
            "filenames": [b"x.png"] * n,
            "batch_label": f"{name} batch",
            "fine_labels": [int(v) for v in rng.integers(0, 100, n)],
            "coarse_labels": [int(v) for v in rng.integers(0, 20, n)],
            "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
        }
        (folder / name).write_bytes(py2_pickle(batch))
        out[name] = batch
    return out


def _tar(folder: Path, arcname: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(dest, "w:gz") as t:
        t.add(folder, arcname=arcname)


def test_cifar10_layout_values_and_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data, labels = write_cifar10(tmp_path / "data" / "cifar10" / "cifar-10-batches-py")
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    assert x_train.shape == (10, 32, 32, 3) and x_test.shape == (2, 32, 32, 3)
    assert y_train.shape == (10, 1) and y_test.shape == (2, 1)
    assert x_train.dtype == y_train.dtype == x_test.dtype == y_test.dtype == np.uint8
    # Row layout: 1024 red, then 1024 green, then 1024 blue values, each plane row-major.
    row = data[0][0]
    assert x_train[0, 0, 0].tolist() == [row[0], row[1024], row[2048]]
    assert x_train[0, 1, 2, 1] == row[1024 + 32 + 2]
    assert x_train[3, 31, 31, 2] == data[1][1][3071]  # batch 2, second image: batches in order, unshuffled
    assert y_train[:, 0].tolist() == sum(labels[:5], [])
    assert y_test[:, 0].tolist() == labels[5]
    assert x_test[1].tolist() == data[5][1].reshape(3, 32, 32).transpose(1, 2, 0).tolist()
    assert x_train.flags["C_CONTIGUOUS"]


def test_cifar10_folder_directly_in_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_cifar10(tmp_path / "data" / "cifar10", n=1)
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    assert cifar10.load_data()[0][0].shape == (5, 32, 32, 3)


@pytest.mark.parametrize(
    "layout",
    ["cifar-10-batches-py", "cifar-10-batches-py/cifar-10-batches-py"],  # Keras 2's, Keras 3's extraction
)
def test_cifar10_found_in_keras_cache(tmp_path: Path, layout: str) -> None:
    write_cifar10(tmp_path / "keras" / "datasets" / layout, n=1)
    assert cifar10.load_data()[1][0].shape == (1, 32, 32, 3)


@pytest.mark.parametrize("archive", ["cifar-10-batches-py.tar.gz", "cifar-10-batches-py_archive"])
def test_cifar10_extracts_keras_cached_tarball_into_unison_cache(tmp_path: Path, archive: str) -> None:
    data, _ = write_cifar10(tmp_path / "src", n=1)
    _tar(tmp_path / "src", "cifar-10-batches-py", tmp_path / "keras" / "datasets" / archive)
    (_, _), (x_test, _) = cifar10.load_data()
    assert x_test[0, 0, 0, 0] == data[5][0][0]
    assert (tmp_path / "cache" / "cifar10" / "cifar-10-batches-py" / "test_batch").is_file()


def test_cifar10_download_failure_names_every_place(tmp_path: Path, isolated: list[str]) -> None:
    with pytest.raises(DatasetError) as info:
        cifar10.load_data()
    msg = str(info.value)
    assert isolated == [cifar10._SPEC.origin]
    for part in (
        "UNISON_DATA_DIR: not set",
        str(tmp_path / "system" / "cifar10"),
        str(tmp_path / "keras" / "datasets"),
        str(tmp_path / "cache" / "cifar10"),
        "network disabled in tests",
        "To fix",
        "cifar-10-python.tar.gz",
    ):
        assert part in msg, part


def test_cifar10_download_is_verified_and_extracted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import dataclasses
    import hashlib

    data, _ = write_cifar10(tmp_path / "src", n=1)
    _tar(tmp_path / "src", "cifar-10-batches-py", tmp_path / "served.tar.gz")
    body = (tmp_path / "served.tar.gz").read_bytes()

    class _Response(io.BytesIO):
        headers = {"Content-Length": str(len(body))}

    monkeypatch.setattr(file_utils.urllib.request, "urlopen", lambda url, timeout=None: _Response(body))
    with pytest.raises(DatasetError, match="does not match its expected hash"):
        cifar10.load_data()  # Keras's real hash: the served fake is refused, nothing kept
    assert not (tmp_path / "cache" / "cifar10" / "cifar-10-python.tar.gz").exists()
    spec = dataclasses.replace(cifar10._SPEC, file_hash=hashlib.sha256(body).hexdigest())
    monkeypatch.setattr(cifar10, "_SPEC", spec)
    assert cifar10.load_data()[0][0][0, 0, 0, 0] == data[0][0][0]


def test_cifar100_fine_and_coarse(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    batches = write_cifar100(tmp_path / "data" / "cifar100" / "cifar-100-python")
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    (x_train, y_train), (x_test, y_test) = cifar100.load_data()
    assert x_train.shape == (3, 32, 32, 3) and y_train.shape == (3, 1) and y_train.dtype == np.int64
    assert y_train[:, 0].tolist() == batches["train"]["fine_labels"]
    assert y_test[:, 0].tolist() == batches["test"]["fine_labels"]
    (_, y_coarse), _ = cifar100.load_data(label_mode="coarse")
    assert y_coarse[:, 0].tolist() == batches["train"]["coarse_labels"]
    assert x_test[2, 5, 7, 2] == batches["test"]["data"][2][2048 + 5 * 32 + 7]


def test_cifar100_keras3_cache_layout(tmp_path: Path) -> None:
    write_cifar100(tmp_path / "keras" / "datasets" / "cifar-100-python-target" / "cifar-100-python", n=2)
    assert cifar100.load_data()[0][0].shape == (2, 32, 32, 3)


def test_cifar100_bad_label_mode() -> None:
    with pytest.raises(ValueError, match='label_mode must be "fine"'):
        cifar100.load_data(label_mode="medium")


def test_malicious_batch_is_refused_not_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "data" / "cifar10"
    write_cifar10(folder, n=1)
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            import os

            return (os.system, (f"touch {marker}",))

    (folder / "data_batch_3").write_bytes(py2_pickle({"data": Evil(), "labels": [0]}))
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    with pytest.raises(DatasetError, match=r"data_batch_3: refusing to load (posix|os|nt)\.system"):
        cifar10.load_data()
    assert not marker.exists()


def test_corrupt_batches(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "data" / "cifar10"
    write_cifar10(folder, n=1)
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    (folder / "test_batch").write_bytes(b"not a pickle")
    with pytest.raises(DatasetError, match="Could not read the CIFAR batch .*test_batch"):
        cifar10.load_data()
    (folder / "test_batch").write_bytes(py2_pickle({"data": np.zeros((2, 10), np.uint8), "labels": [0, 1]}))
    with pytest.raises(DatasetError, match=r"no 'data' array of shape \(N, 3072\) \(got \(2, 10\) uint8\)"):
        cifar10.load_data()
    (folder / "test_batch").write_bytes(py2_pickle({"data": np.zeros((2, 3072), np.uint8), "labels": [0]}))
    with pytest.raises(DatasetError, match="no 'labels' list of 2 labels"):
        cifar10.load_data()
    (folder / "test_batch").write_bytes(py2_pickle({"data": np.zeros((1, 3072), np.uint8), "labels": [300]}))
    with pytest.raises(DatasetError, match="outside 0-255"):
        cifar10.load_data()


def test_tarball_without_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "readme").write_text("x")
    _tar(tmp_path / "src", "other", tmp_path / "data" / "cifar10" / "cifar-10-python.tar.gz")
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    with pytest.raises(DatasetError, match="no complete cifar-10-batches-py/ folder"):
        cifar10.load_data()


def test_cifar10_binary_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data, labels = _cifar10_arrays(n=2)
    src = tmp_path / "src"
    src.mkdir()
    names = [*(f"data_batch_{i}.bin" for i in range(1, 6)), "test_batch.bin"]
    for name, d, y in zip(names, data, labels, strict=True):
        (src / name).write_bytes(b"".join(bytes([label]) + row.tobytes() for label, row in zip(y, d, strict=True)))
    _tar(src, "cifar-10-batches-bin", tmp_path / "data" / "cifar10" / "cifar-10-binary.tar.gz")
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    assert x_train.shape == (10, 32, 32, 3) and y_train[:, 0].tolist() == sum(labels[:5], [])
    assert x_test[1, 2, 3].tolist() == [data[5][1][2 * 32 + 3 + c * 1024] for c in range(3)]
    (src / "test_batch.bin").write_bytes(b"\x01" * 100)
    _tar(src, "cifar-10-batches-bin", tmp_path / "data" / "cifar10" / "cifar-10-binary.tar.gz")
    import shutil

    shutil.rmtree(tmp_path / "cache")
    with pytest.raises(DatasetError, match="not a whole number of 3073-byte records"):
        cifar10.load_data()


def test_cifar100_binary_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "data" / "cifar100" / "cifar-100-binary"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(3)
    pixels = rng.integers(0, 256, (2, 3072), dtype=np.uint8)
    for name in ("train.bin", "test.bin"):  # coarse 4 and 17, fine 40 and 99
        (folder / name).write_bytes(bytes([4, 40]) + pixels[0].tobytes() + bytes([17, 99]) + pixels[1].tobytes())
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))
    (x_train, y_fine), _ = cifar100.load_data()
    assert y_fine[:, 0].tolist() == [40, 99] and x_train[1, 0, 0, 2] == pixels[1][2048]
    assert cifar100.load_data(label_mode="coarse")[1][1][:, 0].tolist() == [4, 17]
