"""unison.keras.datasets: lookup order, structure checks, verified downloads, error messages.

Downloads are exercised against an HTTP server on 127.0.0.1 started by the test; no test
contacts any other address (an autouse fixture points the mirror at a loopback port nothing
listens on and disables proxies).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import os
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from unison.errors import DatasetError
from unison.keras.datasets import _fetch, fashion_mnist, mnist

REPO = Path(__file__).resolve().parents[2]
# Read once at import: the autouse fixture below clears UNISON_DATA_DIR for every test.
SHARED_DATA = Path(os.environ.get("UNISON_DATA_DIR") or REPO.parent / "shared" / "data")
SHARED_MNIST = SHARED_DATA / "mnist"
needs_mnist = pytest.mark.skipif(
    not all((SHARED_MNIST / f).is_file() for f in _fetch.FILE_NAMES),
    reason=f"the MNIST IDX files are not in {SHARED_MNIST} (set UNISON_DATA_DIR)",
)


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound (so nobody else takes it), not listening."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, refused_port: int) -> Path:
    """No user data dir, a private cache, and a mirror that can only fail, unless a test says so."""
    monkeypatch.delenv(_fetch.ENV_DATA_DIR, raising=False)
    monkeypatch.setattr(_fetch, "SYSTEM_DATA_DIR", tmp_path / "system")  # no Debian dataset packages
    cache = tmp_path / "cache"
    monkeypatch.setenv(_fetch.ENV_CACHE_DIR, str(cache))
    monkeypatch.setenv(_fetch.ENV_MIRROR, f"http://127.0.0.1:{refused_port}/")
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(var, "*")
    return cache


class _Server:
    """A loopback HTTP server serving ``files`` (name -> bytes) and counting requests."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                server.requests.append(self.path)
                body = server.files.get(self.path.rsplit("/", 1)[-1])
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mnist/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def serve() -> Iterator:
    servers: list[_Server] = []

    def start(files: dict[str, bytes]) -> _Server:
        servers.append(_Server(files))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _shared_mnist_files() -> dict[str, bytes]:
    return {name: (SHARED_MNIST / name).read_bytes() for name in _fetch.FILE_NAMES}


def _pin_hashes(monkeypatch: pytest.MonkeyPatch, files: dict[str, bytes]) -> None:
    """Make mnist expect ``files``: the shared copies are re-encoded, not the canonical bytes."""
    hashes = {name: hashlib.sha256(body).hexdigest() for name, body in files.items()}
    monkeypatch.setattr(mnist, "_SPEC", dataclasses.replace(mnist._SPEC, sha256=hashes))


def _idx(magic: int, dims: tuple[int, ...], payload: bytes) -> bytes:
    return struct.pack(f">I{len(dims)}I", magic, *dims) + payload


def _write_fake_set(folder: Path, n_train: int = 5, n_test: int = 3) -> dict[str, np.ndarray]:
    """Write a small but well-formed IDX data set; return the arrays it holds."""
    rng = np.random.default_rng(0)
    arrays = {
        _fetch.TRAIN_IMAGES: rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        _fetch.TRAIN_LABELS: rng.integers(0, 10, n_train, dtype=np.uint8),
        _fetch.TEST_IMAGES: rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        _fetch.TEST_LABELS: rng.integers(0, 10, n_test, dtype=np.uint8),
    }
    folder.mkdir(parents=True, exist_ok=True)
    for name, array in arrays.items():
        magic = 2051 if array.ndim == 3 else 2049
        (folder / name).write_bytes(gzip.compress(_idx(magic, array.shape, array.tobytes())))
    return arrays


# ---------------------------------------------------------------- local files


@needs_mnist
def test_mnist_loads_from_data_dir_like_keras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(SHARED_DATA))
    (x_train, y_train), (x_test, y_test) = mnist.load_data()

    assert x_train.shape == (60000, 28, 28) and x_test.shape == (10000, 28, 28)
    assert y_train.shape == (60000,) and y_test.shape == (10000,)
    assert {a.dtype for a in (x_train, y_train, x_test, y_test)} == {np.dtype(np.uint8)}
    assert x_train.min() == 0 and x_train.max() == 255
    assert set(np.unique(y_train)) == set(range(10)) == set(np.unique(y_test))
    # The canonical class counts (shared/data/README.md): same samples, same labels.
    canonical_counts = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert np.bincount(y_train).tolist() == canonical_counts
    # Keras hands out writable arrays; users normalise in place.
    assert x_train.flags.writeable


def test_own_copy_is_accepted_by_structure_not_hash(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    arrays = _write_fake_set(tmp_path / "data" / "fashion_mnist")
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))

    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data()

    np.testing.assert_array_equal(x_train, arrays[_fetch.TRAIN_IMAGES])
    np.testing.assert_array_equal(y_train, arrays[_fetch.TRAIN_LABELS])
    np.testing.assert_array_equal(x_test, arrays[_fetch.TEST_IMAGES])
    np.testing.assert_array_equal(y_test, arrays[_fetch.TEST_LABELS])


def _truncate_gzip(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-20])


def _not_gzip(path: Path) -> None:
    path.write_bytes(gzip.decompress(path.read_bytes()))


def _wrong_magic(path: Path) -> None:
    raw = gzip.decompress(path.read_bytes())
    path.write_bytes(gzip.compress(struct.pack(">I", 2049) + raw[4:]))


def _short_payload(path: Path) -> None:
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes())[:-1]))


def _wrong_image_size(path: Path) -> None:
    path.write_bytes(gzip.compress(_idx(2051, (5, 14, 56), bytes(5 * 14 * 56))))


@pytest.mark.parametrize(
    ("corrupt", "victim", "phrase"),
    [
        (_truncate_gzip, _fetch.TRAIN_IMAGES, "cannot be read as a gzip file"),
        (_not_gzip, _fetch.TEST_LABELS, "cannot be read as a gzip file"),
        (_wrong_magic, _fetch.TRAIN_IMAGES, "magic number is 2049, expected 2051"),
        (_short_payload, _fetch.TEST_IMAGES, "payload is 2351 bytes"),
        (_wrong_image_size, _fetch.TRAIN_IMAGES, "14x56 pixels, expected 28x28"),
    ],
    ids=["truncated-gzip", "not-gzip", "wrong-magic", "wrong-length", "wrong-image-size"],
)
def test_corrupt_file_names_the_file_and_the_problem(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corrupt, victim: str, phrase: str
) -> None:
    folder = tmp_path / "data" / "mnist"
    _write_fake_set(folder)
    corrupt(folder / victim)
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))

    with pytest.raises(DatasetError) as info:
        mnist.load_data()

    message = str(info.value)
    assert f"{folder / victim} is corrupt" in message
    assert phrase in message
    assert str(_fetch.cache_dir("mnist")) in message and _fetch.ENV_DATA_DIR in message


def test_label_count_must_match_image_count(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "data" / "mnist"
    _write_fake_set(folder)
    (folder / _fetch.TEST_LABELS).write_bytes(gzip.compress(_idx(2049, (2,), bytes([1, 2]))))
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))

    with pytest.raises(DatasetError, match="holds 2 labels but t10k-images-idx3-ubyte.gz holds 3"):
        mnist.load_data()


def test_missing_file_lists_every_place_and_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, isolated_env: Path
) -> None:
    folder = tmp_path / "data" / "mnist"
    _write_fake_set(folder)
    (folder / _fetch.TRAIN_LABELS).unlink()
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "data"))

    # The partial user folder falls through to the cache, then to a download that fails.
    with pytest.raises(DatasetError) as info:
        mnist.load_data()

    message = str(info.value)
    assert f"{folder}: missing {_fetch.TRAIN_LABELS}" in message
    assert f"{isolated_env / 'mnist'}: folder does not exist" in message
    assert f"{_fetch.mirror_base(mnist._SPEC)}{_fetch.TRAIN_IMAGES}" in message
    assert "ConnectionRefusedError" in message
    assert f"set {_fetch.ENV_DATA_DIR} to a folder that contains 'mnist/'" in message


def test_corrupt_cached_file_is_reported_not_redownloaded(tmp_path: Path, isolated_env: Path) -> None:
    _write_fake_set(isolated_env / "mnist")
    _truncate_gzip(isolated_env / "mnist" / _fetch.TEST_LABELS)

    with pytest.raises(DatasetError) as info:
        mnist.load_data()

    message = str(info.value)
    assert f"{isolated_env / 'mnist' / _fetch.TEST_LABELS} is corrupt" in message
    assert "delete it" in message and "is not set" in message


# ---------------------------------------------------------------- downloads


@needs_mnist
def test_download_fills_the_cache_then_the_cache_is_used(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    isolated_env: Path,
    serve,
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = _shared_mnist_files()
    server = serve(files)
    _pin_hashes(monkeypatch, files)
    monkeypatch.setenv(_fetch.ENV_MIRROR, server.url)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(_fetch.ENV_DATA_DIR, str(tmp_path / "empty"))

    (x_train, y_train), (x_test, y_test) = mnist.load_data()

    assert sorted(server.requests) == sorted(f"/mnist/{name}" for name in _fetch.FILE_NAMES)
    assert x_train.shape == (60000, 28, 28) and y_test.shape == (10000,)
    cache = isolated_env / "mnist"
    assert sorted(p.name for p in cache.iterdir()) == sorted(_fetch.FILE_NAMES)
    for name, body in files.items():
        assert (cache / name).read_bytes() == body
    err = capsys.readouterr().err
    assert f"Downloading data from {server.url}{_fetch.TRAIN_IMAGES}" in err
    size = len(files[_fetch.TRAIN_IMAGES])
    assert f"{size}/{size} [" in err and "100%" in err

    (x_again, _), _ = mnist.load_data()

    assert len(server.requests) == 4
    np.testing.assert_array_equal(x_again, x_train)


@needs_mnist
def test_only_the_files_the_cache_lacks_are_downloaded(
    monkeypatch: pytest.MonkeyPatch, isolated_env: Path, serve
) -> None:
    files = _shared_mnist_files()
    server = serve(files)
    _pin_hashes(monkeypatch, files)
    monkeypatch.setenv(_fetch.ENV_MIRROR, server.url)
    (isolated_env / "mnist").mkdir(parents=True)
    for name in (_fetch.TRAIN_IMAGES, _fetch.TRAIN_LABELS, _fetch.TEST_IMAGES):
        (isolated_env / "mnist" / name).write_bytes(files[name])

    mnist.load_data()

    assert server.requests == [f"/mnist/{_fetch.TEST_LABELS}"]


@needs_mnist
def test_tampered_download_is_rejected_and_not_kept(monkeypatch: pytest.MonkeyPatch, isolated_env: Path, serve) -> None:
    files = _shared_mnist_files()
    _pin_hashes(monkeypatch, files)
    tampered = dict(files)
    body = bytearray(files[_fetch.TRAIN_LABELS])
    body[100] ^= 0xFF
    tampered[_fetch.TRAIN_LABELS] = bytes(body)
    server = serve(tampered)
    monkeypatch.setenv(_fetch.ENV_MIRROR, server.url)

    with pytest.raises(DatasetError) as info:
        mnist.load_data()

    message = str(info.value)
    assert "sha256" in message and f"{server.url}{_fetch.TRAIN_LABELS}" in message
    expected = hashlib.sha256(files[_fetch.TRAIN_LABELS]).hexdigest()
    received = hashlib.sha256(tampered[_fetch.TRAIN_LABELS]).hexdigest()
    assert f"expected sha256: {expected}" in message
    assert f"received sha256: {received}" in message
    # The good file before it is kept; the bad one and any temporary file are gone.
    assert sorted(p.name for p in (isolated_env / "mnist").iterdir()) == [_fetch.TRAIN_IMAGES]


def test_unreachable_mirror_lists_places_url_and_reason(
    monkeypatch: pytest.MonkeyPatch, isolated_env: Path, refused_port: int
) -> None:
    with pytest.raises(DatasetError) as info:
        fashion_mnist.load_data()

    message = str(info.value)
    assert "Looked in:" in message
    assert f"{_fetch.ENV_DATA_DIR} is not set" in message
    assert str(isolated_env / "fashion_mnist") in message
    assert f"http://127.0.0.1:{refused_port}/{_fetch.TRAIN_IMAGES}" in message
    assert "ConnectionRefusedError" in message
    # Nothing half-written stays behind.
    assert list((isolated_env / "fashion_mnist").iterdir()) == []


def test_http_error_status_is_the_reason(monkeypatch: pytest.MonkeyPatch, isolated_env: Path, serve) -> None:
    server = serve({})
    monkeypatch.setenv(_fetch.ENV_MIRROR, server.url)

    with pytest.raises(DatasetError, match="HTTP 404"):
        mnist.load_data()
    assert list((isolated_env / "mnist").iterdir()) == []


# ---------------------------------------------------------------- configuration


def test_default_cache_is_under_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(_fetch.ENV_CACHE_DIR)
    monkeypatch.setenv("HOME", str(tmp_path))

    assert _fetch.cache_dir("mnist") == tmp_path / ".cache" / "unison" / "datasets" / "mnist"


def test_canonical_mirrors_and_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_fetch.ENV_MIRROR)

    assert _fetch.mirror_base(mnist._SPEC) == "https://storage.googleapis.com/cvdf-datasets/mnist/"
    assert _fetch.mirror_base(fashion_mnist._SPEC) == "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
    for spec in (mnist._SPEC, fashion_mnist._SPEC):
        assert set(spec.sha256) == set(_fetch.FILE_NAMES)
        assert all(len(h) == 64 and int(h, 16) >= 0 for h in spec.sha256.values())
    assert mnist._SPEC.sha256[_fetch.TRAIN_IMAGES].startswith("440fcabf")
    assert fashion_mnist._SPEC.sha256[_fetch.TRAIN_IMAGES].startswith("3aede38d")


def test_debian_dataset_package_folder_is_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # `apt install dataset-fashion-mnist` puts the four files in /usr/share/datasets/fashion-mnist
    system = tmp_path / "system"
    _write_fake_set(system / "fashion-mnist", n_train=6, n_test=4)
    monkeypatch.setattr(_fetch, "SYSTEM_DATA_DIR", system)
    (x_train, _), (x_test, _) = fashion_mnist.load_data()
    assert x_train.shape == (6, 28, 28) and x_test.shape == (4, 28, 28)
